// Feedback as data in a real browser against `next start` with the demo data and the offline demo
// model: a thumbs down saved only when its form is sent (a cancelled one saves nothing and leaves a
// thumbs up as it was), with reasons in the panel (kept across a reload), the review list filtered
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

/** The ratings the server holds for the signed-in user's conversation, by message id (tRPC, the page's session). */
async function savedFeedback(
  page: Page,
  conversation: string,
): Promise<Record<string, { value: number; comment: string | null; reasons: string[] } | undefined>> {
  const input = encodeURIComponent(JSON.stringify({ json: { projectId, conversationId: conversation } }));
  const res = await page.request.get(`${BASE_URL}/api/trpc/agent.conversations.get?input=${input}`);
  expect(res.status()).toBe(200);
  return ((await res.json()) as { result: { data: { json: { feedback: never } } } }).result.data.json.feedback;
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

    // Every rating the page sends (the feedback mutation), and what the server holds for the answer.
    const sent: string[] = [];
    owner.on('request', (r) => {
      if (r.url().includes('/api/trpc/agent.feedback')) sent.push(r.url());
    });
    const savedRating = async () => {
      const feedback = await savedFeedback(owner, conversationId);
      return feedback[messageId]?.value ?? null;
    };

    // A thumbs down opens the form and saves nothing; cancelling it leaves no rating.
    const down = answer.getByTestId('feedback-down');
    await down.click();
    const choices = answer.getByTestId('feedback-reason-choices');
    await choices.waitFor();
    expect(await down.getAttribute('aria-pressed')).toBe('false');
    await choices.getByRole('checkbox', { name: 'Slow' }).check();
    await answer.getByTestId('feedback-cancel').click();
    await choices.waitFor({ state: 'detached' });
    expect(await answer.getByTestId('feedback').getAttribute('data-value')).toBe('');
    expect(sent).toEqual([]);
    expect(await savedRating()).toBeNull();

    // A thumbs up is saved at once; a thumbs down opened and cancelled afterwards leaves it as it was.
    await answer.getByTestId('feedback-up').click();
    await answer.getByText('Rated helpful').waitFor();
    await expect.poll(savedRating).toBe(1);
    const afterUp = sent.length;
    expect(afterUp).toBe(1);
    await down.click();
    await choices.waitFor();
    // Nothing the cancelled form ticked comes back.
    expect(await choices.getByRole('checkbox', { name: 'Slow' }).isChecked()).toBe(false);
    expect(await answer.getByTestId('feedback-up').getAttribute('aria-pressed')).toBe('true');
    await answer.getByTestId('feedback-cancel').click();
    await choices.waitFor({ state: 'detached' });
    expect(sent).toHaveLength(afterUp);
    expect(await savedRating()).toBe(1);
    expect(await answer.getByTestId('feedback-up').getAttribute('aria-pressed')).toBe('true');

    // Sent with its reasons and comment, the thumbs down replaces the thumbs up.
    await down.click();
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
    expect(sent).toHaveLength(afterUp + 1);
    expect((await savedFeedback(owner, conversationId))[messageId]).toMatchObject({
      value: -1,
      comment: 'It listed a closed issue',
      reasons: ['wrong', 'did_not_follow_instructions'],
    });

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
