// The assistant panel in a real browser against `next start` with the seeded demo data and the
// offline demo model: streaming, tool cards, approvals (edit, approve, reject with feedback), stop,
// reload/replay, feedback, navigation, inert unsafe markdown, and the review page's access rules.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, newPage, openBrowser, shot } from './browser';

const PANEL = '[data-testid="assistant-panel"]';
const MESSAGES = `${PANEL} [data-testid="assistant-message"]`;
const ASSISTANT = `${MESSAGES}[data-role="assistant"]`;

let browser: Browser;
let owner: Page;
let projectId = '';
let conversationId = '';
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

/** Waits until no answer is streaming (the Send button is back). */
async function waitIdle(page: Page, timeout = 30_000): Promise<void> {
  await page.locator(`${PANEL} [data-testid="assistant-send"]`).waitFor({ state: 'visible', timeout });
}

async function ask(page: Page, text: string, opts: { wait?: boolean } = {}): Promise<void> {
  const input = page.locator(`${PANEL} [data-testid="assistant-input"]`);
  await input.fill(text);
  await input.press('Enter');
  // The server echoes the user message with its own id; the optimistic bubble then disappears.
  await page.waitForFunction(
    (t) =>
      [...document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="user"]')].some(
        (e) => e.getAttribute('data-message-id') && e.textContent?.includes(t),
      ),
    text,
    { timeout: 15_000 },
  );
  if (opts.wait !== false) await waitIdle(page);
}

async function messageIds(page: Page): Promise<string[]> {
  return page.$$eval(`[data-testid="assistant-panel"] [data-testid="assistant-message"]`, (els) =>
    els.map((e) => `${e.getAttribute('data-role')}:${e.getAttribute('data-message-id')}`),
  );
}

async function cardStates(page: Page): Promise<string[]> {
  return page.$$eval(`[data-testid="assistant-panel"] [data-testid="approval-card"]`, (els) =>
    els.map((e) => `${e.getAttribute('data-tool')}:${e.getAttribute('data-state')}`),
  );
}

async function feedbackStates(page: Page): Promise<string[]> {
  return page.$$eval(`[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="assistant"]`, (els) =>
    els.map((e) => `${e.getAttribute('data-message-id')}:${e.querySelector('[data-testid="feedback"]')?.getAttribute('data-value') ?? '-'}`),
  );
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
  it('opens with Ctrl+I, focuses the input, names the demo model, and Escape returns focus to the toggle', async () => {
    await owner.goto(`${BASE_URL}/projects/${projectId}/issues`);
    const toggle = owner.getByTestId('assistant-toggle');
    await toggle.waitFor();
    expect(await toggle.getAttribute('aria-keyshortcuts')).toContain('Control+I');
    expect(await toggle.getAttribute('title')).toMatch(/Ctrl\+I|⌘I/);
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
    await shot(owner, 'assistant-empty');

    await owner.keyboard.press('Escape');
    await owner.locator(PANEL).waitFor({ state: 'detached' });
    await owner.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'assistant-toggle');
    await owner.keyboard.press('Control+i');
    await owner.locator(PANEL).waitFor();
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
    conversationId = (await owner.evaluate((p) => window.localStorage.getItem(`in-app-agent:${p}:conversation`), projectId)) ?? '';
    expect(conversationId).not.toBe('');
    // The live region announced the completed answer once.
    expect(await owner.locator(`${PANEL} [data-testid="assistant-announcer"]`).textContent()).toMatch(/^Assistant: /);
    await shot(owner, 'assistant-list-open-issues');
  });

  it('asks for approval before creating an issue; the edited title is what gets created', async () => {
    await ask(owner, 'create an issue titled Panel test');
    const card = owner.locator(`${PANEL} [data-testid="approval-card"][data-tool="create_issue"]`).last();
    await card.waitFor();
    expect(await card.getAttribute('data-state')).toBe('open');
    expect(await card.locator('[data-testid="approval-why"]').textContent()).toMatch(/Why you are asked/);
    expect(await card.textContent()).toMatch(/Expires in \d+:\d\d/);
    const args = card.getByTestId('approval-args');
    expect(JSON.parse(await args.inputValue())).toEqual({ title: 'Panel test' });

    // Invalid JSON is refused before anything is sent.
    await args.fill('{"title": ');
    await card.getByTestId('approval-args-error').waitFor();
    expect(await card.getByTestId('approval-approve').isDisabled()).toBe(true);

    await args.fill('{"title": "Panel test edited"}');
    expect(await card.getByTestId('approval-diff').textContent()).toContain('title');
    await card.getByTestId('approval-approve').click();
    await shot(owner, 'assistant-approval-edited');
    await owner.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await waitIdle(owner);
    await owner.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="approval-card"][data-tool="create_issue"]')].some((c) => c.getAttribute('data-state') === 'approved'),
    );
    const tool = owner.locator(`${PANEL} [data-testid="tool-card"][data-tool="create_issue"]`).last();
    expect(await tool.getAttribute('data-status')).toBe('done');

    // The issue exists with the edited title (the panel stays open across pages).
    await owner.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await owner.getByText('Panel test edited', { exact: false }).first().waitFor();
    expect(await owner.getByText('Panel test edited').count()).toBeGreaterThan(0);
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
      [...document.querySelectorAll('[data-testid="approval-card"][data-tool="close_issue"]')].some((c) => c.getAttribute('data-state') === 'rejected'),
    );
    const rejected = owner.locator(`${PANEL} [data-testid="approval-card"][data-tool="close_issue"][data-state="rejected"]`).last();
    expect(await rejected.textContent()).toContain('Not now, still investigating');
    expect(await owner.locator(`${PANEL} [data-testid="tool-card"][data-tool="close_issue"]`).last().getAttribute('data-status')).toBe('rejected');
    await shot(owner, 'assistant-approval-rejected');
  });

  it('stops a long answer midway and keeps the partial text', async () => {
    await ask(owner, 'write a long answer', { wait: false });
    const answer = owner.locator(`${ASSISTANT}[data-streaming="true"]`).last();
    await answer.waitFor({ timeout: 15_000 });
    await owner.waitForFunction(
      () => {
        const all = document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="assistant"]');
        return (all[all.length - 1]?.textContent ?? '').length > 80;
      },
      undefined,
      { timeout: 15_000 },
    );
    await owner.locator(`${PANEL} [data-testid="assistant-stop"]`).click();
    await owner.locator(`${PANEL} [data-testid="assistant-stopped"]`).last().waitFor();
    await waitIdle(owner);
    const last = owner.locator(ASSISTANT).last();
    const partial = (await last.textContent()) ?? '';
    expect(partial).toContain('A good issue tracker');
    expect(partial).not.toContain('12. A good issue tracker');
    await owner.waitForTimeout(1500);
    expect((await last.textContent()) ?? '').toBe(partial);
    expect(await last.getAttribute('data-streaming')).toBe('false');
    await shot(owner, 'assistant-stopped');
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
    await shot(owner, 'assistant-unsafe-inert');
  });

  it('records thumbs up and thumbs down with a comment', async () => {
    const first = owner.locator(ASSISTANT).filter({ has: owner.locator('[data-testid="feedback"]') }).first();
    await first.getByTestId('feedback-up').click();
    await owner.waitForFunction(
      () => document.querySelector('[data-testid="assistant-panel"] [data-testid="feedback-up"][aria-pressed="true"]') !== null,
    );
    const last = owner.locator(ASSISTANT).last();
    await last.getByTestId('feedback-down').click();
    await last.getByTestId('feedback-comment').fill('Too long, and it rendered odd HTML');
    await last.getByTestId('feedback-comment-submit').click();
    await last.getByText('Your comment: Too long, and it rendered odd HTML').waitFor();
    expect(await last.getByTestId('feedback-down').getAttribute('aria-pressed')).toBe('true');
    // Changeable: down, then up again, on the first answer.
    const firstValue = (v: string) =>
      owner.waitForFunction((want) => {
        const el = document.querySelector('[data-testid="assistant-panel"] [data-testid="feedback"]');
        return el?.getAttribute('data-value') === want;
      }, v);
    await first.getByTestId('feedback-down').click();
    await firstValue('-1');
    await first.getByTestId('feedback-up').click();
    await firstValue('1');
    await shot(owner, 'assistant-feedback');
  });

  it('shows exactly the same conversation after a reload, feedback included', async () => {
    await owner.waitForTimeout(500);
    const before = { ids: await messageIds(owner), cards: await cardStates(owner), fb: await feedbackStates(owner) };
    const draft = 'half-written question';
    await owner.locator(`${PANEL} [data-testid="assistant-input"]`).fill(draft);
    await owner.reload();
    await owner.locator(PANEL).waitFor();
    await owner.waitForFunction((n) => document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-message"]').length >= n, before.ids.length);
    expect(await messageIds(owner)).toEqual(before.ids);
    expect(await cardStates(owner)).toEqual(before.cards);
    expect(await feedbackStates(owner)).toEqual(before.fb);
    expect(await owner.locator(`${PANEL} [data-testid="assistant-input"]`).inputValue()).toBe(draft);
    expect(await owner.locator(`${PANEL} [data-testid="assistant-stopped"]`).count()).toBeGreaterThan(0);
    await shot(owner, 'assistant-after-reload');
    await owner.locator(`${PANEL} [data-testid="assistant-input"]`).fill('');
  });

  it('keeps a pending approval open across a reload', async () => {
    await ask(owner, 'create an issue titled Reload check');
    await owner.locator(`${PANEL} [data-testid="approval-card"][data-tool="create_issue"][data-state="open"]`).waitFor();
    await owner.reload();
    await owner.locator(`${PANEL} [data-testid="approval-card"][data-tool="create_issue"][data-state="open"]`).waitFor();
    expect(await owner.locator(`${PANEL} [data-testid="approval-submit"]`).count()).toBe(1);
    await shot(owner, 'assistant-pending-after-reload');
  });

  it('navigates client-side when the assistant opens a page, with the panel still open', async () => {
    await ask(owner, 'go to issue 1');
    await owner.waitForURL(new RegExp(`/projects/${projectId}/issues/1$`), { timeout: 30_000 });
    await owner.locator(PANEL).waitFor();
    expect((await messageIds(owner)).length).toBeGreaterThan(4);
    // The issue page offers issue-specific suggestions in a new conversation.
    await owner.locator(`${PANEL} [data-testid="assistant-new"]`).click();
    const suggestions = await owner.locator(`${PANEL} [data-testid="assistant-suggestion"]`).allTextContents();
    expect(suggestions).toContain('Summarize this issue');
  });

  it('lists conversations, renames one and restores a deleted one', async () => {
    await owner.locator(`${PANEL} [data-testid="assistant-history"]`).click();
    const list = owner.locator(`${PANEL} [data-testid="conversation-list"]`);
    await list.waitFor();
    const item = list.locator(`[data-conversation-id="${conversationId}"]`);
    await item.waitFor();
    await item.getByRole('button', { name: /Rename/ }).click();
    const input = list.getByTestId('conversation-rename-input');
    const title = `Panel e2e ${Date.now().toString(36)}`;
    await input.fill(title);
    await input.press('Enter');
    await list.getByText(title).waitFor();
    await list.getByTestId('conversation-search').fill(title.slice(6));
    await owner.waitForFunction(() => document.querySelectorAll('[data-testid="conversation-item"]').length === 1);
    await list.getByTestId('conversation-search').fill('');
    await shot(owner, 'assistant-history');
    await list.locator(`[data-conversation-id="${conversationId}"]`).getByTestId('conversation-delete').click();
    await owner.locator(`${PANEL} [data-testid="conversation-undo"]`).waitFor();
    expect(await list.locator(`[data-conversation-id="${conversationId}"]`).count()).toBe(0);
    await owner.locator(`${PANEL} [data-testid="conversation-undo"]`).getByRole('button', { name: 'Undo' }).click();
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
    expect(await admin.locator('[data-testid="approval-card"][data-state="approved"]').count()).toBeGreaterThan(0);
    expect(await admin.locator('[data-testid="review-audit-entry"]').count()).toBeGreaterThan(0);
    const [download] = await Promise.all([admin.waitForEvent('download'), admin.getByTestId('review-export').click()]);
    expect(download.suggestedFilename()).toBe(`conversation-${conversationId}.json`);
    await shot(admin, 'review-conversation');
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
