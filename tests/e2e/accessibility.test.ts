// Accessibility of the assistant panel, measured with axe-core in a real browser against
// `next start` with the demo data and the offline demo model: the empty panel, an answer with a
// tool card, a batch of approval cards and the conversation history, each in the light theme, the
// dark theme and on a 390 px touch screen. A serious or critical violation of WCAG 2.0/2.1 A and
// AA or of axe's best practices fails the test (and so do three rules of lower impact the panel
// once broke: unique landmarks, one banner, allowed roles), which prints every violation with its
// impact and the elements it was found on. The whole page is scanned with the panel open: landmarks and
// roles are only wrong or right in relation to the page the panel sits on. The light theme's batch
// of approval cards is also the README's picture, docs/images/assistant-approval.png.
import { statSync } from 'node:fs';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe';
import { BASE_URL, docsImage, login, openBrowser } from './browser';
import { PANEL, ask, cardStates, ensureOpen, findProjectId, waitLoaded } from './panel';

let browser: Browser;
let projectId = '';
/** Cookies and local storage of the owner after the two conversations were made. */
let storageState: Awaited<ReturnType<BrowserContext['storageState']>>;
let toolConversationId = '';

async function hydrated(page: Page): Promise<void> {
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
}

beforeAll(async () => {
  browser = await openBrowser();
  // Two conversations of the owner: an answer with a tool card, then a batch of two approvals
  // left open (nothing is approved, so no issue changes).
  // axe is injected as a script tag, which the pages' Content-Security-Policy would refuse.
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL, bypassCSP: true });
  const page = await ctx.newPage();
  await login(page, 'owner@example.com');
  projectId = await findProjectId(page);
  await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
  await hydrated(page);
  await page.evaluate(() => window.localStorage.clear());
  await page.reload();
  await hydrated(page);
  await ensureOpen(page);
  await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
  await ask(page, 'list open issues');
  await page.locator(`${PANEL} [data-testid="tool-card"]`).first().waitFor();
  toolConversationId = (await page.locator(PANEL).getAttribute('data-conversation-id')) ?? '';
  expect(toolConversationId).not.toBe('');
  await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
  await ask(page, 'close issues 3 and 4');
  await page.waitForFunction(
    (sel) => document.querySelectorAll(`${sel} [data-testid="approval-card"][data-state="open"]`).length === 2,
    PANEL,
  );
  expect(await cardStates(page)).toEqual(['close_issue:open', 'close_issue:open']);
  storageState = await ctx.storageState();
  await ctx.close();
});

afterAll(async () => {
  await browser?.close();
});

const SETUPS: Array<{ name: string; options: BrowserContextOptions }> = [
  { name: 'light', options: { viewport: { width: 1280, height: 800 }, colorScheme: 'light' } },
  { name: 'dark', options: { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' } },
  {
    name: 'touch-390',
    options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'light' },
  },
];

describe.each(SETUPS)('the assistant panel, $name', ({ name, options }) => {
  let ctx: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ctx = await browser.newContext({ ...options, baseURL: BASE_URL, bypassCSP: true, storageState });
    page = await ctx.newPage();
    // The panel reopens where it was left: open, on the conversation waiting for approvals.
    await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await hydrated(page);
    await page.locator(PANEL).waitFor();
    await waitLoaded(page);
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it('a batch of approval cards has no serious or critical violation', async () => {
    await page.waitForFunction(
      (sel) => document.querySelectorAll(`${sel} [data-testid="approval-card"][data-state="open"]`).length === 2,
      PANEL,
    );
    await expectAccessible(page, `${name}-approval-batch`);
    // The README's picture of the panel: light theme, desktop width, a batch waiting for decisions.
    if (name === 'light') {
      // Tall enough for the whole batch; the other tests go on at 1280 x 800.
      await page.setViewportSize({ width: 1280, height: 1440 });
      await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
      const file = await docsImage(page, 'assistant-approval');
      await page.setViewportSize({ width: 1280, height: 800 });
      expect(statSync(file).size).toBeGreaterThan(10_000);
    }
  });

  it('the conversation history has no serious or critical violation', async () => {
    await page.locator(`${PANEL} [data-testid="assistant-history"]`).click();
    const list = page.locator(`${PANEL} [data-testid="conversation-list"]`);
    await list.locator(`[data-conversation-id="${toolConversationId}"]`).waitFor();
    await expectAccessible(page, `${name}-history`);
  });

  it('an answer with a tool card has no serious or critical violation', async () => {
    const list = page.locator(`${PANEL} [data-testid="conversation-list"]`);
    await list.locator(`[data-conversation-id="${toolConversationId}"] button`).first().click();
    await page.locator(`${PANEL} [data-testid="tool-card"]`).first().waitFor();
    await waitLoaded(page);
    await expectAccessible(page, `${name}-tool-card`);
  });

  it('the empty panel has no serious or critical violation', async () => {
    await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
    await page.locator(`${PANEL} [data-testid="assistant-suggestion"]`).first().waitFor();
    await expectAccessible(page, `${name}-empty`);
  });
});
