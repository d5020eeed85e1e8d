// The assistant review's usage figures and paging, in a real browser against `next start` with the
// demo data, the offline demo model and model prices configured ($3 / $15 per million tokens, see
// global-setup.ts): after a few answers the conversation's row shows their tokens and cost, and
// the project's summary per day and per user grew by exactly what the runs recorded; a
// conversation longer than one page shows its earliest messages after "Show earlier messages".
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, newPage, openBrowser, shot } from './browser';
import { REVIEW_CONVERSATION as REVIEW } from './fixture-data';
import { PANEL, ask, ensureOpen, findProjectId } from './panel';

const PRICE_INPUT = 3;
const PRICE_OUTPUT = 15;

let browser: Browser;
let page: Page;
let projectId = '';

interface Figures {
  runs: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
}

const reviewUrl = (query = '') => `${BASE_URL}/projects/${projectId}/assistant/review${query}`;

/** The figures of every row of a usage table (by its `data-key`: a day, a user id or `total`). */
type UsageTable = 'review-usage-by-day' | 'review-usage-by-user';
async function usageRows(p: Page, table: UsageTable): Promise<Map<string, Figures>> {
  const rows = await p.$$eval(`[data-testid="${table}"] tr[data-key]`, (trs) =>
    trs.map((tr) => ({
      key: tr.getAttribute('data-key') ?? '',
      runs: Number(tr.getAttribute('data-runs')),
      inputTokens: Number(tr.getAttribute('data-input-tokens')),
      outputTokens: Number(tr.getAttribute('data-output-tokens')),
      costUsd: tr.hasAttribute('data-cost-usd') ? Number(tr.getAttribute('data-cost-usd')) : null,
    })),
  );
  return new Map(rows.map(({ key, ...f }) => [key, f]));
}

const ZERO: Figures = { runs: 0, inputTokens: 0, outputTokens: 0, costUsd: 0 };

/** `a + sign × b`, a missing row counting as zero. */
function combine(a: Figures | undefined, b: Figures | undefined, sign: 1 | -1): Figures {
  const x = a ?? ZERO;
  const y = b ?? ZERO;
  return {
    runs: x.runs + sign * y.runs,
    inputTokens: x.inputTokens + sign * y.inputTokens,
    outputTokens: x.outputTokens + sign * y.outputTokens,
    costUsd: (x.costUsd ?? 0) + sign * (y.costUsd ?? 0),
  };
}
const minus = (a: Figures | undefined, b: Figures | undefined) => combine(a, b, -1);

function expectFigures(actual: Figures, expected: Figures, what: string): void {
  expect({ ...actual, costUsd: null }, what).toEqual({ ...expected, costUsd: null });
  // The summary rounds costs to a millionth of a dollar.
  expect(Math.abs((actual.costUsd ?? 0) - (expected.costUsd ?? 0)), `${what}: cost`).toBeLessThan(2e-6);
}

/** Sum of rows (without the total) of a usage table. */
function sumRows(rows: Map<string, Figures>): Figures {
  let s = { ...ZERO };
  for (const [key, f] of rows) if (key !== 'total') s = combine(s, f, 1);
  return s;
}

/** A tRPC query through the app's HTTP API with the page's session (superjson envelope). */
async function trpcQuery<T>(p: Page, path: string, input: unknown): Promise<T> {
  const url = `${BASE_URL}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`;
  const res = await p.request.get(url);
  expect(res.status(), `${path}: ${await res.text()}`).toBe(200);
  return ((await res.json()) as { result: { data: { json: T } } }).result.data.json;
}

beforeAll(async () => {
  browser = await openBrowser();
  page = await newPage(browser);
  await login(page, 'owner@example.com');
  projectId = await findProjectId(page);
});
afterAll(async () => {
  await browser?.close();
});

describe('assistant review: usage', () => {
  it('shows tokens and cost per conversation, per day and per user, adding up to what the runs recorded', async () => {
    await page.goto(reviewUrl());
    await page.getByTestId('review-usage-summary').waitFor();
    const daysBefore = await usageRows(page, 'review-usage-by-day');
    const usersBefore = await usageRows(page, 'review-usage-by-user');

    // Three answers in a new conversation of the panel.
    await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached' });
    await ensureOpen(page);
    await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
    for (const q of ['list open issues', 'show issue 3', 'summarize the project']) await ask(page, q);
    const conversationId = (await page.locator(PANEL).getAttribute('data-conversation-id')) ?? '';
    expect(conversationId).not.toBe('');

    // What the runs recorded: each finished run's usage as the replay carries it.
    type Usage = { inputTokens?: number; outputTokens?: number; costUsd?: number };
    const replay = await trpcQuery<{ view: { runs: Array<{ usage?: Usage }> } }>(page, 'agent.conversations.get', {
      projectId,
      conversationId,
    });
    expect(replay.view.runs).toHaveLength(3);
    let cost = 0;
    const recorded = { runs: 3, inputTokens: 0, outputTokens: 0, costUsd: 0 };
    for (const r of replay.view.runs) {
      expect(r.usage?.costUsd, 'every answer is priced').toBeTypeOf('number');
      recorded.inputTokens += r.usage?.inputTokens ?? 0;
      recorded.outputTokens += r.usage?.outputTokens ?? 0;
      cost += r.usage?.costUsd ?? 0;
    }
    recorded.costUsd = cost;
    expect(recorded.inputTokens).toBeGreaterThan(0);
    expect(recorded.outputTokens).toBeGreaterThan(0);
    // The cost is the configured prices applied to the tokens.
    const priced = (recorded.inputTokens * PRICE_INPUT + recorded.outputTokens * PRICE_OUTPUT) / 1e6;
    expect(recorded.costUsd).toBeCloseTo(priced, 9);

    await page.goto(reviewUrl());
    const row = page.locator(`[data-testid="review-row"][data-conversation-id="${conversationId}"]`);
    const cell = row.getByTestId('review-usage');
    await cell.waitFor();
    expect(Number(await cell.getAttribute('data-input-tokens'))).toBe(recorded.inputTokens);
    expect(Number(await cell.getAttribute('data-output-tokens'))).toBe(recorded.outputTokens);
    expect(Number(await cell.getAttribute('data-cost-usd'))).toBeCloseTo(recorded.costUsd, 9);
    const fmt = (n: number) => n.toLocaleString('en-US');
    expect(await cell.textContent()).toContain(`${fmt(recorded.inputTokens)} in · ${fmt(recorded.outputTokens)} out`);
    const costText = (await cell.getByTestId('review-usage-cost').textContent()) ?? '';
    expect(costText).toMatch(/^\$\d+\.\d{2,6}$/);
    // Shown to the hundredth of a cent (a millionth of a dollar below one cent), rounded.
    const shownTo = recorded.costUsd >= 0.01 ? 1e-4 : 1e-6;
    expect(Math.abs(Number(costText.slice(1)) - recorded.costUsd)).toBeLessThanOrEqual(shownTo / 2 + 1e-12);

    // The project's summary grew by exactly these three answers: today's row, one user's row
    // (every other user's row unchanged), and the totals; and its rows add up to its totals.
    const days = await usageRows(page, 'review-usage-by-day');
    const users = await usageRows(page, 'review-usage-by-user');
    const today = new Date().toISOString().slice(0, 10);
    expectFigures(minus(days.get(today), daysBefore.get(today)), recorded, `today (${today})`);
    expectFigures(minus(days.get('total'), daysBefore.get('total')), recorded, 'total per day');
    const changed = [...users.keys()].filter(
      (k) => k !== 'total' && minus(users.get(k), usersBefore.get(k)).runs !== 0,
    );
    expect(changed, 'only the asking user’s row changed').toHaveLength(1);
    expectFigures(minus(users.get(changed[0]!), usersBefore.get(changed[0]!)), recorded, 'the asking user');
    expectFigures(minus(users.get('total'), usersBefore.get('total')), recorded, 'total per user');
    expectFigures(sumRows(days), days.get('total')!, 'days add up to the total');
    expectFigures(sumRows(users), users.get('total')!, 'users add up to the total');
    await shot(page, 'review-usage');

    // Another period: the link keeps the list's filter and the summary covers 7 days.
    await page.goto(reviewUrl('?filter=approvals'));
    await page.getByTestId('review-usage-days-7').click();
    await page.waitForURL((u) => u.searchParams.get('days') === '7' && u.searchParams.get('filter') === 'approvals');
    expect(await page.getByTestId('review-usage-summary').getAttribute('data-days')).toBe('7');
    expect(await page.getByTestId('review-usage-days-7').getAttribute('aria-current')).toBe('page');
    expect((await usageRows(page, 'review-usage-by-day')).get(today)?.runs).toBe(days.get(today)?.runs);
  });
});

describe('assistant review: earlier messages', () => {
  it('shows the newest page of a long conversation and loads the earlier messages on request', async () => {
    // The fixtures' conversation of the owner (tests/e2e/fixtures.ts): one run more than a page.
    const last = REVIEW.turns;
    await page.goto(reviewUrl(`/${REVIEW.id}`));
    const messages = page.getByTestId('review-messages');
    await messages.waitFor();
    const userTexts = () =>
      messages
        .locator('[data-testid="assistant-message"][data-role="user"]')
        .evaluateAll((els) => els.map((e) => e.textContent ?? ''));
    let shown = await userTexts();
    expect(shown).toHaveLength(last - 1);
    expect(shown[0]).toContain(REVIEW.question(2));
    expect(shown.at(-1)).toContain(REVIEW.question(last));
    expect(shown.some((t) => t.includes(REVIEW.question(1)))).toBe(false);

    const older = page.getByTestId('review-older');
    expect(await older.textContent()).toBe('Show earlier messages');
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached' });
    await older.click();
    await page.getByTestId('review-start').waitFor();
    shown = await userTexts();
    expect(shown).toHaveLength(last);
    expect(shown[0]).toContain(REVIEW.question(1));
    expect(shown[1]).toContain(REVIEW.question(2));
    expect(await messages.getAttribute('data-runs')).toBe(String(last));
    expect(await older.count()).toBe(0);
    // The focus moves from the button that went away to the start of the conversation.
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'review-start');
    await shot(page, 'review-earlier-messages');
  });
});
