// The evaluation studio in a real browser against `next start` with the demo data and the offline
// demo model: two answers recorded through the assistant's route and rated down; a dataset made
// from them in the review studio (filters: thumbs down, a tool used); an expectation written; an
// experiment run with the project's settings (its cost estimated first, its progress shown until
// it completes) and one with get_issue turned off; the comparison says which case got worse.
// axe in the light and dark themes and on a 390 px screen. The comparison is the README's picture.
import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe';
import { BASE_URL, docsImage, login, newPage, openBrowser, shot } from './browser';
import { findProjectId } from './panel';

let browser: Browser;
let page: Page;
let projectId = '';
let listConversation = '';
const token = randomBytes(3).toString('hex');
const question = `show issue 1 for the suite ${token}`;

async function trpc<T>(p: Page, path: string, input: unknown, mutation = false): Promise<T> {
  const res = mutation
    ? await p.request.post(`${BASE_URL}/api/trpc/${path}`, {
        data: { json: input },
        headers: { origin: BASE_URL, 'content-type': 'application/json' },
      })
    : await p.request.get(`${BASE_URL}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`);
  expect(res.status(), `${path}: ${await res.text()}`).toBe(200);
  return ((await res.json()) as { result: { data: { json: T } } }).result.data.json;
}

/** One answer through the assistant's route; its conversation id. */
async function answer(text: string): Promise<string> {
  return page.evaluate(
    async ({ pid, text }) => {
      for (;;) {
        const res = await fetch(`/api/projects/${pid}/in-app-agent`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ threadId: 'new', messages: [{ id: 'm1', role: 'user', content: text }] }),
        });
        const body = await res.text();
        if (res.status === 429) {
          await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get('retry-after') ?? '5')));
          continue;
        }
        if (res.status !== 200 || !body.includes('RUN_FINISHED'))
          throw new Error(`${res.status} ${body.slice(0, 300)}`);
        const first = body.split('\n').find((l) => l.startsWith('data:'));
        return (JSON.parse(first!.slice(5)) as { threadId: string }).threadId;
      }
    },
    { pid: projectId, text },
  );
}

async function rateDown(conversationId: string): Promise<void> {
  const c = await trpc<{ view: { messages: Array<{ id: string; role: string }> } }>(page, 'agent.conversations.get', {
    projectId,
    conversationId,
  });
  const messageId = c.view.messages.filter((m) => m.role === 'assistant').at(-1)!.id;
  await trpc(
    page,
    'agent.feedback.submit',
    { projectId, conversationId, messageId, value: -1, reasons: ['incomplete'] },
    true,
  );
}

/** Starts an experiment from the dataset page: the estimate first, then Start; waits until it ends. */
async function runExperiment(name: string, toolsOff = ''): Promise<void> {
  const form = page.getByTestId('eval-experiment-form');
  await form.getByTestId('eval-candidate-name').fill(name);
  if (toolsOff) await form.getByTestId('eval-candidate-tools-off').fill(toolsOff);
  await form.getByTestId('eval-estimate-button').click();
  const estimate = form.getByTestId('eval-estimate');
  await estimate.waitFor();
  // The demo model is priced in this setup: the estimate shows a cost before anything runs.
  expect(await estimate.textContent()).toMatch(/about \$\d/);
  expect(Number(await estimate.getAttribute('data-cases'))).toBeGreaterThanOrEqual(1);
  await form.getByTestId('eval-start').click();
  await page.waitForURL(/\/assistant\/review\/experiments\/exp_/);
  await page.locator('[data-testid="eval-experiment"][data-status="COMPLETED"]').waitFor({ timeout: 60_000 });
  const progress = (await page.getByTestId('eval-progress-text').textContent()) ?? '';
  const [, done, total] = /Completed: (\d+) of (\d+) cases/.exec(progress) ?? [];
  expect(Number(done)).toBe(Number(total));
}

beforeAll(async () => {
  browser = await openBrowser();
  page = await newPage(browser);
  await login(page, 'owner@example.com');
  projectId = await findProjectId(page);
  await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
  await rateDown(await answer(question));
  listConversation = await answer(`list open issues for the suite ${token}`);
  await rateDown(listConversation);
});
afterAll(async () => {
  await browser?.close();
});

describe('the evaluation studio', () => {
  let datasetUrl = '';

  it('makes a dataset of rated answers from the review pages, with an expectation', async () => {
    await page.goto(`${BASE_URL}/projects/${projectId}/assistant/review`);
    await page.getByTestId('review-datasets-link').click();
    await page.getByTestId('eval-datasets-page').waitFor();
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached' });
    await expectAccessible(page, 'eval-datasets-light');
    const form = page.getByTestId('eval-new-dataset');
    await form.getByTestId('eval-dataset-name').fill(`Suite ${token}`);
    await form.getByTestId('eval-filter-rating').selectOption('-1');
    await form.getByTestId('eval-filter-tools').fill('get_issue');
    await form.getByTestId('eval-dataset-create').click();
    await page.waitForURL(/\/assistant\/review\/datasets\/ds_/);
    datasetUrl = page.url();
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached' });
    const mine = page.getByTestId('eval-case').filter({ hasText: question });
    await mine.waitFor();
    // The list answer did not use get_issue: it is not in the dataset.
    expect(
      await page
        .getByTestId('eval-case')
        .filter({ hasText: `list open issues for the suite ${token}` })
        .count(),
    ).toBe(0);
    expect(await mine.textContent()).toContain('used get_issue');

    await mine.getByTestId('eval-expectation-kind').selectOption('calls');
    await mine.getByTestId('eval-expectation-tool').fill('get_issue');
    await mine.getByTestId('eval-expectation-text').fill('{"number": 1}');
    await mine.getByTestId('eval-expectation-add').click();
    await mine.getByTestId('eval-expectation-item').filter({ hasText: 'Calls get_issue with {"number":1}' }).waitFor();
    await expectAccessible(page, 'eval-dataset-light');

    // A single turn from the review of its conversation.
    const datasetId = new URL(datasetUrl).pathname.split('/').at(-1)!;
    await page.goto(`${BASE_URL}/projects/${projectId}/assistant/review/${listConversation}`);
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached' });
    const add = page.getByTestId('eval-add-to-dataset');
    await add.getByTestId('eval-add-dataset').selectOption(datasetId);
    await add.getByTestId('eval-add-turn').selectOption({ label: `list open issues for the suite ${token}` });
    await add.getByTestId('eval-add-submit').click();
    await add
      .getByRole('status')
      .filter({ hasText: `1 case added to Suite ${token}.` })
      .waitFor();
    await expectAccessible(page, 'eval-add-to-dataset-light');
    await page.goto(datasetUrl);
    await page
      .getByTestId('eval-case')
      .filter({ hasText: `list open issues for the suite ${token}` })
      .waitFor();
  });

  it('runs experiments with live progress and compares them: turning get_issue off makes the case worse', async () => {
    await page.goto(datasetUrl);
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached' });
    await runExperiment('Current settings');
    const mine = page.getByTestId('eval-case-result').filter({ hasText: question });
    expect(await mine.getByTestId('eval-verdict').getAttribute('data-passed')).toBe('true');
    expect(await mine.locator('[data-testid="eval-tool-call"][data-tool="get_issue"]').getAttribute('data-mode')).toBe(
      'ran',
    );
    await expectAccessible(page, 'eval-experiment-light');

    await page.goto(datasetUrl);
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached' });
    await runExperiment('Without get_issue', 'get_issue');
    const off = page.getByTestId('eval-case-result').filter({ hasText: question });
    expect(await off.getByTestId('eval-verdict').getAttribute('data-passed')).toBe('false');
    expect(await off.getByTestId('eval-expectation').first().getAttribute('data-passed')).toBe('false');

    await page.goto(datasetUrl);
    await page.getByTestId('eval-compare').click();
    await page.getByTestId('eval-comparison-page').waitFor();
    const row = page.getByTestId('eval-comparison-row').filter({ hasText: question });
    expect(await row.getAttribute('data-verdict')).toBe('worse');
    expect(await page.getByTestId('eval-comparison-summary').textContent()).toMatch(
      /Without get_issue against Current settings: \d+ better, [1-9]\d* worse/,
    );
    await row.locator('summary').click();
    await docsImage(page, 'eval-comparison');
    await expectAccessible(page, 'eval-comparison-light');
    await page.emulateMedia({ colorScheme: 'dark' });
    await expectAccessible(page, 'eval-comparison-dark');
    await page.goto(datasetUrl);
    await page.getByTestId('eval-dataset-page').waitFor();
    await expectAccessible(page, 'eval-dataset-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it('fits a 390 px screen', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    const p = await phone.newPage();
    await login(p, 'owner@example.com');
    await p.goto(datasetUrl);
    await p.getByTestId('eval-dataset-page').waitFor();
    await expectAccessible(p, 'eval-dataset-touch-390');
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    await shot(p, 'eval-dataset-touch-390');
    expect(overflow).toBeLessThanOrEqual(1);
    await phone.close();
  });
});
