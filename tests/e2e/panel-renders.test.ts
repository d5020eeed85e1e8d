// While an answer streams, the panel renders again only the message that changes: the earlier
// messages of the conversation (a tool card among them) keep their rendered rows, in a real
// browser against `next start` with the demo model. Renders are counted through React's devtools
// hook (react-renders.ts). Runs as the demo owner.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { BASE_URL, login, openBrowser } from './browser';
import { ASSISTANT, MESSAGES, PANEL, ask, ensureOpen, findProjectId, waitForStreamingAnswer, waitIdle } from './panel';
import { RENDER_COUNTER_SCRIPT, startCountingRenders, stopCountingRenders } from './react-renders';

let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await openBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL });
  await context.addInitScript(RENDER_COUNTER_SCRIPT);
  page = await context.newPage();
  await login(page, 'owner@example.com');
  const projectId = await findProjectId(page);
  await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
  await ensureOpen(page);
  await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
});

afterAll(async () => {
  await browser?.close();
});

it('renders only the streaming answer again while it streams', async () => {
  await ask(page, 'list open issues');
  await ask(page, 'summarize the project');
  expect(await page.locator(`${PANEL} [data-testid="tool-card"]`).count()).toBeGreaterThan(0);
  const earlier = await page.$$eval(MESSAGES, (els) =>
    els.map((e) => ({ id: e.getAttribute('data-message-id') ?? '', role: e.getAttribute('data-role') ?? '' })),
  );
  expect(earlier.filter((m) => m.role === 'assistant').length).toBeGreaterThanOrEqual(2);

  await startCountingRenders(page);
  await ask(page, 'write a long answer', { wait: false });
  // About a hundred words of the slow answer: a hundred deltas, each its own frame or a few.
  await waitForStreamingAnswer(page, 600);
  const counts = await stopCountingRenders(page);
  const streamingId = await page.$$eval(ASSISTANT, (els) => els.at(-1)?.getAttribute('data-message-id') ?? '');
  await page.locator(`${PANEL} [data-testid="assistant-stop"]`).click();
  await waitIdle(page);

  // The streaming answer rendered once per frame that brought it text.
  expect(counts.rows[streamingId] ?? 0).toBeGreaterThanOrEqual(10);
  // The earlier messages rendered only for the run's boundaries (its start and the model notice
  // re-read every card), never per delta.
  const rerendered = earlier.map((m) => ({ ...m, renders: counts.rows[m.id] ?? 0 }));
  expect(Math.max(...rerendered.map((r) => r.renders)), JSON.stringify({ rerendered, counts })).toBeLessThanOrEqual(3);
});
