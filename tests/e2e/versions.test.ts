// Versions of a turn in a real browser against `next start` with the demo model: edit the last
// message (Escape cancels, Enter saves) and get a new answer counted "2 / 2", regenerate the last
// answer, go back to the first version with the arrow, reload and find the choice kept, and ask
// the model what it was told (only the shown branch). Then a long conversation (written by
// tests/e2e/fixtures.ts) opens at its newest page and "Show earlier messages" loads the rest
// without moving what the user was reading; and each answer's usage (tokens, cost) is one keypress
// away. Runs as the demo member (its own rate-limit budget). Screenshots in test-artifacts/screenshots.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@/features/in-app-agent/constants';
import { BASE_URL, login, newPage, openBrowser, shot } from './browser';
import { LONG_CONVERSATION as LONG } from './fixture-data';
import {
  ASSISTANT,
  MESSAGES,
  PANEL,
  ask,
  ensureOpen,
  findProjectId,
  lastAnswerText,
  waitForUserMessage,
  waitIdle,
  waitLoaded,
} from './panel';

let browser: Browser;
let page: Page;
let projectId = '';

const panelShot = (name: string) => shot(page, name, { fullPage: false });

/** The text of every user message shown, in order. */
const userTexts = () =>
  page.$$eval(`${MESSAGES}[data-role="user"]`, (els) =>
    els.map((e) => (e.textContent ?? '').replace(/^You said:\s*/, '').trim()),
  );

/** "2 / 2" of every version switcher, with the run it belongs to. */
const positions = () =>
  page.$$eval(`${PANEL} [data-testid="assistant-versions"]`, (els) =>
    els.map((e) =>
      (e.querySelector('[data-testid="assistant-version-position"]')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
    ),
  );

async function waitForPositions(expected: string[]): Promise<void> {
  await page
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
      throw new Error(`version positions ${JSON.stringify(await positions())}, expected ${JSON.stringify(expected)}`);
    });
}

beforeAll(async () => {
  browser = await openBrowser();
  page = await newPage(browser);
  await login(page, LONG.owner);
  projectId = await findProjectId(page);
  await page.evaluate(() => window.localStorage.clear());
  await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
  await ensureOpen(page);
  await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
});

afterAll(async () => {
  await browser?.close();
});

describe('versions of a turn', () => {
  let firstAnswer = '';

  it('edits the last message in place (Escape cancels, Enter saves): a new answer, counted 2 / 2', async () => {
    await ask(page, 'list open issues');
    firstAnswer = await lastAnswerText(page);
    expect(firstAnswer).toMatch(/#\d+/);

    const edit = page.locator(`${PANEL} [data-testid="assistant-edit-message"]`);
    expect(await edit.count()).toBe(1);
    await edit.click();
    const field = page.locator(`${PANEL} [data-testid="assistant-edit-input"]`);
    expect(await field.inputValue()).toBe('list open issues');
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'assistant-edit-input');
    await field.fill('something else');
    await field.press('Escape');
    // Escape leaves the editor (not the panel), and nothing was sent.
    await field.waitFor({ state: 'detached' });
    expect(await page.locator(PANEL).count()).toBe(1);
    expect(await userTexts()).toEqual(['list open issues']);
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'assistant-edit-message');

    await edit.click();
    await field.fill('list closed issues');
    await panelShot('versions-editing');
    await field.press('Enter');
    await waitForUserMessage(page, 'list closed issues');
    await waitIdle(page);
    expect(await userTexts()).toEqual(['list closed issues']);
    const edited = await lastAnswerText(page);
    expect(edited).not.toBe(firstAnswer);
    await waitForPositions(['2 / 2']);
    await panelShot('versions-edited');
  });

  it('regenerates the last answer: the answer gets 2 / 2, the earlier turn keeps its own', async () => {
    await ask(page, 'summarize the project');
    const before = await page.$$eval(ASSISTANT, (els) => els.length);
    const regenerate = page.locator(`${PANEL} [data-testid="assistant-regenerate"]`);
    expect(await regenerate.count()).toBe(1);
    await regenerate.click();
    // While it answers, nothing offers another version.
    await page
      .locator(`${PANEL} [data-testid="assistant-stop"]`)
      .waitFor({ timeout: 10_000 })
      .catch(() => undefined);
    await waitIdle(page);
    await waitForPositions(['2 / 2', '2 / 2']);
    expect(await page.$$eval(ASSISTANT, (els) => els.length)).toBe(before);
    expect(await userTexts()).toEqual(['list closed issues', 'summarize the project']);
    expect(await lastAnswerText(page)).toContain('Project summary');
    await panelShot('versions-regenerated');
  });

  it('goes back to the first version with the arrow; the choice holds after a reload', async () => {
    const switcher = page.locator(`${PANEL} [data-testid="assistant-versions"]`).first();
    const previous = switcher.getByRole('button', { name: 'Previous version' });
    await previous.click();
    await waitForPositions(['1 / 2']);
    // The first version, and what followed it then (nothing: the summary followed the edit).
    expect(await userTexts()).toEqual(['list open issues']);
    expect(await lastAnswerText(page)).toBe(firstAnswer);
    const announced = page.locator(`${PANEL} [data-testid="assistant-announcement"]`).last();
    expect(await announced.textContent()).toBe('Showing version 1 of 2.');
    // The next arrow leads back to the edit.
    const next = switcher.getByRole('button', { name: 'Next version' });
    expect(await next.isEnabled()).toBe(true);
    expect(await previous.isDisabled()).toBe(true);

    await page.reload();
    // The panel was open, so it opens again by itself (a click on the toggle would close it).
    await page.locator(PANEL).waitFor();
    await waitLoaded(page);
    await page.locator(`${MESSAGES}[data-role="user"]`).first().waitFor();
    expect(await userTexts()).toEqual(['list open issues']);
    await waitForPositions(['1 / 2']);
    expect(await lastAnswerText(page)).toBe(firstAnswer);
    await panelShot('versions-first-after-reload');
  });

  it("the model's history holds only the branch shown", async () => {
    await ask(page, 'what did I ask before');
    const answer = await lastAnswerText(page);
    expect(answer).toContain('list open issues');
    expect(answer).not.toContain('list closed issues');
    expect(answer).not.toContain('summarize the project');
  });

  it("shows each answer's tokens and cost, one keypress away", async () => {
    const usage = page.locator(`${PANEL} [data-testid="assistant-usage"]`).last();
    const summary = usage.locator('summary');
    await summary.focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-usage"]')]
          .at(-1)
          ?.hasAttribute('open') === true,
    );
    const line = (await usage.locator('[data-testid="assistant-usage-line"]').textContent()) ?? '';
    // The demo model counts tokens; the e2e server is priced (global-setup), so a cost is known.
    expect(line).toMatch(/^[\d,]+ in · [\d,]+ out( · \$[\d,]+\.\d{2,6})?$/);
    if (!process.env.E2E_BASE_URL) expect(line).toMatch(/ · \$0\.\d{2,6}$/);
    await panelShot('versions-usage');
  });
});

describe('a long conversation', () => {
  // The fixture is written by the global setup; an app already running (E2E_BASE_URL) has none.
  const withFixtures = it.skipIf(Boolean(process.env.E2E_BASE_URL));
  withFixtures('opens at its newest page; "Show earlier messages" loads the rest and keeps the place', async () => {
    await page.locator(`${PANEL} [data-testid="assistant-history"]`).click();
    const item = page.locator(`${PANEL} [data-testid="conversation-item"][data-conversation-id="${LONG.id}"] button`);
    await item.first().waitFor();
    await item.first().click();
    await waitLoaded(page);
    const firstShown = LONG.turns - LIMITS.replayPageRuns + 1;
    await page.locator(`${MESSAGES}[data-role="user"]`).first().waitFor();
    let users = await userTexts();
    expect(users[0]).toBe(LONG.question(firstShown));
    expect(users.at(-1)).toBe(LONG.question(LONG.turns));
    expect(users).toHaveLength(LIMITS.replayPageRuns);

    const earlier = page.locator(`${PANEL} [data-testid="assistant-earlier"]`);
    await earlier.scrollIntoViewIfNeeded();
    expect(await earlier.textContent()).toBe('Show earlier messages');
    const reading = page
      .locator(`${MESSAGES}[data-role="user"]`)
      .filter({ hasText: new RegExp(`${LONG.question(firstShown)}$`) });
    const scroller = page.locator(`${PANEL} [data-testid="assistant-scroll"]`);
    const offset = async () => {
      const [a, b] = await Promise.all([reading.boundingBox(), scroller.boundingBox()]);
      return Math.round((a?.y ?? 0) - (b?.y ?? 0));
    };
    const before = await offset();
    await panelShot('versions-long-newest-page');
    await earlier.click();
    await page.waitForFunction(
      (n) =>
        document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-message"][data-role="user"]')
          .length === n,
      LONG.turns,
      { timeout: 15_000 },
    );
    users = await userTexts();
    expect(users).toHaveLength(LONG.turns);
    expect(users.slice(0, 2)).toEqual([LONG.question(1), LONG.question(2)]);
    // Everything is shown: no button any more, and the message the user was reading did not move.
    await earlier.waitFor({ state: 'detached' });
    expect(Math.abs((await offset()) - before)).toBeLessThanOrEqual(2);
    expect(await scroller.evaluate((el) => el.scrollTop)).toBeGreaterThan(0);
    await panelShot('versions-long-earlier-loaded');
  });
});
