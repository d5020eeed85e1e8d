// Budgets and what waits for the user, in a real browser against `next start` (demo model, priced
// at $3 / $15 per million tokens), in a project of their own (tests/e2e/fixture-data.ts): the
// owner sets a daily budget in Settings, Budgets; the answer that brings the day to 85 % of it
// ends with the panel's warning (once); once the budget is spent the next message is refused with
// the sentence naming the budget, and the message stays in the field. Approvals waiting show as a
// count on the assistant's toggle and in the page title (also after navigating), a browser
// notification comes while the panel is closed (the permission was asked once, after the first
// message sent), and "N waiting" lists the conversations and opens each. axe finds nothing serious
// in the light theme, the dark theme and at 390 px.
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe';
import { BASE_URL, login, openBrowser, shot } from './browser';
import { BUDGET_PROJECT } from './fixture-data';
import { PANEL, ask, ensureOpen, waitIdle } from './panel';

let browser: Browser;
let projectId = '';

beforeAll(async () => {
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
});

const SETUPS: Array<{ name: string; options: BrowserContextOptions }> = [
  { name: 'light', options: { viewport: { width: 1280, height: 800 }, colorScheme: 'light' } },
  { name: 'dark', options: { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' } },
  {
    name: 'touch-390',
    options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'light' },
  },
];

/** Records notifications and permission requests (kept across page loads of the tab). */
function fakeNotifications(): void {
  const store = window.sessionStorage;
  const list = (key: string) => JSON.parse(store.getItem(key) ?? '[]') as unknown[];
  class FakeNotification {
    static get permission(): string {
      return store.getItem('fake-permission') ?? 'default';
    }
    static requestPermission(): Promise<string> {
      store.setItem('fake-asks', JSON.stringify([...list('fake-asks'), Date.now()]));
      store.setItem('fake-permission', 'granted');
      return Promise.resolve('granted');
    }
    onclick: (() => void) | null = null;
    constructor(title: string, opts?: { body?: string }) {
      store.setItem('fake-notes', JSON.stringify([...list('fake-notes'), { title, body: opts?.body ?? '' }]));
    }
    close(): void {}
  }
  (window as unknown as { Notification: unknown }).Notification = FakeNotification;
}

const recorded = (page: Page, key: 'fake-asks' | 'fake-notes') =>
  page.evaluate((k) => JSON.parse(window.sessionStorage.getItem(k) ?? '[]') as unknown[], key);

async function hydrated(page: Page): Promise<void> {
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
}

/** A tRPC call with the page's session (superjson envelope; mutations from the product's origin). */
async function trpc<T>(page: Page, path: string, input: unknown, mutation = false): Promise<T> {
  const url = `${BASE_URL}/api/trpc/${path}`;
  const res = mutation
    ? await page.request.post(url, { data: { json: input }, headers: { origin: BASE_URL } })
    : await page.request.get(`${url}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`);
  expect(res.status(), `${path}: ${await res.text()}`).toBe(200);
  return ((await res.json()) as { result: { data: { json: T } } }).result.data.json;
}

interface Spend {
  members: Array<{ user: { id: string; name: string }; day: { costUsd: number } }>;
}
/** What the owner spent today in the project (US dollars). */
async function spentToday(page: Page): Promise<number> {
  const data = await trpc<Spend>(page, 'agent.budgets.get', { projectId });
  return data.members.find((m) => m.user.name === 'Olivia Owner')?.day.costUsd ?? 0;
}

const setDailyBudget = (page: Page, amount: number | null) =>
  trpc(page, 'agent.budgets.set', { projectId, budgets: { MEMBER_DAY: amount } }, true);

async function askInNewConversation(page: Page, text: string): Promise<void> {
  await ensureOpen(page);
  await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
  await ask(page, text);
}

describe.each(SETUPS)('budgets and waiting approvals, $name', ({ name, options }) => {
  let ctx: BrowserContext;
  let page: Page;
  const full = name === 'light';

  beforeAll(async () => {
    ctx = await browser.newContext({ ...options, baseURL: BASE_URL, bypassCSP: true });
    await ctx.addInitScript(fakeNotifications);
    page = await ctx.newPage();
    await login(page, BUDGET_PROJECT.owner);
    await page.goto(`${BASE_URL}/projects`);
    const href = await page.getByRole('link', { name: BUDGET_PROJECT.name }).first().getAttribute('href');
    projectId = decodeURIComponent(href!.split('/')[2]!);
    await setDailyBudget(page, null);
  });
  afterAll(async () => {
    if (page) await setDailyBudget(page, null).catch(() => undefined);
    await ctx?.close();
  });

  it('warns at 80 % once, then refuses with the budget named and the message kept', async () => {
    await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await hydrated(page);
    expect(await recorded(page, 'fake-asks')).toHaveLength(0);
    const before = await spentToday(page);
    await askInNewConversation(page, 'list open issues');
    // Notifications were asked for once, right after the first message was sent.
    expect(await recorded(page, 'fake-asks')).toHaveLength(1);
    const spent = await spentToday(page);
    const perAnswer = spent - before;
    expect(perAnswer).toBeGreaterThan(0);
    // A budget the next such answer brings to 85.5 %.
    const budget = Number(((spent + perAnswer) / 0.855).toPrecision(10));
    if (full) {
      await page.goto(`${BASE_URL}/projects/${projectId}/settings`);
      await page.getByRole('heading', { name: 'Budgets' }).waitFor();
      await page.getByRole('heading', { name: 'Retention' }).waitFor();
      await hydrated(page);
      await page.getByLabel('Each member, per day').fill(String(budget));
      await page.getByTestId('budgets-save').click();
      await page.getByTestId('budgets-outcome').getByText('Budgets saved').waitFor();
      await expectAccessible(page, `settings-${name}`);
      await shot(page, 'settings-budgets-retention', { fullPage: true });
      await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
      await hydrated(page);
    } else {
      await setDailyBudget(page, budget);
      await page.goto(`${BASE_URL}/projects/${projectId}/settings`);
      await page.getByRole('heading', { name: 'Budgets' }).waitFor();
      await hydrated(page);
      await expectAccessible(page, `settings-${name}`);
      await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
      await hydrated(page);
    }

    await askInNewConversation(page, 'list open issues');
    const warning = page.locator(`${PANEL} [data-testid="assistant-budget-warning"]`);
    await warning.waitFor();
    expect(await warning.textContent()).toMatch(/^Your daily assistant budget in this project is 8\d % used \(\$/);
    await expectAccessible(page, `budget-warning-${name}`);
    await warning.getByRole('button', { name: 'Dismiss' }).click();
    await warning.waitFor({ state: 'detached' });

    // Spent: the next message is refused, naming the budget, and stays in the field.
    await setDailyBudget(page, Number((await spentToday(page)).toPrecision(10)) * 0.999);
    await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
    const input = page.locator(`${PANEL} [data-testid="assistant-input"]`);
    await input.fill('one question too many');
    await input.press('Enter');
    const error = page.locator(`${PANEL} [data-testid="assistant-error"][data-code="BUDGET_EXCEEDED"]`);
    await error.waitFor();
    expect(await error.textContent()).toMatch(
      /You have used your daily assistant budget in this project \(\$[\d.]+\)\. It renews at 00:00 UTC/,
    );
    expect(await error.getByTestId('assistant-retry').count()).toBe(0);
    expect(await input.inputValue()).toBe('one question too many');
    // The warning was said once in this window: not again.
    expect(await page.locator(`${PANEL} [data-testid="assistant-budget-warning"]`).count()).toBe(0);
    await expectAccessible(page, `budget-refused-${name}`);
    if (full) await shot(page, 'assistant-budget-refused');
    await input.fill('');
    await setDailyBudget(page, null);
  });

  it('shows approvals waiting on the toggle, in the title and in a list that opens each; notifies when out of sight', async () => {
    await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await hydrated(page);
    // What waits already (requests left by the other themes' runs), as the server counts it.
    const waitingBefore = (await trpc<{ total: number }>(page, 'agent.waiting.list', { projectId })).total;
    await askInNewConversation(page, `create an issue titled Waiting one ${name}`);
    await page.locator(`${PANEL} [data-testid="approval-card"][data-state="open"]`).waitFor();
    await page.waitForFunction(
      (n) =>
        document.querySelector('[data-testid="assistant-waiting-badge"]')?.getAttribute('data-count') === String(n),
      waitingBefore + 1,
    );
    expect(await page.title()).toMatch(new RegExp(`^\\(${waitingBefore + 1}\\) `));

    // Another request comes to wait while the panel is closed (as from another tab): a notification.
    await page.locator(`${PANEL} [data-testid="assistant-close"]`).click();
    await page.locator(PANEL).waitFor({ state: 'detached' });
    const notesBefore = (await recorded(page, 'fake-notes')).length;
    await page.evaluate(
      async ({ pid, text }) => {
        const res = await fetch(`/api/projects/${pid}/in-app-agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ threadId: 'new', messages: [{ id: 'm1', role: 'user', content: text }] }),
        });
        await res.text();
      },
      { pid: projectId, text: `create an issue titled Waiting two ${name}` },
    );
    // The tab looks again when it gets the focus back.
    await page.evaluate(() => window.dispatchEvent(new Event('focus')));
    const total = waitingBefore + 2;
    await page.waitForFunction(
      (n) =>
        document.querySelector('[data-testid="assistant-waiting-badge"]')?.getAttribute('data-count') === String(n),
      total,
    );
    const notes = (await recorded(page, 'fake-notes')) as Array<{ title: string; body: string }>;
    expect(notes.slice(notesBefore)).toEqual([
      { title: `Assistant: ${total} approvals wait for you`, body: `In “create an issue titled Waiting two ${name}”.` },
    ]);
    // Still asked only once.
    expect(await recorded(page, 'fake-asks')).toHaveLength(1);

    // The count stays in the title on another page of the product, and back.
    await page.getByRole('link', { name: 'Members' }).first().click();
    await page.waitForURL(/\/members$/);
    await page.waitForFunction((n) => document.title.startsWith(`(${n}) `), total);
    await page.getByRole('link', { name: 'Issues' }).first().click();
    await page.waitForURL(/\/issues$/);
    await page.waitForFunction((n) => document.title.startsWith(`(${n}) Issues`), total);

    // The list opens each conversation.
    await page.getByTestId('assistant-waiting-button').click();
    const list = page.getByTestId('assistant-waiting-list');
    await list.waitFor();
    expect(await list.getByTestId('assistant-waiting-item').count()).toBe(total);
    await expectAccessible(page, `waiting-list-${name}`);
    if (full) await shot(page, 'assistant-waiting-list', { fullPage: false });
    await list.getByRole('button', { name: new RegExp(`Waiting one ${name}`) }).click();
    await page.locator(PANEL).waitFor();
    const card = page.locator(`${PANEL} [data-testid="approval-card"][data-tool="create_issue"][data-state="open"]`);
    await card.waitFor();
    expect(await page.locator(PANEL).getAttribute('data-conversation-id')).toBeTruthy();
    await card.getByTestId('approval-approve').click();
    await page.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await waitIdle(page);
    await page.waitForFunction(
      (n) =>
        document.querySelector('[data-testid="assistant-waiting-badge"]')?.getAttribute('data-count') === String(n),
      total - 1,
    );
    await page.waitForFunction((n) => document.title.startsWith(`(${n}) `), total - 1);
  });
});
