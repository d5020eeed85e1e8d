// The assistant panel in a real browser against `next start` with the seeded demo data and the
// offline demo model: shortcut, focus and Escape, resize, small screens, streaming, tool cards,
// approvals (per-field validation, edit, approve, reject with feedback, drafts kept across a reload
// and a refused answer), stop (and agreement with what the server kept), a message from another
// window queued behind a busy conversation, a failed answer explained with Retry, code copy,
// reload/replay, feedback, client-side navigation, history (newest first,
// rename, delete with an undo toast), inert unsafe markdown, and the review page's access rules.
// Screenshots of every panel state, light and dark, go to test-artifacts/screenshots.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, newPage, openBrowser, shot } from './browser';
import { DEMO_OLLAMA_COMMAND } from '@/features/in-app-agent/server/demo-model';

const PANEL = '[data-testid="assistant-panel"]';
const MESSAGES = `${PANEL} [data-testid="assistant-message"]`;
const ASSISTANT = `${MESSAGES}[data-role="assistant"]`;

let browser: Browser;
let owner: Page;
let projectId = '';
let conversationId = '';
let waitingConversationId = '';
const dialogs: string[] = [];

async function findProjectId(page: Page): Promise<string> {
  await page.goto(`${BASE_URL}/projects`);
  const hrefs = await page.$$eval('a[href^="/projects/"]', (as) =>
    as.map((a) => ({ href: a.getAttribute('href') ?? '', text: (a.textContent ?? '').toLowerCase() })),
  );
  const candidates = hrefs.filter((h) => /^\/projects\/[^/?#]+/.test(h.href));
  const acme = candidates.find((h) => h.text.includes('acme')) ?? candidates[0];
  if (!acme) throw new Error(`No project link on /projects: ${JSON.stringify(hrefs)}`);
  return decodeURIComponent(acme.href.split(/[/?#]/)[2]!);
}

/** What the viewport shows (the panel is fixed, so a full-page capture would cut it). */
const panelShot = (page: Page, name: string) => shot(page, name, { fullPage: false });

/** The same view in dark mode (the app follows the system colour scheme), then back to light. */
async function shotLightAndDark(
  page: Page,
  name: string,
  opts: { fullPage?: boolean } = { fullPage: false },
): Promise<void> {
  await shot(page, name, opts);
  await page.emulateMedia({ colorScheme: 'dark' });
  await shot(page, `${name}-dark`, opts);
  await page.emulateMedia({ colorScheme: 'light' });
}

/** Waits until no answer is streaming (the Send button is back). */
async function waitIdle(page: Page, timeout = 30_000): Promise<void> {
  await page.locator(`${PANEL} [data-testid="assistant-send"]`).waitFor({ state: 'visible', timeout });
}

/** Waits until the conversation is loaded (nothing says "Loading the conversation…"). */
async function waitLoaded(page: Page): Promise<void> {
  await page.waitForFunction(() => {
    const panel = document.querySelector('[data-testid="assistant-panel"]');
    return panel !== null && !(panel.textContent ?? '').includes('Loading the conversation');
  });
}

/** Opens the panel if it is closed (so one failed step does not take every later test with it). */
async function ensureOpen(page: Page): Promise<void> {
  if ((await page.locator(PANEL).count()) > 0) return;
  await page.getByTestId('assistant-toggle').click();
  await page.locator(PANEL).waitFor();
}

async function ask(page: Page, text: string, opts: { wait?: boolean } = {}): Promise<void> {
  await ensureOpen(page);
  const input = page.locator(`${PANEL} [data-testid="assistant-input"]`);
  await input.fill(text);
  await input.press('Enter');
  // The server echoes the user message with its own id; the optimistic bubble then disappears.
  await page.waitForFunction(
    (t) =>
      [
        ...document.querySelectorAll(
          '[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="user"]',
        ),
      ].some((e) => e.getAttribute('data-message-id') && e.textContent?.includes(t)),
    text,
    { timeout: 15_000 },
  );
  if (opts.wait !== false) await waitIdle(page);
}

/** Every message as role, id and the text shown. */
async function messages(page: Page): Promise<string[]> {
  return page.$$eval(`[data-testid="assistant-panel"] [data-testid="assistant-message"]`, (els) =>
    els.map((e) => {
      // Transient notices ("Feedback saved") are not part of the conversation.
      const copy = e.cloneNode(true) as Element;
      for (const s of copy.querySelectorAll('[role="status"]')) s.remove();
      return `${e.getAttribute('data-role')}:${e.getAttribute('data-message-id')}:${(copy.textContent ?? '').replace(/\s+/g, ' ').trim()}`;
    }),
  );
}

async function cardStates(page: Page): Promise<string[]> {
  return page.$$eval(`[data-testid="assistant-panel"] [data-testid="approval-card"]`, (els) =>
    els.map(
      (e) =>
        `${e.getAttribute('data-tool')}:${e.getAttribute('data-state')}:${e.querySelector('[data-testid="approval-outcome"]')?.textContent?.trim() ?? ''}`,
    ),
  );
}

/** Per answer: the rating and the comment as shown. */
async function feedbackStates(page: Page): Promise<string[]> {
  return page.$$eval(
    `[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="assistant"]`,
    (els) =>
      els.map((e) => {
        const fb = e.querySelector('[data-testid="feedback"]')?.cloneNode(true) as Element | undefined;
        for (const s of fb?.querySelectorAll('[role="status"]') ?? []) s.remove();
        return `${e.getAttribute('data-message-id')}:${fb?.getAttribute('data-value') ?? '-'}:${(fb?.textContent ?? '').replace(/\s+/g, ' ').trim()}`;
      }),
  );
}

async function announcements(page: Page): Promise<string[]> {
  return page.locator(`${PANEL} [data-testid="assistant-announcement"]`).allTextContents();
}

async function panelBox(page: Page) {
  const box = await page.locator(PANEL).boundingBox();
  if (!box) throw new Error('The panel is not visible');
  return box;
}

beforeAll(async () => {
  browser = await openBrowser();
  owner = await newPage(browser);
  owner.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await login(owner, 'owner@example.com');
  projectId = await findProjectId(owner);
  await owner.evaluate(() => window.localStorage.clear());
});

afterAll(async () => {
  await browser?.close();
});

describe('assistant panel', () => {
  it('opens with Ctrl+I, focuses the input, names the demo model; Escape leaves a typed field first, then closes', async () => {
    await owner.goto(`${BASE_URL}/projects/${projectId}/issues`);
    const toggle = owner.getByTestId('assistant-toggle');
    await toggle.waitFor();
    expect(await toggle.getAttribute('aria-keyshortcuts')).toContain('Control+I');
    expect(await toggle.getAttribute('title')).toMatch(/Ctrl\+I|⌘I/);

    // A rich-text editor on the page keeps Ctrl+I (italics); a plain search field does not.
    await owner.evaluate(() => {
      const d = document.createElement('div');
      d.id = 'rich-editor';
      d.contentEditable = 'true';
      d.textContent = 'Rich text';
      document.querySelector('main')?.appendChild(d);
    });
    await owner.locator('#rich-editor').click();
    await owner.keyboard.press('Control+i');
    await owner.waitForTimeout(300);
    expect(await owner.locator(PANEL).count()).toBe(0);
    await owner.locator('main input[name="q"]').click();
    await owner.keyboard.press('Control+i');
    await owner.locator(PANEL).waitFor();
    await owner.locator(`${PANEL} [data-testid="assistant-close"]`).click();
    await owner.locator(PANEL).waitFor({ state: 'detached' });

    await owner.locator('body').click({ position: { x: 5, y: 5 } });
    await owner.keyboard.press('Control+i');
    await owner.locator(PANEL).waitFor();
    await owner.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'assistant-input');
    const notice = owner.locator(`${PANEL} [data-testid="model-notice"]`);
    await notice.waitFor();
    expect(await notice.getAttribute('data-demo')).toBe('true');
    expect(await notice.textContent()).toContain('AGENT_MODEL_PROVIDER');
    // Suggestions fit the issues page.
    const suggestions = await owner.locator(`${PANEL} [data-testid="assistant-suggestion"]`).allTextContents();
    expect(suggestions).toContain('List open issues');
    expect(suggestions).toContain('Summarize the project');
    await shotLightAndDark(owner, 'assistant-open-empty');

    // Escape in the input with text leaves the field (the panel stays, the text stays) ...
    await owner.keyboard.type('half a thought');
    await owner.keyboard.press('Escape');
    await owner.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'assistant-panel');
    expect(await owner.locator(PANEL).count()).toBe(1);
    // ... and Escape again closes, returning the focus to the toggle.
    await owner.keyboard.press('Escape');
    await owner.locator(PANEL).waitFor({ state: 'detached' });
    await owner.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'assistant-toggle');
    await owner.keyboard.press('Control+i');
    await owner.locator(PANEL).waitFor();
    const input = owner.locator(`${PANEL} [data-testid="assistant-input"]`);
    expect(await input.inputValue()).toBe('half a thought');
    await input.fill('');
  });

  it('resizes by drag and by keyboard, and remembers the width after a reload', async () => {
    await ensureOpen(owner);
    const before = (await panelBox(owner)).width;
    const handle = owner.locator(`${PANEL} [data-testid="assistant-resize"]`);
    const h = await handle.boundingBox();
    if (!h) throw new Error('no resize handle');
    await owner.mouse.move(h.x + h.width / 2, h.y + h.height / 2);
    await owner.mouse.down();
    await owner.mouse.move(h.x + h.width / 2 - 60, h.y + h.height / 2, { steps: 4 });
    await owner.mouse.move(h.x + h.width / 2 - 120, h.y + h.height / 2, { steps: 4 });
    await owner.mouse.up();
    const dragged = (await panelBox(owner)).width;
    expect(dragged).toBeGreaterThanOrEqual(before + 100);
    await handle.focus();
    await owner.keyboard.press('ArrowLeft');
    await owner.keyboard.press('ArrowLeft');
    const keyed = (await panelBox(owner)).width;
    expect(keyed).toBe(dragged + 48);
    expect(Number(await handle.getAttribute('aria-valuenow'))).toBe(Math.round(keyed));
    await owner.reload();
    await owner.locator(PANEL).waitFor();
    await owner.waitForFunction(
      (w) => Math.round(document.querySelector('[data-testid="assistant-panel"]')!.getBoundingClientRect().width) === w,
      Math.round(keyed),
    );
    expect(await owner.locator(PANEL).getAttribute('data-layout')).toBe('docked');
    // Back to the default for the other screenshots.
    await owner.locator(`${PANEL} [data-testid="assistant-resize"]`).focus();
    for (let i = 0; i < 7; i++) await owner.keyboard.press('ArrowRight');
  });

  it('fills the screen on a phone-sized viewport', async () => {
    const ctx = await browser.newContext({
      viewport: { width: 390, height: 844 },
      baseURL: BASE_URL,
      storageState: await owner.context().storageState(),
    });
    const phone = await ctx.newPage();
    await phone.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await phone.locator(PANEL).waitFor();
    await phone.waitForFunction(
      () => document.querySelector('[data-testid="assistant-panel"]')?.getAttribute('data-layout') === 'fullscreen',
    );
    const box = await panelBox(phone);
    expect(box).toEqual({ x: 0, y: 0, width: 390, height: 844 });
    expect(await phone.locator(PANEL).getAttribute('role')).toBe('dialog');
    expect(await phone.locator(PANEL).getAttribute('aria-modal')).toBe('true');
    expect(await phone.locator(`${PANEL} [data-testid="assistant-resize"]`).count()).toBe(0);
    await phone.locator(`${PANEL} [data-testid="assistant-suggestion"]`).first().waitFor();
    await shotLightAndDark(phone, 'assistant-mobile');
    await ctx.close();
  });

  it('streams an answer with a tool card for "list open issues"', async () => {
    await ask(owner, 'list open issues');
    const card = owner.locator(`${PANEL} [data-testid="tool-card"][data-tool="list_issues"]`).last();
    await card.waitFor();
    expect(await card.getAttribute('data-status')).toBe('done');
    const answer = owner.locator(ASSISTANT).last();
    expect(await answer.getAttribute('data-streaming')).toBe('false');
    expect(((await answer.textContent()) ?? '').length).toBeGreaterThan(10);
    // The result is expandable.
    await card.locator('summary').click();
    expect(await card.locator('pre').textContent()).toMatch(/\S/);
    // The conversation now exists on the server and is remembered.
    conversationId = (await owner.locator(PANEL).getAttribute('data-conversation-id')) ?? '';
    expect(conversationId).not.toBe('');
    // The live region announced the completed answer.
    expect((await announcements(owner)).at(-1)).toMatch(/^Assistant: /);
    await panelShot(owner, 'assistant-tool-card');
  });

  it('asks for approval before creating an issue; the edited title is what gets created', async () => {
    await ask(owner, 'create an issue titled Panel test');
    const card = owner.locator(`${PANEL} [data-testid="approval-card"][data-tool="create_issue"]`).last();
    await card.waitFor();
    expect(await card.getAttribute('data-state')).toBe('open');
    expect(await card.locator('[data-testid="approval-why"]').textContent()).toMatch(/Why you are asked/);
    expect(await card.textContent()).toMatch(/Expires in \d+:\d\d/);
    expect(await announcements(owner)).toContain('The assistant needs your approval for 1 action.');
    const args = card.getByTestId('approval-args');
    expect(JSON.parse(await args.inputValue())).toEqual({ title: 'Panel test' });
    await shotLightAndDark(owner, 'assistant-approval-card');

    // Invalid JSON is refused before anything is sent.
    await args.fill('{"title": ');
    await card.getByTestId('approval-args-error').waitFor();
    expect(await card.getByTestId('approval-approve').isDisabled()).toBe(true);

    await args.fill('{"title": "Panel test edited"}');
    expect(await card.getByTestId('approval-args-error').count()).toBe(0);
    expect(await card.getByTestId('approval-diff').textContent()).toContain('title');
    await card.getByTestId('approval-approve').click();
    await owner.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await waitIdle(owner);
    await owner.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="approval-card"][data-tool="create_issue"]')].some(
        (c) => c.getAttribute('data-state') === 'approved',
      ),
    );
    const tool = owner.locator(`${PANEL} [data-testid="tool-card"][data-tool="create_issue"]`).last();
    expect(await tool.getAttribute('data-status')).toBe('done');
    // The decided card and the tool card show the arguments the call ran with, and what changed.
    const decided = owner
      .locator(`${PANEL} [data-testid="approval-card"][data-tool="create_issue"][data-state="approved"]`)
      .last();
    expect(JSON.parse((await decided.getByTestId('approval-ran-with').locator('pre').textContent()) ?? '')).toEqual({
      title: 'Panel test edited',
    });
    expect(await decided.getByTestId('approval-ran-diff').textContent()).toMatch(
      /title.*Panel test.*Panel test edited/,
    );
    expect(await tool.getByTestId('tool-card-ran-with').textContent()).toBe('Ran with: title: “Panel test edited”');
    await decided.scrollIntoViewIfNeeded();
    await shotLightAndDark(owner, 'assistant-decided-approved');

    // The issue exists with the edited title, in the issue list itself (not only in the panel).
    await owner.goto(`${BASE_URL}/projects/${projectId}/issues`);
    const row = owner
      .locator('main [data-testid="issue-row"]')
      .filter({ has: owner.getByRole('link', { name: 'Panel test edited', exact: true }) });
    await row.waitFor();
    expect(await row.count()).toBe(1);
    // The panel stayed open across the page change, with the decided card.
    await owner.locator(PANEL).waitFor();
    await owner.locator(`${PANEL} [data-testid="approval-card"][data-state="approved"]`).first().waitFor();
  });

  it('rejects a destructive call with feedback; the outcome stays in the history', async () => {
    await ask(owner, 'close issue 1');
    const card = owner.locator(`${PANEL} [data-testid="approval-card"][data-tool="close_issue"]`).last();
    await card.waitFor();
    expect(await card.getAttribute('data-state')).toBe('open');
    await card.getByTestId('approval-feedback').fill('Not now, still investigating');
    await card.getByTestId('approval-reject').click();
    expect(await card.getByTestId('approval-reject').getAttribute('aria-pressed')).toBe('true');
    await owner.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await waitIdle(owner);
    await owner.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="approval-card"][data-tool="close_issue"]')].some(
        (c) => c.getAttribute('data-state') === 'rejected',
      ),
    );
    const rejected = owner
      .locator(`${PANEL} [data-testid="approval-card"][data-tool="close_issue"][data-state="rejected"]`)
      .last();
    expect(await rejected.textContent()).toContain('Not now, still investigating');
    expect(
      await owner
        .locator(`${PANEL} [data-testid="tool-card"][data-tool="close_issue"]`)
        .last()
        .getAttribute('data-status'),
    ).toBe('rejected');
    await shotLightAndDark(owner, 'assistant-decided-cards');
  });

  it('checks edited arguments against the tool schema, field by field, before anything is sent', async () => {
    await ask(owner, 'create an issue titled Schema check');
    const card = owner.locator(`${PANEL} [data-testid="approval-card"][data-tool="create_issue"]`).last();
    await card.waitFor();
    const args = card.getByTestId('approval-args');
    await args.fill(JSON.stringify({ title: 'x'.repeat(201), priority: 'SOON', due: 'friday' }));
    await card.getByTestId('approval-args-error').waitFor();
    const fields = await card
      .getByTestId('approval-field-error')
      .evaluateAll((els) => els.map((e) => `${e.getAttribute('data-field')}|${e.textContent}`));
    expect(fields).toEqual([
      'title|title: at most 200 characters (it has 201)',
      'priority|priority: must be one of "LOW", "MEDIUM", "HIGH", "URGENT"',
      'due|due: is not an argument of this tool (it takes title, body, priority, assignee, labels)',
    ]);
    expect(await card.getByTestId('approval-approve').isDisabled()).toBe(true);
    await panelShot(owner, 'assistant-approval-field-errors');
    await args.fill('{"title": "Schema check", "priority": "LOW"}');
    expect(await card.getByTestId('approval-args-error').count()).toBe(0);
    await card.getByTestId('approval-reject').click();
    await owner.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await waitIdle(owner);
    await owner.waitForFunction(
      () =>
        [...document.querySelectorAll('[data-testid="approval-card"][data-tool="create_issue"]')]
          .at(-1)
          ?.getAttribute('data-state') === 'rejected',
    );
  });

  it('copies a code block of an answer with its Copy button', async () => {
    await owner.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE_URL });
    // Anything the demo model does not understand gets its help, with a ready-to-copy start command.
    await ask(owner, 'what can you do?');
    await waitIdle(owner);
    const answer = owner.locator(ASSISTANT).last();
    const code = answer.locator('.assistant-markdown pre');
    await code.waitFor();
    expect(((await code.textContent()) ?? '').trim()).toBe(DEMO_OLLAMA_COMMAND);
    const copy = answer.getByTestId('code-copy');
    await copy.click();
    await owner.waitForFunction(() => {
      const all = document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="code-copy"]');
      return all[all.length - 1]?.textContent?.startsWith('Copied');
    });
    expect(await owner.evaluate(() => navigator.clipboard.readText())).toBe(DEMO_OLLAMA_COMMAND);
  });

  it('stops a long answer midway, keeps the partial text, then shows what the server kept', async () => {
    await ask(owner, 'write a long answer', { wait: false });
    await owner.locator(`${ASSISTANT}[data-streaming="true"]`).last().waitFor({ timeout: 15_000 });
    await owner.waitForFunction(
      () => {
        const all = document.querySelectorAll(
          '[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="assistant"]',
        );
        return (all[all.length - 1]?.textContent ?? '').length > 80;
      },
      undefined,
      { timeout: 15_000 },
    );
    await panelShot(owner, 'assistant-streaming');
    // The tab is busy for a moment (what the server sends meanwhile waits on the way), then the
    // user stops: the server keeps every word it sent, more than reached the tab.
    const atStop = await owner.evaluate(() => {
      const end = Date.now() + 2500;
      while (Date.now() < end) {
        // busy main thread
      }
      const all = document.querySelectorAll(
        '[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="assistant"]',
      );
      const text = all[all.length - 1]?.textContent ?? '';
      document
        .querySelector<HTMLButtonElement>('[data-testid="assistant-panel"] [data-testid="assistant-stop"]')!
        .click();
      return text;
    });
    await owner.locator(`${PANEL} [data-testid="assistant-stopped"]`).last().waitFor();
    await waitIdle(owner);
    // The panel then loads the server's copy quietly: the words that were on the way appear.
    await owner.waitForFunction(
      (n) => {
        const all = document.querySelectorAll(
          '[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="assistant"]',
        );
        return (all[all.length - 1]?.textContent ?? '').length > n + 60;
      },
      atStop.length,
      { timeout: 15_000 },
    );
    const last = owner.locator(ASSISTANT).last();
    const partial = (await last.textContent()) ?? '';
    // (Only the start is compared: markdown may render a half-written list item differently.)
    const flat = (t: string) => t.replace(/\s+/g, ' ');
    expect(flat(partial).startsWith(flat(atStop).slice(0, 80))).toBe(true);
    expect(partial).toContain('A good issue tracker');
    expect(partial).not.toContain('12. A good issue tracker');
    await owner.waitForTimeout(1500);
    expect((await last.textContent()) ?? '').toBe(partial);
    expect(await last.getAttribute('data-streaming')).toBe('false');
    // A reload shows the same text.
    const before = await messages(owner);
    await owner.reload();
    await owner.locator(PANEL).waitFor();
    await owner.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-message"]').length >= n,
      before.length,
    );
    expect(await messages(owner)).toEqual(before);
    await panelShot(owner, 'assistant-stopped');
    // What the stopped answer used is recorded too, partly estimated: "≈ … in · … out · $…".
    const usage = owner.locator(`${PANEL} [data-testid="assistant-usage"]`).last();
    await usage.locator('summary').click();
    const line = (await usage.locator('[data-testid="assistant-usage-line"]').textContent()) ?? '';
    expect(line).toMatch(/^≈ [\d,]+ in · [\d,]+ out( · \$0\.\d{2,6})?$/);
    if (!process.env.E2E_BASE_URL) expect(line).toMatch(/ · \$0\.\d{2,6}$/);
  });

  it('queues a message from another window while the conversation is busy; sends it when the answer ends', async () => {
    // Another window with its own browser context: the tabs of this one cannot tell it about runs,
    // so it only learns from the server that the conversation is busy.
    const ctx = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      baseURL: BASE_URL,
      storageState: await owner.context().storageState(),
    });
    const other = await ctx.newPage();
    await other.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await other.locator(PANEL).waitFor();
    await waitLoaded(other);
    await ask(owner, 'write a long answer', { wait: false });
    await owner.locator(`${ASSISTANT}[data-streaming="true"]`).last().waitFor({ timeout: 15_000 });

    await other.locator(`${PANEL} [data-testid="assistant-input"]`).fill('list closed issues');
    await other.locator(`${PANEL} [data-testid="assistant-send"]:not([disabled])`).click();
    // Refused as busy: the window follows the live answer instead, with the message queued.
    const queued = other.locator(`${PANEL} [data-testid="assistant-queued"]`);
    await queued.waitFor();
    expect(await queued.textContent()).toContain('list closed issues');
    await other.locator(`${ASSISTANT}[data-streaming="true"]`).last().waitFor({ timeout: 15_000 });
    expect(await announcements(other)).toContain(
      'The assistant is still answering (maybe in another tab): your message is queued.',
    );
    expect(await other.locator(`${PANEL} [data-testid="assistant-error"]`).count()).toBe(0);

    await owner.locator(`${PANEL} [data-testid="assistant-stop"]`).click();
    await waitIdle(owner);
    await owner.locator(`${PANEL} [data-testid="assistant-stopped"]`).last().waitFor();
    // The answer ended: the queued message goes out.
    await other.waitForFunction(
      () =>
        [
          ...document.querySelectorAll(
            '[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="user"]',
          ),
        ].some((e) => e.getAttribute('data-message-id') && e.textContent?.includes('list closed issues')),
      undefined,
      { timeout: 20_000 },
    );
    await waitIdle(other);
    expect(await queued.count()).toBe(0);
    expect(
      await other
        .locator(`${PANEL} [data-testid="tool-card"][data-tool="list_issues"]`)
        .last()
        .getAttribute('data-status'),
    ).toBe('done');
    await ctx.close();
    // This window catches up with what the other one added.
    await owner.reload();
    await owner.locator(PANEL).waitFor();
    await owner.waitForFunction(() =>
      [
        ...document.querySelectorAll(
          '[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="user"]',
        ),
      ].some((e) => e.textContent?.includes('list closed issues')),
    );
  });

  it('explains in plain words when the tools could not be loaded, with Retry; Retry then works', async () => {
    // A real answer that fails (the demo model breaks off once), shown as the server answers when
    // the product's tools cannot be listed: the run is the server's, so Retry asks it again in place.
    const question = 'fail once, then answer: summarize the project';
    await owner.route(
      `**/api/projects/${projectId}/in-app-agent`,
      async (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        const response = await route.fetch();
        const body = (await response.text()).replace(
          /"type":"RUN_ERROR","code":"MODEL_(UNAVAILABLE|OVERLOADED)"/,
          '"type":"RUN_ERROR","code":"TOOLS_UNAVAILABLE"',
        );
        await route.fulfill({ response, body });
      },
      { times: 1 },
    );
    await ask(owner, question, { wait: false });
    const error = owner.locator(`${PANEL} [data-testid="assistant-error"][data-code="TOOLS_UNAVAILABLE"]`);
    await error.waitFor();
    expect(await error.textContent()).toContain("could not reach this project's tools");
    expect((await announcements(owner)).at(-1)).toMatch(
      /^The answer failed: The assistant could not reach this project's tools/,
    );
    await shotLightAndDark(owner, 'assistant-error-row');

    await error.getByTestId('assistant-retry').click();
    await owner.waitForFunction(
      () =>
        document.querySelector('[data-testid="assistant-panel"] [data-testid="assistant-version-position"]')
          ?.textContent === '2 / 2',
    );
    await waitIdle(owner);
    expect(await owner.locator(`${PANEL} [data-run-status]`).last().getAttribute('data-run-status')).toBe('completed');
    // Asked again in place: the question shows once, also after a reload.
    const asked = () =>
      owner.$$eval(
        `${PANEL} [data-testid="assistant-message"][data-role="user"]`,
        (els, q) => els.filter((e) => e.textContent?.includes(q)).length,
        question,
      );
    expect(await asked()).toBe(1);
    await owner.reload();
    await owner.locator(PANEL).waitFor();
    await waitLoaded(owner);
    await owner.locator(`${PANEL} [data-testid="assistant-version-position"]`).waitFor();
    expect(await asked()).toBe(1);
  });

  it('renders unsafe markdown inert', async () => {
    await ask(owner, 'show me an unsafe answer');
    const last = owner.locator(ASSISTANT).last();
    const text = (await last.textContent()) ?? '';
    expect(text).toContain('<img src=x onerror=');
    expect(await owner.locator(`${PANEL} img`).count()).toBe(0);
    expect(await owner.locator(`${PANEL} script`).count()).toBe(0);
    expect(await owner.locator(`${PANEL} a[href^="javascript:" i]`).count()).toBe(0);
    expect(await last.locator('[data-inert-link="true"]').count()).toBeGreaterThan(0);
    const safe = last.locator('a[href="https://example.com/"]');
    expect(await safe.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await safe.getAttribute('target')).toBe('_blank');
    await owner.waitForTimeout(300);
    expect(dialogs).toEqual([]);
    await panelShot(owner, 'assistant-unsafe-inert');
  });

  it('records thumbs up and thumbs down with a comment; an unsaved comment survives Escape and closing the panel', async () => {
    const first = owner
      .locator(ASSISTANT)
      .filter({ has: owner.locator('[data-testid="feedback"]') })
      .first();
    await first.getByTestId('feedback-up').click();
    await owner.waitForFunction(
      () =>
        document.querySelector('[data-testid="assistant-panel"] [data-testid="feedback-up"][aria-pressed="true"]') !==
        null,
    );
    const last = owner.locator(ASSISTANT).last();
    await last.getByTestId('feedback-down').click();
    await last.getByTestId('feedback-comment').fill('Too long, and it rendered odd HTML');
    // Escape in the comment leaves the field; the panel and the comment stay.
    await last.getByTestId('feedback-comment').press('Escape');
    expect(await owner.locator(PANEL).count()).toBe(1);
    expect(await last.getByTestId('feedback-comment').inputValue()).toBe('Too long, and it rendered odd HTML');
    // Closing and reopening the panel keeps the unsaved comment too.
    await owner.locator(`${PANEL} [data-testid="assistant-close"]`).click();
    await owner.locator(PANEL).waitFor({ state: 'detached' });
    await owner.getByTestId('assistant-toggle').click();
    const again = owner.locator(ASSISTANT).last();
    await again.getByTestId('feedback-comment').waitFor();
    expect(await again.getByTestId('feedback-comment').inputValue()).toBe('Too long, and it rendered odd HTML');
    await again.getByTestId('feedback-comment-submit').click();
    await again.getByText('Your comment: Too long, and it rendered odd HTML').waitFor();
    expect(await again.getByTestId('feedback-down').getAttribute('aria-pressed')).toBe('true');
    // Changeable: down, then up again, on the first answer.
    const firstValue = (v: string) =>
      owner.waitForFunction((want) => {
        const el = document.querySelector('[data-testid="assistant-panel"] [data-testid="feedback"]');
        return el?.getAttribute('data-value') === want;
      }, v);
    const firstAgain = owner
      .locator(ASSISTANT)
      .filter({ has: owner.locator('[data-testid="feedback"]') })
      .first();
    // A thumbs down is saved when its form is sent (here without reasons or a comment).
    await firstAgain.getByTestId('feedback-down').click();
    await firstAgain.getByTestId('feedback-comment').waitFor();
    await firstAgain.getByTestId('feedback-comment-submit').click();
    await firstValue('-1');
    await firstAgain.getByTestId('feedback-up').click();
    await firstValue('1');
    await panelShot(owner, 'assistant-feedback');
  });

  it('shows exactly the same conversation after a reload: texts, cards, ratings and comments', async () => {
    await owner.waitForTimeout(500);
    const before = { messages: await messages(owner), cards: await cardStates(owner), fb: await feedbackStates(owner) };
    expect(before.fb.some((f) => f.includes('Your comment: Too long, and it rendered odd HTML'))).toBe(true);
    const draft = 'half-written question';
    await owner.locator(`${PANEL} [data-testid="assistant-input"]`).fill(draft);
    await owner.reload();
    await owner.locator(PANEL).waitFor();
    await owner.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-message"]').length >= n,
      before.messages.length,
    );
    expect(await messages(owner)).toEqual(before.messages);
    expect(await cardStates(owner)).toEqual(before.cards);
    expect(await feedbackStates(owner)).toEqual(before.fb);
    expect(await owner.locator(`${PANEL} [data-testid="assistant-input"]`).inputValue()).toBe(draft);
    expect(await owner.locator(`${PANEL} [data-testid="assistant-stopped"]`).count()).toBeGreaterThan(0);
    await panelShot(owner, 'assistant-after-reload');
    await owner.locator(`${PANEL} [data-testid="assistant-input"]`).fill('');
  });

  it('keeps a pending approval and the answer being prepared across a reload and a refused answer', async () => {
    await ask(owner, 'create an issue titled Reload check');
    const open = `${PANEL} [data-testid="approval-card"][data-tool="create_issue"]:not([data-state="approved"]):not([data-state="rejected"]):not([data-state="expired"]):not([data-state="unanswered"])`;
    const card = owner.locator(open);
    await card.waitFor();
    await card.getByTestId('approval-args').fill('{"title": "Reload check edited"}');
    await card.getByTestId('approval-feedback').fill('a note I wrote');
    await card.getByTestId('approval-approve').click();
    expect(await card.getAttribute('data-state')).toBe('chosen-approve');

    await owner.reload();
    await card.waitFor();
    await owner.waitForFunction(
      (sel) => document.querySelector(sel)?.getAttribute('data-state') === 'chosen-approve',
      open,
    );
    expect(JSON.parse(await card.getByTestId('approval-args').inputValue())).toEqual({ title: 'Reload check edited' });
    expect(await card.getByTestId('approval-feedback').inputValue()).toBe('a note I wrote');
    expect(await card.getByTestId('approval-approve').getAttribute('aria-pressed')).toBe('true');
    expect(await owner.locator(`${PANEL} [data-testid="approval-submit"]`).count()).toBe(1);

    // A blank title passes the JSON Schema but not the tool (it trims): the server refuses the
    // answer, and what the user prepared stays as it was.
    await card.getByTestId('approval-args').fill('{"title": "   "}');
    await card.getByTestId('approval-approve').click();
    await owner.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    const error = owner.locator(`${PANEL} [data-testid="assistant-error"][data-code="INTERRUPT_INVALID_ARGS"]`);
    await error.waitFor();
    await waitIdle(owner);
    await owner.waitForTimeout(1000); // the quiet reload of the conversation after the refusal
    expect(await card.getAttribute('data-state')).toBe('chosen-approve');
    expect(JSON.parse(await card.getByTestId('approval-args').inputValue())).toEqual({ title: '   ' });
    expect(await card.getByTestId('approval-feedback').inputValue()).toBe('a note I wrote');
    await panelShot(owner, 'assistant-pending-after-refusal');
  });

  it('turns a page selection into context and drops it once the selection is gone', async () => {
    const heading = owner.locator('main h1').first();
    await heading.click({ clickCount: 3 });
    const chip = owner.locator(`${PANEL} [data-testid="assistant-selection"]`);
    await chip.waitFor();
    expect(await chip.textContent()).toContain('Issues');
    expect(await chip.getByRole('button', { name: 'Remove' }).count()).toBe(1);
    const count = await owner.getByTestId('issue-count').boundingBox();
    if (!count) throw new Error('no issue count');
    // A click on the page (not in the panel) collapses the selection.
    await owner.mouse.click(count.x + count.width - 10, count.y + count.height / 2);
    await chip.waitFor({ state: 'detached', timeout: 5_000 });
  });

  it('navigates client-side when the assistant opens a page, with the panel still open', async () => {
    await owner.evaluate(() => {
      (window as unknown as { __marker?: string }).__marker = 'same document';
    });
    await ask(owner, 'go to issue 1');
    await owner.waitForURL(new RegExp(`/projects/${projectId}/issues/1$`), { timeout: 30_000 });
    await owner.locator(PANEL).waitFor();
    // A full page load would have dropped the marker.
    expect(await owner.evaluate(() => (window as unknown as { __marker?: string }).__marker)).toBe('same document');
    expect((await messages(owner)).length).toBeGreaterThan(4);
    // The issue page offers issue-specific suggestions in a new conversation.
    await owner.locator(`${PANEL} [data-testid="assistant-new"]`).click();
    const suggestions = await owner.locator(`${PANEL} [data-testid="assistant-suggestion"]`).allTextContents();
    expect(suggestions).toContain('Summarize this issue');
  });

  it('lists conversations newest first, renames one, and offers Undo after a delete wherever the user goes', async () => {
    // A second conversation, left waiting for an approval (the review shows it as open).
    await ask(owner, 'create an issue titled Waiting for review');
    await owner.locator(`${PANEL} [data-testid="approval-card"][data-state="open"]`).waitFor();
    waitingConversationId = (await owner.locator(PANEL).getAttribute('data-conversation-id')) ?? '';
    expect(waitingConversationId).not.toBe(conversationId);

    await owner.locator(`${PANEL} [data-testid="assistant-history"]`).click();
    const list = owner.locator(`${PANEL} [data-testid="conversation-list"]`);
    await list.locator(`[data-conversation-id="${conversationId}"]`).waitFor();
    const order = await list.locator('[data-testid="conversation-item"]').evaluateAll((els) =>
      els.map((e) => ({
        id: e.getAttribute('data-conversation-id') ?? '',
        at: Date.parse(e.querySelector('time')?.getAttribute('datetime') ?? ''),
      })),
    );
    expect(order[0]?.id).toBe(waitingConversationId);
    expect(order.findIndex((o) => o.id === conversationId)).toBe(1);
    for (let i = 1; i < order.length; i++) expect(order[i - 1]!.at).toBeGreaterThanOrEqual(order[i]!.at);

    const item = list.locator(`[data-conversation-id="${conversationId}"]`);
    await item.getByRole('button', { name: /Rename/ }).click();
    const input = list.getByTestId('conversation-rename-input');
    const title = `Panel e2e ${Date.now().toString(36)}`;
    await input.fill(title);
    await input.press('Enter');
    await list.getByText(title).waitFor();
    await list.getByTestId('conversation-search').fill(title.slice(6));
    await owner.waitForFunction(() => document.querySelectorAll('[data-testid="conversation-item"]').length === 1);
    await list.getByTestId('conversation-search').fill('');
    await owner.waitForFunction(() => document.querySelectorAll('[data-testid="conversation-item"]').length >= 2);
    await shotLightAndDark(owner, 'assistant-history');

    await list.locator(`[data-conversation-id="${conversationId}"]`).getByTestId('conversation-delete').click();
    const toast = owner.locator(`${PANEL} [data-testid="conversation-undo"]`);
    await toast.waitFor();
    expect(await list.locator(`[data-conversation-id="${conversationId}"]`).count()).toBe(0);
    // The offer follows the user: back to the conversation, and even after closing the panel.
    await owner.locator(`${PANEL} [data-testid="assistant-history"]`).click();
    await owner.locator(`${PANEL} [data-testid="assistant-input"]`).waitFor();
    await toast.waitFor();
    await owner.locator(`${PANEL} [data-testid="assistant-close"]`).click();
    await owner.getByTestId('assistant-toggle').click();
    await toast.waitFor();
    await panelShot(owner, 'assistant-undo-toast');
    await toast.getByRole('button', { name: 'Undo' }).click();
    await toast.waitFor({ state: 'detached' });
    await owner.locator(`${PANEL} [data-testid="assistant-history"]`).click();
    await list.locator(`[data-conversation-id="${conversationId}"]`).waitFor();
    await list.locator(`[data-conversation-id="${conversationId}"] button`).first().click();
    await owner.locator(`${PANEL} [data-testid="approval-card"]`).first().waitFor();
  });
});

describe('review page', () => {
  it('shows the thumbs down with its comment to an admin, read-only, with the audit trail', async () => {
    const admin = await newPage(browser);
    await login(admin, 'admin@example.com');
    await admin.goto(`${BASE_URL}/projects/${projectId}/assistant/review?filter=negative`);
    const row = admin.locator(`[data-testid="review-row"][data-conversation-id="${conversationId}"]`);
    await row.waitFor();
    expect(Number(await row.getByTestId('review-feedback').getAttribute('data-negative'))).toBeGreaterThanOrEqual(1);
    await shot(admin, 'review-list');
    await row.getByRole('link').first().click();
    await admin.getByTestId('review-conversation').waitFor();
    await admin.getByText('Too long, and it rendered odd HTML').first().waitFor();
    expect(await admin.locator('[data-testid="feedback-down"][aria-pressed="true"]').count()).toBeGreaterThan(0);
    expect(await admin.locator('[data-testid="feedback-down"]:not([disabled])').count()).toBe(0);
    expect(await admin.locator('[data-testid="approval-submit"]').count()).toBe(0);
    const approved = admin.locator('[data-testid="approval-card"][data-state="approved"]').first();
    await approved.waitFor();
    // The replay shows the arguments the call really ran with, as the user saw them.
    expect(JSON.parse((await approved.getByTestId('approval-ran-with').locator('pre').textContent()) ?? '')).toEqual({
      title: 'Panel test edited',
    });
    expect(await admin.locator('[data-testid="review-audit-entry"]').count()).toBeGreaterThan(0);
    const [download] = await Promise.all([admin.waitForEvent('download'), admin.getByTestId('review-export').click()]);
    expect(download.suggestedFilename()).toBe(`conversation-${conversationId}.json`);
    await shotLightAndDark(admin, 'review-conversation', { fullPage: true });

    // A request its user has not answered yet reads as open, not as "not answered".
    await admin.goto(`${BASE_URL}/projects/${projectId}/assistant/review/${waitingConversationId}`);
    const waiting = admin.locator('[data-testid="approval-card"][data-tool="create_issue"]');
    await waiting.waitFor();
    expect(await waiting.getAttribute('data-state')).toBe('waiting');
    expect(await waiting.getByTestId('approval-outcome').textContent()).toContain('Open (waiting for the user)');
    await shot(admin, 'review-waiting');
    await admin.close();
  });

  it('is refused to a viewer and a member', async () => {
    for (const email of ['viewer@example.com', 'member@example.com']) {
      const page = await newPage(browser);
      await login(page, email);
      const res = await page.goto(`${BASE_URL}/projects/${projectId}/assistant/review`);
      const refused = (await page.getByTestId('review-not-allowed').count()) > 0 || res?.status() === 404;
      expect(refused).toBe(true);
      expect(await page.locator('[data-testid="review-row"]').count()).toBe(0);
      await page.goto(`${BASE_URL}/projects/${projectId}/assistant/review/${conversationId}`);
      expect(await page.getByText('Too long, and it rendered odd HTML').count()).toBe(0);
      if (email === 'viewer@example.com') await shot(page, 'review-refused-viewer');
      await page.close();
    }
  });
});
