// Feedback as data in a real browser against `next start` with the demo data and the offline demo
// model: a thumbs down with reasons in the panel (kept across a reload), the review list filtered
// by a reason, and the JSONL export downloaded from the review page and parsed line by line.
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FeedbackExportLineSchema } from '@/features/in-app-agent/schema';
import { BASE_URL, login, newPage, openBrowser, shot } from './browser';

const PANEL = '[data-testid="assistant-panel"]';
const ASSISTANT = `${PANEL} [data-testid="assistant-message"][data-role="assistant"]`;

let browser: Browser;
let projectId = '';
let conversationId = '';
let messageId = '';
let answerText = '';

async function acmeProjectId(page: Page): Promise<string> {
  await page.goto(`${BASE_URL}/projects`);
  const href = await page.getByRole('link', { name: 'Acme Web', exact: true }).getAttribute('href');
  const m = /^\/projects\/([^/?#]+)$/.exec(href ?? '');
  if (!m) throw new Error(`No Acme Web link on /projects (href ${href})`);
  return m[1]!;
}

beforeAll(async () => {
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('a thumbs down with reasons', () => {
  it('is saved from the panel with its reasons and comment, and shown again after a reload', async () => {
    const owner = await newPage(browser);
    await login(owner, 'owner@example.com');
    projectId = await acmeProjectId(owner);
    await owner.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await owner.evaluate(() => window.localStorage.clear());
    await owner.getByTestId('assistant-toggle').click();
    const input = owner.locator(`${PANEL} [data-testid="assistant-input"]`);
    await input.fill('list open issues');
    await input.press('Enter');
    await owner.locator(`${PANEL} [data-testid="assistant-send"]`).waitFor({ state: 'visible', timeout: 30_000 });

    const answer = owner
      .locator(ASSISTANT)
      .filter({ has: owner.getByTestId('feedback') })
      .last();
    await answer.waitFor();
    messageId = (await answer.getAttribute('data-message-id')) ?? '';
    expect(messageId).not.toBe('');
    conversationId = (await owner.locator(PANEL).getAttribute('data-conversation-id')) ?? '';
    expect(conversationId).not.toBe('');

    await answer.getByTestId('feedback-down').click();
    const choices = answer.getByTestId('feedback-reason-choices');
    await choices.waitFor();
    // Labelled checkboxes, reachable by their names; ticked with the keyboard for one of them.
    await choices.getByRole('checkbox', { name: 'Wrong' }).check();
    await choices.getByRole('checkbox', { name: 'Did not follow instructions' }).focus();
    await owner.keyboard.press('Space');
    await answer.getByTestId('feedback-comment').fill('It listed a closed issue');
    await shot(owner, 'feedback-reasons-form', { fullPage: false });
    await answer.getByTestId('feedback-comment-submit').click();
    const reasons = answer.getByTestId('feedback-reasons');
    await reasons.waitFor();
    expect(await reasons.textContent()).toBe('Reasons: Wrong, Did not follow instructions');
    await answer.getByText('Your comment: It listed a closed issue').waitFor();
    expect(await answer.getByTestId('feedback-down').getAttribute('aria-pressed')).toBe('true');

    await owner.reload();
    await owner.locator(PANEL).waitFor();
    const again = owner.locator(`${ASSISTANT}[data-message-id="${messageId}"]`);
    await again.getByTestId('feedback-reasons').waitFor();
    expect(await again.getByTestId('feedback-reasons').getAttribute('data-reasons')).toBe(
      'wrong did_not_follow_instructions',
    );
    answerText = (await again.textContent()) ?? '';
    expect(answerText).toMatch(/Here (is 1 issue|are \d+ issues):/);
    await shot(owner, 'feedback-reasons-saved', { fullPage: false });
    await owner.close();
  });
});

describe('the review page', () => {
  it('filters by a reason, shows the reasons, and downloads the JSONL export, which parses line by line', async () => {
    const admin = await newPage(browser);
    await login(admin, 'admin@example.com');
    const base = `${BASE_URL}/projects/${projectId}/assistant/review`;
    await admin.goto(base);
    await admin.getByTestId('review-reason-wrong').click();
    await admin.waitForURL(/reason=wrong/);
    const rows = admin.getByTestId('review-row');
    await rows.first().waitFor();
    expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-conversation-id')))).toContain(
      conversationId,
    );
    const row = admin.locator(`[data-testid="review-row"][data-conversation-id="${conversationId}"]`);
    expect(await row.getByTestId('review-reasons').textContent()).toBe('Wrong, Did not follow instructions');
    expect(await admin.getByTestId('review-reason-wrong').getAttribute('aria-current')).toBe('page');
    // A reason nobody gave lists nothing.
    await admin.getByTestId('review-reason-unsafe').click();
    await admin.waitForURL(/reason=unsafe/);
    await admin.getByText('No conversations match.').waitFor();
    await shot(admin, 'review-filtered-by-reason');

    // The export form: thumbs down for "Wrong", any date.
    await admin.getByTestId('feedback-export-reason').selectOption('wrong');
    await admin.getByLabel('Rating').selectOption('-1');
    const [download] = await Promise.all([
      admin.waitForEvent('download'),
      admin.getByTestId('feedback-export-submit').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^assistant-feedback-.+\.jsonl$/);
    const file = await download.path();
    const text = readFileSync(file, 'utf8');
    const lines = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => FeedbackExportLineSchema.parse(JSON.parse(l)));
    expect(lines.length).toBeGreaterThanOrEqual(1);
    expect(lines.every((l) => l.rating === -1 && l.reasons.includes('wrong'))).toBe(true);
    const mine = lines.find((l) => l.messageId === messageId);
    expect(mine).toMatchObject({
      conversationId,
      reasons: ['wrong', 'did_not_follow_instructions'],
      comment: 'It listed a closed issue',
      model: { provider: 'demo' },
    });
    expect(mine!.messages[0]).toEqual({ role: 'user', content: 'list open issues' });
    // It ends with the rated answer, after the tool call that fetched the issues and its result.
    const last = mine!.messages.at(-1)!;
    expect(last.role).toBe('assistant');
    const firstLine = last.content.split('\n')[0]!;
    expect(firstLine).toMatch(/^Here (is 1 issue|are \d+ issues):$/);
    expect(answerText).toContain(firstLine);
    const calls = mine!.messages.flatMap((m) => (m.role === 'assistant' ? (m.tool_calls ?? []) : []));
    expect(calls.map((c) => c.function.name)).toEqual(['list_issues']);
    expect(
      mine!.messages.filter((m) => m.role === 'tool').map((m) => (m.role === 'tool' ? m.tool_call_id : '')),
    ).toEqual([calls[0]!.id]);
    // The page stayed where it was: the download did not navigate away.
    expect(admin.url()).toContain('/assistant/review');

    // A date range the wrong way round is caught in the page, before any request.
    await admin.getByTestId('feedback-export-from').fill('2026-12-31');
    await admin.getByTestId('feedback-export-to').fill('2026-01-01');
    await admin.getByTestId('feedback-export-submit').click();
    await admin.getByRole('alert').filter({ hasText: 'The start date is after the end date.' }).waitFor();
    await admin.close();
  });
});
