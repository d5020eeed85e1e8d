// What a user sees when things go wrong or are interrupted, in a real browser against `next start`
// with the demo model: a failed answer asked again in place by Retry (the question once, the
// failures kept as earlier versions, also after a reload), Stop halting the messages queued behind
// the answer until the user sends or clears them, the page behind the panel refreshed when the
// assistant changes an issue, one Usage per turn that went through an approval, and a second tab
// counting a new version another tab asked for. Runs as the demo admin (its own rate-limit budget).
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, openBrowser, shot } from './browser';
import {
  ASSISTANT,
  MESSAGES,
  PANEL,
  ask,
  ensureOpen,
  findProjectId,
  lastAnswerText,
  waitForStreamingAnswer,
  waitForUserMessage,
  waitIdle,
  waitLoaded,
} from './panel';

let browser: Browser;
let page: Page;
let projectId = '';
const panelShot = (p: Page, name: string) => shot(p, name, { fullPage: false });

const userTexts = (p: Page) =>
  p.$$eval(`${MESSAGES}[data-role="user"]`, (els) =>
    els.map((e) => (e.textContent ?? '').replace(/^You said:\s*/, '').trim()),
  );
const positions = (p: Page) =>
  p.$$eval(`${PANEL} [data-testid="assistant-version-position"]`, (els) =>
    els.map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()),
  );
async function waitForPositions(p: Page, expected: string[]): Promise<void> {
  await p
    .waitForFunction(
      (want) =>
        JSON.stringify(
          [
            ...document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-version-position"]'),
          ].map((e) => (e.textContent ?? '').replace(/\s+/g, ' ').trim()),
        ) === JSON.stringify(want),
      expected,
      { timeout: 15_000 },
    )
    .catch(async () => {
      throw new Error(`version positions ${JSON.stringify(await positions(p))}, expected ${JSON.stringify(expected)}`);
    });
}

async function newConversation(p: Page): Promise<void> {
  await ensureOpen(p);
  await p.locator(`${PANEL} [data-testid="assistant-new"]`).click();
}

/** Waits for the newest run's error row and presses its Retry. */
async function retryFailure(p: Page): Promise<void> {
  const error = p.locator(`${PANEL} [data-testid="assistant-error"]`).last();
  await error.waitFor({ timeout: 15_000 });
  await error.getByTestId('assistant-retry').click();
}

beforeAll(async () => {
  browser = await openBrowser();
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL });
  page = await context.newPage();
  await login(page, 'admin@example.com');
  projectId = await findProjectId(page);
  await page.evaluate(() => window.localStorage.clear());
  await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
  await newConversation(page);
});

afterAll(async () => {
  await browser?.close();
});

describe('Retry after a failed answer', () => {
  it('asks the same turn again in place: the question shows once and the failures stay as earlier versions', async () => {
    const question = 'fail 3 times, then answer: how are the issues going';
    await ask(page, question, { wait: false });
    await retryFailure(page);
    // Retry offers no second button beside it that does something else.
    expect(await page.locator(`${PANEL} [data-testid="assistant-regenerate"]`).count()).toBe(0);
    await waitForPositions(page, ['2 / 2']);
    await retryFailure(page);
    await waitForPositions(page, ['3 / 3']);
    await retryFailure(page);
    await waitForPositions(page, ['4 / 4']);
    await waitIdle(page);
    expect(await lastAnswerText(page)).toContain('Answered this time');
    expect(await userTexts(page)).toEqual([question]);
    expect(await page.locator(`${PANEL} [data-testid="assistant-error"]`).count()).toBe(0);
    await panelShot(page, 'retry-in-place');

    // The failed attempts are earlier versions of the turn.
    await page.locator(`${PANEL} [data-testid="assistant-version-previous"]`).click();
    await waitForPositions(page, ['3 / 4']);
    await page.locator(`${PANEL} [data-testid="assistant-error"]`).waitFor();
    await page.locator(`${PANEL} [data-testid="assistant-version-next"]`).click();
    await waitForPositions(page, ['4 / 4']);

    // After a reload: the same, and the model was told the question once.
    await page.reload();
    await page.locator(PANEL).waitFor();
    await waitLoaded(page);
    await waitForPositions(page, ['4 / 4']);
    expect(await userTexts(page)).toEqual([question]);
    await ask(page, 'what did I ask before');
    const recalled = await lastAnswerText(page);
    expect(recalled.split(question.slice(0, 40)).length - 1).toBe(1);
  });

  it('works the same after a reload: the failed turn is asked again, not sent as a new message', async () => {
    await newConversation(page);
    const question = 'fail once, then answer: after a reload';
    await ask(page, question, { wait: false });
    await page.locator(`${PANEL} [data-testid="assistant-error"]`).waitFor({ timeout: 15_000 });
    await page.reload();
    await page.locator(PANEL).waitFor();
    await waitLoaded(page);
    await retryFailure(page);
    await waitForPositions(page, ['2 / 2']);
    await waitIdle(page);
    expect(await userTexts(page)).toEqual([question]);
    expect(await lastAnswerText(page)).toContain('Answered this time');
  });
});

describe('Stop', () => {
  it('halts the queued messages too: they wait until the user sends or clears them', async () => {
    await newConversation(page);
    await ask(page, 'write a long answer', { wait: false });
    await waitForStreamingAnswer(page, 40);
    const input = page.locator(`${PANEL} [data-testid="assistant-input"]`);
    await input.fill('list open issues');
    await input.press('Enter');
    await input.fill('summarize the project');
    await input.press('Enter');
    await page.locator(`${PANEL} [data-testid="assistant-queued"]`).nth(1).waitFor();
    await page.locator(`${PANEL} [data-testid="assistant-stop"]`).click();
    await waitIdle(page);
    const state = page.locator(`${PANEL} [data-testid="assistant-queue-state"]`);
    await page.waitForFunction(
      () =>
        document
          .querySelector('[data-testid="assistant-panel"] [data-testid="assistant-queue-state"]')
          ?.getAttribute('data-state') === 'paused',
    );
    expect(await state.textContent()).toContain('Stopped');
    // Nothing goes out by itself: the stopped answer is still the last one.
    await page.waitForTimeout(1_500);
    expect(await userTexts(page)).toEqual(['write a long answer']);
    expect(await page.locator(`${PANEL} [data-testid="assistant-queued"]`).count()).toBe(2);
    await panelShot(page, 'stop-keeps-queue');

    // Sending the first resumes the queue: both go, in order.
    await page.locator(`${PANEL} [data-testid="assistant-queued-send-now"]`).click();
    await waitForUserMessage(page, 'summarize the project', 30_000);
    await waitIdle(page);
    expect(await userTexts(page)).toEqual(['write a long answer', 'list open issues', 'summarize the project']);

    // Clear all drops a paused queue without sending it.
    await ask(page, 'write a long answer', { wait: false });
    await waitForStreamingAnswer(page, 40);
    await input.fill('list closed issues');
    await input.press('Enter');
    await page.locator(`${PANEL} [data-testid="assistant-queued"]`).waitFor();
    await page.locator(`${PANEL} [data-testid="assistant-stop"]`).click();
    await waitIdle(page);
    await page.locator(`${PANEL} [data-testid="assistant-queue-clear"]`).click();
    await page.locator(`${PANEL} [data-testid="assistant-queue"]`).waitFor({ state: 'detached' });
    expect((await userTexts(page)).at(-1)).toBe('write a long answer');
  });
});

describe('the page behind the panel', () => {
  it('shows an issue the assistant created without a reload; the turn shows one Usage', async () => {
    await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
    // The panel was open: it opens again by itself (a click on the toggle would close it).
    await page.locator(PANEL).waitFor();
    await waitLoaded(page);
    await newConversation(page);
    const count = page.getByTestId('issue-count');
    const before = Number(((await count.textContent()) ?? '').match(/\d+/)?.[0]);
    const title = `Refreshed by the assistant ${Date.now().toString(36)}`;
    await ask(page, `create an issue titled ${title}`);
    await page.locator(`${PANEL} [data-testid="approval-card"] [data-testid="approval-approve"]`).click();
    await page.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await waitIdle(page);
    await page.waitForFunction(
      (n) => document.querySelector('[data-testid="issue-count"]')?.textContent?.startsWith(`${n} `) === true,
      before + 1,
      { timeout: 15_000 },
    );
    // In the issue list (the panel links to it too, from the card of the created issue).
    expect(await page.getByRole('main').getByRole('link', { name: title }).count()).toBe(1);
    // The question and the answer after the approval are one turn: one Usage for both runs.
    expect(await page.locator(`${PANEL} [data-testid="assistant-usage"]`).count()).toBe(1);
    expect(await page.$$eval(ASSISTANT, (els) => els.length)).toBeGreaterThanOrEqual(2);
  });
});

describe('two tabs', () => {
  it('a second tab following a regeneration started in the first counts the new version at once', async () => {
    await newConversation(page);
    await ask(page, 'list open issues');
    const second = await page.context().newPage();
    await second.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await second.locator(PANEL).waitFor();
    await waitLoaded(second);
    await second.locator(`${MESSAGES}[data-role="assistant"]`).first().waitFor();
    await page.locator(`${PANEL} [data-testid="assistant-regenerate"]`).click();
    await waitIdle(page);
    await waitForPositions(page, ['2 / 2']);
    await waitForPositions(second, ['2 / 2']);
    expect(await userTexts(second)).toEqual(['list open issues']);
    await second.close();
  });
});
