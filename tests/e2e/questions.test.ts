// The assistant asks back (`ask_user`) in a real browser against `next start` with the demo data and
// the offline demo model: "assign issue 2" names nobody, so the assistant lists the members and asks
// whom, as a form of radio buttons labelled by their names; the user answers with the keyboard only
// (a Send with nothing chosen is refused on the card and announced), and the run goes on to the
// assignment. "create an issue" asks for a title and a priority: what was typed survives a reload,
// and Decline ends it without creating anything. axe scans the open form, with its errors shown,
// and the answered card, in the light theme, the dark theme and on a 390 px touch screen.
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe';
import { BASE_URL, login, openBrowser, shot } from './browser';
import { ASSISTANT, PANEL, ask, ensureOpen, findProjectId, waitIdle, waitLoaded } from './panel';

let browser: Browser;
let projectId = '';

const CARD = `${PANEL} [data-testid="question-card"]`;
const OPEN_CARD = `${CARD}[data-state="open"]`;

async function hydrated(page: Page): Promise<void> {
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
}

/** A fresh conversation of `email` in the panel, on the issues page. */
async function freshPanel(page: Page, email: string): Promise<void> {
  await login(page, email);
  projectId ||= await findProjectId(page);
  await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
  await hydrated(page);
  await ensureOpen(page);
  await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
}

/** The text of the newest answer. */
async function lastAnswer(page: Page): Promise<string> {
  return (await page.locator(ASSISTANT).last().textContent()) ?? '';
}

/** Presses Tab until the focused element matches `selector` (at most `max` times). */
async function tabTo(page: Page, selector: string, max = 150): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`Tab never reached ${selector}`);
}

beforeAll(async () => {
  browser = await openBrowser();
});

afterAll(async () => {
  await browser?.close();
});

describe('a question from the assistant', () => {
  let ctx: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL });
    page = await ctx.newPage();
    await freshPanel(page, 'member@example.com');
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('asks whom to assign, is answered by keyboard, and the run goes on to the assignment', async () => {
    await ask(page, 'assign issue 2');
    const card = page.locator(OPEN_CARD);
    await card.waitFor();
    expect(await card.getByTestId('question-message').textContent()).toBe('Who should I assign issue #2 to?');
    // One radio button per member, labelled by the member; the group by the field's title.
    const group = card.getByRole('group', { name: /Assignee/ });
    expect(await group.getByRole('radio').count()).toBe(4);
    await group.getByRole('radio', { name: 'Adam Admin (admin@example.com)' }).waitFor();
    // No ask_user tool card: the question card stands for the call.
    expect(await page.locator(`${PANEL} [data-testid="tool-card"][data-tool="ask_user"]`).count()).toBe(0);

    // Send with nothing chosen: refused on the card, announced, and the focus goes to the field.
    await tabTo(page, `${OPEN_CARD} [data-testid="question-send"]`);
    await page.keyboard.press('Enter');
    const alert = card.getByRole('alert');
    await expect.poll(() => alert.textContent()).toContain('Assignee (This is required.)');
    expect(await page.evaluate(() => (document.activeElement as HTMLInputElement | null)?.type)).toBe('radio');
    await shot(page, 'question-required');

    // Arrow keys choose within the group (the second member), Tab reaches Send, Enter sends.
    await page.keyboard.press('ArrowDown');
    expect(await group.getByRole('radio', { name: 'Adam Admin (admin@example.com)' }).isChecked()).toBe(true);
    await tabTo(page, `${OPEN_CARD} [data-testid="question-send"]`);
    await page.keyboard.press('Enter');

    // The run continues: the assignment waits for approval, with the member chosen.
    const approval = page.locator(`${PANEL} [data-testid="approval-card"][data-state="open"]`);
    await approval.waitFor();
    expect(await approval.getAttribute('data-tool')).toBe('assign_issue');
    const answered = page.locator(`${CARD}[data-state="answered"]`);
    await answered.waitFor();
    expect(await answered.locator('[data-testid="question-answer"][data-field="assignee"]').textContent()).toBe(
      'Adam Admin (admin@example.com)',
    );
    await approval.getByTestId('approval-approve').click();
    await page.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await waitIdle(page);
    await expect.poll(() => lastAnswer(page)).toContain('to Adam Admin');
    await shot(page, 'question-answered');

    // After a reload the answered question is still there, with its answer.
    await page.reload();
    await hydrated(page);
    await waitLoaded(page);
    await page.locator(`${CARD}[data-state="answered"]`).waitFor();
  });

  it('keeps a half-filled form across a reload, and Decline ends the request', async () => {
    await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
    await ask(page, 'create an issue');
    const card = page.locator(OPEN_CARD);
    await card.waitFor();
    const title = card.getByLabel('Title', { exact: false });
    expect(await title.getAttribute('aria-describedby')).toBeTruthy();
    // The default choice is preselected; the hint states the limits.
    expect(await card.getByRole('radio', { name: 'Medium' }).isChecked()).toBe(true);
    await expect.poll(() => card.textContent()).toContain('3 to 200 characters.');
    // A too short title is refused before anything is sent.
    await title.fill('ab');
    await card.getByTestId('question-send').click();
    await expect.poll(() => card.getByRole('alert').textContent()).toContain('Title (Enter at least 3 characters');
    expect(await title.getAttribute('aria-invalid')).toBe('true');

    await title.fill('Broken link in the footer');
    await card.getByRole('radio', { name: 'High' }).check();
    await page.reload();
    await hydrated(page);
    await waitLoaded(page);
    const again = page.locator(OPEN_CARD);
    await again.waitFor();
    expect(await again.getByLabel('Title', { exact: false }).inputValue()).toBe('Broken link in the footer');
    expect(await again.getByRole('radio', { name: 'High' }).isChecked()).toBe(true);

    await again.getByTestId('question-decline').focus();
    await page.keyboard.press('Enter');
    await page.locator(`${CARD}[data-state="declined"]`).waitFor();
    await waitIdle(page);
    await expect.poll(() => lastAnswer(page)).toContain('I did not create an issue');
  });
});

const SETUPS: Array<{ name: string; options: BrowserContextOptions }> = [
  { name: 'light', options: { viewport: { width: 1280, height: 800 }, colorScheme: 'light' } },
  { name: 'dark', options: { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' } },
  {
    name: 'touch-390',
    options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'light' },
  },
];

describe.each(SETUPS)('question cards are accessible, $name', ({ name, options }) => {
  let ctx: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    // axe is injected as a script tag, which the pages' Content-Security-Policy would refuse.
    ctx = await browser.newContext({ ...options, baseURL: BASE_URL, bypassCSP: true });
    page = await ctx.newPage();
    await freshPanel(page, 'owner@example.com');
    await ask(page, 'create an issue');
    await page.locator(OPEN_CARD).waitFor();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('open, with its errors shown, and answered', async () => {
    await expectAccessible(page, `question-open-${name}`);
    await page.locator(`${OPEN_CARD} [data-testid="question-send"]`).click();
    await page.locator(`${OPEN_CARD} [data-testid="question-field-error"]`).first().waitFor();
    await expectAccessible(page, `question-errors-${name}`);
    await shot(page, `question-errors-${name}`);
    await page.locator(OPEN_CARD).getByLabel('Title', { exact: false }).fill(`Checked in ${name}`);
    await page.locator(`${OPEN_CARD} [data-testid="question-send"]`).click();
    await page.locator(`${CARD}[data-state="answered"]`).waitFor();
    await waitIdle(page);
    await expectAccessible(page, `question-answered-${name}`);
  });
});
