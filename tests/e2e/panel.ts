/**
 * Helpers for driving the assistant panel in the browser tests: selectors, asking, waiting for the
 * answer to end, and reading what the panel shows.
 */
import type { Page } from 'playwright-core';
import { BASE_URL } from './browser';

export const PANEL = '[data-testid="assistant-panel"]';
export const MESSAGES = `${PANEL} [data-testid="assistant-message"]`;
export const ASSISTANT = `${MESSAGES}[data-role="assistant"]`;

/** The project the demo data calls Acme (the first project otherwise). */
export async function findProjectId(page: Page): Promise<string> {
  await page.goto(`${BASE_URL}/projects`);
  const hrefs = await page.$$eval('a[href^="/projects/"]', (as) =>
    as.map((a) => ({ href: a.getAttribute('href') ?? '', text: (a.textContent ?? '').toLowerCase() })),
  );
  const candidates = hrefs.filter((h) => /^\/projects\/[^/?#]+/.test(h.href));
  const acme = candidates.find((h) => h.text.includes('acme')) ?? candidates[0];
  if (!acme) throw new Error(`No project link on /projects: ${JSON.stringify(hrefs)}`);
  return decodeURIComponent(acme.href.split(/[/?#]/)[2]!);
}

/**
 * Opens the panel unless it is open (or opening: a panel left open opens again by itself). A click
 * that came before the page was hydrated does nothing: it is made again, at most three times.
 */
export async function ensureOpen(page: Page): Promise<void> {
  const toggle = page.getByTestId('assistant-toggle');
  for (let attempt = 0; attempt < 3; attempt++) {
    if ((await page.locator(PANEL).count()) > 0) return;
    if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
    const opened = await page
      .locator(PANEL)
      .waitFor({ timeout: 10_000 })
      .then(() => true)
      .catch(() => false);
    if (opened) return;
  }
  await page.locator(PANEL).waitFor();
}

/** Waits until no answer runs (the Send button is back). */
export async function waitIdle(page: Page, timeout = 30_000): Promise<void> {
  await page.locator(`${PANEL} [data-testid="assistant-send"]`).waitFor({ state: 'visible', timeout });
}

/** Waits until the conversation is loaded (nothing says "Loading the conversation…"). */
export async function waitLoaded(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const panel = document.querySelector('[data-testid="assistant-panel"]');
    return panel !== null && !(panel.textContent ?? '').includes('Loading the conversation');
  });
}

/** Types a message and waits until the server echoed it (and, unless `wait: false`, the answer ended). */
export async function ask(page: Page, text: string, opts: { wait?: boolean } = {}): Promise<void> {
  await ensureOpen(page);
  const input = page.locator(`${PANEL} [data-testid="assistant-input"]`);
  await input.fill(text);
  await input.press('Enter');
  await waitForUserMessage(page, text);
  if (opts.wait !== false) await waitIdle(page);
}

export async function waitForUserMessage(page: Page, text: string, timeout = 15_000): Promise<void> {
  await page.waitForFunction(
    (t) =>
      [
        ...document.querySelectorAll(
          '[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="user"]',
        ),
      ].some((e) => e.getAttribute('data-message-id') && e.textContent?.includes(t)),
    text,
    { timeout },
  );
}

export async function lastAnswerText(page: Page): Promise<string> {
  return page.$$eval(ASSISTANT, (els) => els.at(-1)?.textContent ?? '');
}

/** Waits until the newest answer is streaming and has at least `chars` characters. */
export async function waitForStreamingAnswer(page: Page, chars: number, timeout = 20_000): Promise<void> {
  await page.waitForFunction(
    (n) => {
      const all = document.querySelectorAll(
        '[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="assistant"]',
      );
      const last = all[all.length - 1];
      return last?.getAttribute('data-streaming') === 'true' && (last.textContent ?? '').length >= n;
    },
    chars,
    { timeout },
  );
}

/** Every message as role, id and the text shown. */
export async function messages(page: Page): Promise<string[]> {
  return page.$$eval(MESSAGES, (els) =>
    els.map((e) => {
      const copy = e.cloneNode(true) as Element;
      for (const s of copy.querySelectorAll('[role="status"]')) s.remove();
      const text = (copy.textContent ?? '').replace(/\s+/g, ' ').trim();
      return `${e.getAttribute('data-role')}:${e.getAttribute('data-message-id')}:${text}`;
    }),
  );
}

/** The conversation the panel shows. */
export async function currentConversation(page: Page): Promise<string> {
  return (await page.locator(PANEL).getAttribute('data-conversation-id')) ?? '';
}

/** Tool and state of every approval card. */
export async function cardStates(page: Page): Promise<string[]> {
  return page.$$eval(`${PANEL} [data-testid="approval-card"]`, (els) =>
    els.map((e) => `${e.getAttribute('data-tool')}:${e.getAttribute('data-state')}`),
  );
}
