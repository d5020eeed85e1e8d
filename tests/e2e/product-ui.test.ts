// Answers as product UI, in Chromium against the production build with the demo data and the
// offline demo model: tool results as issue cards linking to the issue page (also in the review
// page), issue references in answers as chips only when the issue exists, follow-up suggestions
// sent with one click and shown under the last answer only, an approval card with the issue's
// current values beside the proposed ones (also after a reload and in the review), and the
// composer's # and @ typeahead driven by the keyboard, whose picks reach the server as references.
// axe checks the cards, chips, suggestions, approval changes and the open typeahead in the light
// and dark themes and on a 390 px touch screen.
import type { Browser, BrowserContext, BrowserContextOptions, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe';
import { BASE_URL, login, openBrowser } from './browser';
import { ASSISTANT, PANEL, ask, currentConversation, ensureOpen, findProjectId, waitIdle, waitLoaded } from './panel';

let browser: Browser;
let ctx: BrowserContext;
let page: Page;
let projectId = '';
/** The conversation with the issue list (for the review page). */
let listConversation = '';

const INPUT = `${PANEL} [data-testid="assistant-input"]`;
const OPTIONS = `${PANEL} [data-testid="assistant-mentions"] [role="option"]`;
const SUGGESTIONS = `${PANEL} [data-testid="assistant-suggestion"]`;

async function hydrated(p: Page): Promise<void> {
  await p.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
}

async function newConversation(p: Page): Promise<void> {
  await ensureOpen(p);
  await p.locator(`${PANEL} [data-testid="assistant-new"]`).click();
  await waitLoaded(p);
}

const texts = (p: Page, selector: string) => p.$$eval(selector, (els) => els.map((e) => e.textContent?.trim() ?? ''));

beforeAll(async () => {
  browser = await openBrowser();
  ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL, bypassCSP: true });
  page = await ctx.newPage();
  await login(page, 'owner@example.com');
  projectId = await findProjectId(page);
  await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
  await hydrated(page);
  await page.evaluate(() => window.localStorage.clear());
  await page.reload();
  await hydrated(page);
  await ensureOpen(page);
});

afterAll(async () => {
  await ctx?.close();
  await browser?.close();
});

describe('answers as product UI', () => {
  it('shows listed issues as cards linking to their pages, links the references, and sends a suggestion in one click', async () => {
    await newConversation(page);
    await ask(page, 'list open issues');
    listConversation = await currentConversation(page);
    const card = page.locator(`${PANEL} [data-testid="tool-card"][data-tool="list_issues"]`);
    const rows = card.locator('[data-testid="issue-row"]');
    expect(await rows.count()).toBeGreaterThan(1);
    const first = (await rows.first().getAttribute('data-issue-number'))!;
    expect(await rows.first().locator('[data-testid="issue-link"]').getAttribute('href')).toBe(
      `/projects/${projectId}/issues/${first}`,
    );
    expect(await rows.first().locator('[data-testid="issue-card-status"]').textContent()).toBe('Open');
    // The raw result is still there, behind its disclosure.
    await card.locator('summary', { hasText: 'Result' }).click();
    expect(await card.locator('pre').textContent()).toContain('"issues"');

    // The answer's "#N" are chips to the issues the server checked.
    const chips = page.locator(`${ASSISTANT} [data-testid="issue-chip"]`);
    expect(await chips.count()).toBe(await rows.count());
    expect(await chips.first().getAttribute('href')).toBe(`/projects/${projectId}/issues/${first}`);

    // The suggestions block is not text: it is three buttons under the answer.
    expect(await page.locator(ASSISTANT).last().textContent()).not.toContain('suggestions');
    expect(await texts(page, SUGGESTIONS)).toEqual([
      `Summarize issue #${first}`,
      'List closed issues',
      'Summarize the project',
    ]);
    await page.locator(SUGGESTIONS).first().click();
    await page.waitForFunction(
      ({ sel, t }) => [...document.querySelectorAll(sel)].some((e) => e.textContent?.includes(t)),
      {
        sel: `${PANEL} [data-testid="assistant-message"][data-role="user"][data-message-id]`,
        t: `Summarize issue #${first}`,
      },
    );
    await waitIdle(page);
    const issueCard = page.locator(
      `${PANEL} [data-testid="tool-card"][data-tool="get_issue"] [data-testid="issue-card"]`,
    );
    expect(await issueCard.getAttribute('data-issue-number')).toBe(first);
    // Only the last answer offers follow-ups.
    expect(await texts(page, SUGGESTIONS)).toEqual([`Go to issue ${first}`, 'List open issues']);
    expect(await page.locator(`${ASSISTANT} >> nth=0`).locator('[data-testid="assistant-suggestion"]').count()).toBe(0);

    // A chip is a real link into the product.
    await chips.first().click();
    await page.waitForURL(`**/projects/${projectId}/issues/${first}`);
  });

  it('leaves a reference to an issue that does not exist as plain text', async () => {
    await newConversation(page);
    await ask(page, 'go to issue 999');
    const answer = page.locator(ASSISTANT).last();
    expect(await answer.textContent()).toContain('#999');
    expect(await answer.locator('[data-testid="issue-chip"]').count()).toBe(0);
    expect(await answer.locator('a[href*="/issues/999"]').count()).toBe(0);
    // An issue that exists, in the same kind of answer, is a chip.
    await ask(page, 'go to issue 1');
    await page.waitForURL(`**/projects/${projectId}/issues/1`);
    const opened = page.locator(ASSISTANT).last().locator('[data-testid="issue-chip"]');
    expect(await opened.getAttribute('href')).toBe(`/projects/${projectId}/issues/1`);
  });

  it('puts the issue’s current values beside the proposed ones on an approval card, also after a reload and in the review', async () => {
    await page.goto(`${BASE_URL}/projects/${projectId}/issues/2`);
    await hydrated(page);
    // The heading reads "Title #2".
    const title = (await page.getByTestId('issue-title').textContent())!.replace(/\s*#\d+\s*$/, '').trim();
    const status = (await page.locator('main [data-testid="issue-status"]').first().textContent())!.trim();
    await newConversation(page);
    await ask(page, 'close issue 2');
    const changes = page.locator(
      `${PANEL} [data-testid="approval-card"][data-state="open"] [data-testid="approval-changes"]`,
    );
    await changes.waitFor();
    expect(await changes.textContent()).toContain(title);
    const row = changes.locator('[data-testid="approval-change"][data-field="Status"]');
    expect(await row.locator('[data-testid="approval-change-before"]').textContent()).toBe(status);
    expect(await row.locator('[data-testid="approval-change-after"]').textContent()).toContain('Closed');
    const conversation = await currentConversation(page);

    // History keeps what the user was shown.
    await page.reload();
    await hydrated(page);
    await ensureOpen(page);
    await waitLoaded(page);
    expect(await page.locator(`${PANEL} [data-testid="approval-change-before"]`).first().textContent()).toBe(status);

    // So does the review, with the product cards of the other conversation.
    await page.goto(`${BASE_URL}/projects/${projectId}/assistant/review/${conversation}`);
    await hydrated(page);
    expect(await page.locator('main [data-testid="approval-change-before"]').first().textContent()).toBe(status);
    await page.goto(`${BASE_URL}/projects/${projectId}/assistant/review/${listConversation}`);
    await hydrated(page);
    const reviewRows = page.locator(
      'main [data-testid="tool-card"][data-tool="list_issues"] [data-testid="issue-row"]',
    );
    expect(await reviewRows.count()).toBeGreaterThan(1);
    expect(await page.locator('main [data-testid="issue-chip"]').count()).toBeGreaterThan(1);
    // The review is read-only: no follow-ups to send.
    expect(await page.locator('main [data-testid="assistant-suggestion"]').count()).toBe(0);
  });

  it('offers issues after # and members after @, by keyboard, and sends the picks as references', async () => {
    await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await hydrated(page);
    await newConversation(page);
    const sent: string[] = [];
    const onRequest = (r: Request) => {
      if (r.method() === 'POST' && r.url().endsWith('/in-app-agent')) sent.push(r.postData() ?? '');
    };
    page.on('request', onRequest);
    const input = page.locator(INPUT);
    await input.click();
    await page.keyboard.type('Summarize issue #');
    await page.locator(OPTIONS).nth(1).waitFor();
    const listId = await input.getAttribute('aria-controls');
    expect(listId).toBeTruthy();
    const ids = await page.$$eval(OPTIONS, (els) => els.map((e) => e.id));
    expect(await input.getAttribute('aria-activedescendant')).toBe(ids[0]);
    await page.keyboard.press('ArrowDown');
    expect(await input.getAttribute('aria-activedescendant')).toBe(ids[1]);
    expect(await page.locator(OPTIONS).nth(1).getAttribute('aria-selected')).toBe('true');
    const picked = (await page.locator(OPTIONS).nth(1).getAttribute('data-id'))!;
    await page.keyboard.press('Enter');
    await page.locator(`${PANEL} [data-testid="assistant-mentions"]`).waitFor({ state: 'detached' });
    expect(await input.inputValue()).toBe(`Summarize issue #${picked} `);
    expect(await input.getAttribute('aria-activedescendant')).toBeNull();

    // Escape closes the list and nothing else (the panel stays open, the text stays).
    await page.keyboard.type('#');
    await page.locator(OPTIONS).first().waitFor();
    await page.keyboard.press('Escape');
    await page.locator(`${PANEL} [data-testid="assistant-mentions"]`).waitFor({ state: 'detached' });
    expect(await page.locator(PANEL).count()).toBe(1);
    expect(await input.inputValue()).toBe(`Summarize issue #${picked} #`);
    await page.keyboard.press('Backspace');

    await page.keyboard.type('for @may');
    await page.locator(OPTIONS, { hasText: 'Maya Member' }).waitFor();
    await page.keyboard.press('Tab');
    expect(await input.inputValue()).toBe(`Summarize issue #${picked} for @Maya Member `);
    await page.keyboard.press('Enter');
    await waitIdle(page);
    page.off('request', onRequest);
    const body = JSON.parse(sent.at(-1)!) as { messages: Array<{ content: unknown }> };
    const content = body.messages.at(-1)!.content as Array<Record<string, unknown>>;
    expect(content.filter((p) => p.type === 'reference')).toEqual([
      { type: 'reference', kind: 'issue', id: picked, label: `#${picked}` },
      { type: 'reference', kind: 'member', id: expect.any(String), label: '@Maya Member' },
    ]);
    // The demo model read the picked issue.
    expect(
      await page
        .locator(`${PANEL} [data-testid="tool-card"][data-tool="get_issue"] [data-testid="issue-card"]`)
        .getAttribute('data-issue-number'),
    ).toBe(picked);
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

describe.each(SETUPS)('accessibility of the product UI, $name', ({ name, options }) => {
  it('has no serious violation in cards, chips, suggestions, approval changes and the typeahead', async () => {
    const storageState = await ctx.storageState();
    const c = await browser.newContext({ ...options, baseURL: BASE_URL, bypassCSP: true, storageState });
    const p = await c.newPage();
    try {
      await p.goto(`${BASE_URL}/projects/${projectId}/issues`);
      await hydrated(p);
      await newConversation(p);
      await ask(p, 'list open issues');
      await p.locator(SUGGESTIONS).first().waitFor();
      await expectAccessible(p, `product-ui-cards-${name}`);
      await p.locator(INPUT).click();
      await p.keyboard.type('#');
      await p.locator(OPTIONS).first().waitFor();
      await expectAccessible(p, `product-ui-typeahead-${name}`);
      await p.keyboard.press('Escape');
      await p.locator(INPUT).fill('');
      await ask(p, 'close issue 2');
      await p.locator(`${PANEL} [data-testid="approval-changes"]`).waitFor();
      await expectAccessible(p, `product-ui-approval-${name}`);
    } finally {
      await c.close();
    }
  });
});
