// Runs that outlive their connection, in a real browser against `next start` with the offline demo
// model: a reload mid-answer continues the answer; a second tab shows the same live answer and
// stops it; a message typed while an answer streams is queued (edited, removed) and sent after;
// an approval answered in one tab is decided in the other; Approve all / Reject all (by click and
// by keyboard) on a batch; and drafts of one user are gone for the next one on the same browser.
// Runs as the admin (its own rate-limit budget) and the member and viewer.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, openBrowser, shot } from './browser';
import {
  ASSISTANT,
  PANEL,
  ask,
  cardStates,
  currentConversation,
  ensureOpen,
  findProjectId,
  lastAnswerText,
  messages,
  waitForStreamingAnswer,
  waitForUserMessage,
  waitIdle,
  waitLoaded,
} from './panel';

const LONG_ANSWER_LINE = 'A good issue tracker keeps every piece of work visible';

let browser: Browser;
let context: BrowserContext;
let first: Page;
let second: Page;
let projectId = '';

const issuesPage = () => `${BASE_URL}/projects/${projectId}/issues`;
const occurrences = (text: string, part: string) => text.split(part).length - 1;

beforeAll(async () => {
  browser = await openBrowser();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL });
  first = await context.newPage();
  await login(first, 'admin@example.com');
  projectId = await findProjectId(first);
  await first.evaluate(() => window.localStorage.clear());
  await first.goto(issuesPage());
  await ensureOpen(first);
  await waitLoaded(first);
});

afterAll(async () => {
  await browser?.close();
});

describe('runs that outlive the connection', () => {
  it('a reload mid-answer reattaches quietly and the answer continues to its end', async () => {
    await ask(first, 'write a long answer', { wait: false });
    await waitForStreamingAnswer(first, 120);
    const conversation = await currentConversation(first);
    expect(conversation).not.toBe('');

    await first.reload();
    await first.locator(PANEL).waitFor();
    expect(await currentConversation(first)).toBe(conversation);
    // The panel follows the same run again (Stop is there while it answers) ...
    await first.locator(`${PANEL} [data-testid="assistant-stop"]`).waitFor({ timeout: 15_000 });
    await waitForStreamingAnswer(first, 200);
    await shot(first, 'assistant-reattached-after-reload', { fullPage: false });
    // ... to the end, with every paragraph once: nothing lost, nothing twice.
    await waitIdle(first, 60_000);
    const answer = await lastAnswerText(first);
    expect(occurrences(answer, LONG_ANSWER_LINE)).toBe(12);
    expect(await first.locator(`${ASSISTANT}`).last().getAttribute('data-streaming')).toBe('false');
    expect(await first.locator(`${PANEL} [data-run-status]`).last().getAttribute('data-run-status')).toBe('completed');
    expect(await first.locator(`${PANEL} [data-testid="assistant-stopped"]`).count()).toBe(0);
  });

  it('a second tab shows the same live answer, and Stop there stops it in the first tab too', async () => {
    second = await context.newPage();
    await second.goto(issuesPage());
    await second.locator(PANEL).waitFor();
    await waitLoaded(second);
    expect(await currentConversation(second)).toBe(await currentConversation(first));

    await ask(first, 'write a long answer', { wait: false });
    await waitForUserMessage(second, 'write a long answer');
    await waitForStreamingAnswer(second, 120);
    await shot(second, 'assistant-second-tab-live', { fullPage: false });

    await second.locator(`${PANEL} [data-testid="assistant-stop"]`).click();
    await first.locator(`${PANEL} [data-testid="assistant-stopped"]`).last().waitFor({ timeout: 15_000 });
    await second.locator(`${PANEL} [data-testid="assistant-stopped"]`).last().waitFor({ timeout: 15_000 });
    await waitIdle(first);
    await waitIdle(second);
    const stopped = await lastAnswerText(first);
    expect(occurrences(stopped, LONG_ANSWER_LINE)).toBeLessThan(12);
    // Both tabs show the same conversation, and a reload agrees with them.
    expect(await messages(second)).toEqual(await messages(first));
    await first.reload();
    await first.locator(PANEL).waitFor();
    await waitLoaded(first);
    await first.waitForFunction(
      (n) => document.querySelectorAll('[data-testid="assistant-panel"] [data-testid="assistant-message"]').length >= n,
      (await messages(second)).length,
    );
    expect(await messages(first)).toEqual(await messages(second));
  });

  it('queues a message typed while the answer streams (edit, remove), holds it after Stop and sends it from the queue', async () => {
    await ask(first, 'write a long answer', { wait: false });
    await waitForStreamingAnswer(first, 80);
    const input = first.locator(`${PANEL} [data-testid="assistant-input"]`);
    await input.fill('list open issues');
    await input.press('Enter');
    await input.fill('remove me');
    await first.locator(`${PANEL} [data-testid="assistant-queue-send"]`).click();
    const queued = first.locator(`${PANEL} [data-testid="assistant-queued"]`);
    await first.waitForFunction(() => document.querySelectorAll('[data-testid="assistant-queued"]').length === 2);
    expect(await first.locator(`${PANEL} [data-testid="assistant-announcement"]`).allTextContents()).toContain(
      'Message queued: it is sent when the answer ends.',
    );
    await shot(first, 'assistant-queued', { fullPage: false });

    await queued.nth(1).getByTestId('assistant-queued-remove').click();
    await first.waitForFunction(() => document.querySelectorAll('[data-testid="assistant-queued"]').length === 1);
    // Edited by keyboard: Edit, change the text, Enter saves.
    await queued.first().getByTestId('assistant-queued-edit').focus();
    await first.keyboard.press('Enter');
    const editor = queued.first().getByTestId('assistant-queued-input');
    await editor.waitFor();
    await editor.fill('list closed issues');
    await editor.press('Enter');
    await first.waitForFunction(
      () => document.querySelector('[data-testid="assistant-queued-text"]')?.textContent === 'list closed issues',
    );
    // Still streaming: nothing was sent yet.
    expect(await first.locator(`${PANEL} [data-testid="assistant-stop"]`).count()).toBe(1);

    // Stop halts the queue too: the message waits until it is sent from the queue.
    await first.locator(`${PANEL} [data-testid="assistant-stop"]`).click();
    await first.locator(`${PANEL} [data-testid="assistant-queue-state"][data-state="paused"]`).waitFor();
    await first.locator(`${PANEL} [data-testid="assistant-queued-send-now"]`).click();
    await waitForUserMessage(first, 'list closed issues', 20_000);
    await waitIdle(first);
    expect(await queued.count()).toBe(0);
    expect(
      await first
        .locator(`${PANEL} [data-testid="tool-card"][data-tool="list_issues"]`)
        .last()
        .getAttribute('data-status'),
    ).toBe('done');
    expect((await messages(first)).filter((m) => m.startsWith('user:') && m.includes('remove me'))).toEqual([]);
  });

  it('a pending approval shows in both tabs and, answered in one, becomes decided in the other', async () => {
    await ask(first, 'create an issue titled Answered in the other tab');
    const open = `${PANEL} [data-testid="approval-card"][data-tool="create_issue"][data-state="open"]`;
    await first.locator(open).waitFor();
    await second.locator(open).waitFor({ timeout: 15_000 });

    const card = second.locator(open);
    await card.getByTestId('approval-approve').click();
    await second.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await waitIdle(second);
    const decided = `${PANEL} [data-testid="approval-card"][data-tool="create_issue"][data-state="approved"]`;
    await first.locator(decided).last().waitFor({ timeout: 15_000 });
    await waitIdle(first);
    expect(await first.locator(open).count()).toBe(0);
    expect(await first.locator(`${PANEL} [data-testid="approval-submit"]`).count()).toBe(0);
    expect(await cardStates(first)).toEqual(await cardStates(second));
    await shot(first, 'assistant-approval-decided-elsewhere', { fullPage: false });
  });

  it('Reject all by keyboard and Approve all by click answer every card of a batch', async () => {
    await second.close();
    // Reject all with one note, by keyboard: Alt+Shift+R while a card has focus.
    await ask(first, 'close issues 4 and 5');
    const openCards = first.locator(
      `${PANEL} [data-testid="approval-card"][data-tool="close_issue"][data-state="open"]`,
    );
    await first.waitForFunction(
      () => document.querySelectorAll('[data-testid="approval-card"][data-state="open"]').length === 2,
    );
    await first.locator(`${PANEL} [data-testid="approval-reject-all-note"]`).fill('Keep them open for now');
    await shot(first, 'assistant-approve-all', { fullPage: false });
    await openCards.first().getByTestId('approval-feedback').focus();
    await first.keyboard.press('Alt+Shift+R');
    await waitIdle(first);
    await first.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="approval-card"][data-tool="close_issue"]')]
        .slice(-2)
        .every((c) => c.getAttribute('data-state') === 'rejected'),
    );
    const rejected = first.locator(
      `${PANEL} [data-testid="approval-card"][data-tool="close_issue"][data-state="rejected"]`,
    );
    expect(await rejected.last().textContent()).toContain('Keep them open for now');
    expect(await rejected.nth(-2).textContent()).toContain('Keep them open for now');

    // Approve all: reachable with Tab from the last card's controls, one click.
    await ask(first, 'close issues 4 and 5');
    await first.waitForFunction(
      () => document.querySelectorAll('[data-testid="approval-card"][data-state="open"]').length === 2,
    );
    await openCards.last().getByTestId('approval-reject').focus();
    await first.keyboard.press('Tab');
    // The card's "Always allow" checkbox comes first (the project lets this tool ask), then Approve all.
    expect(
      await first.evaluate(() => document.activeElement?.closest('[data-testid="approval-always"]') !== null),
    ).toBe(true);
    await first.keyboard.press('Tab');
    expect(await first.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe(
      'approval-approve-all',
    );
    await first.keyboard.press('Enter');
    await waitIdle(first);
    await first.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="approval-card"][data-tool="close_issue"]')]
        .slice(-2)
        .every((c) => c.getAttribute('data-state') === 'approved'),
    );
    const tools = first.locator(`${PANEL} [data-testid="tool-card"][data-tool="close_issue"]`);
    expect(await tools.nth(-1).getAttribute('data-status')).toBe('done');
    expect(await tools.nth(-2).getAttribute('data-status')).toBe('done');
    expect(await lastAnswerText(first)).toMatch(/Closed issue \*{0,2}#4|Closed issue #4/);
  });
});

describe('browser storage per user', () => {
  it('drafts of one user are gone after sign-out; the next user on the same browser starts clean', async () => {
    const shared = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL });
    const page = await shared.newPage();
    await login(page, 'member@example.com');
    await page.goto(issuesPage());
    await ensureOpen(page);
    await waitLoaded(page);
    await page.locator(`${PANEL} [data-testid="assistant-input"]`).fill('member secret draft');
    await page.waitForFunction(() => Object.values({ ...window.localStorage }).includes('member secret draft'));
    const keys = await page.evaluate(() =>
      Object.keys(window.localStorage).filter((k) => k.startsWith('in-app-agent:')),
    );
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.every((k) => k.startsWith('in-app-agent:u:'))).toBe(true);

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL(/\/login/);
    expect(
      await page.evaluate(() => Object.keys(window.localStorage).filter((k) => k.startsWith('in-app-agent:'))),
    ).toEqual([]);

    await login(page, 'viewer@example.com');
    await page.goto(issuesPage());
    await ensureOpen(page);
    await waitLoaded(page);
    expect(await page.locator(`${PANEL} [data-testid="assistant-input"]`).inputValue()).toBe('');
    expect(await page.evaluate(() => JSON.stringify({ ...window.localStorage }))).not.toContain('member secret draft');
    await shared.close();
  });
});
