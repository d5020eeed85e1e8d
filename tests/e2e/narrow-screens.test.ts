// The product's pages on a 390 px phone screen, in a real browser against `next start` with the
// demo data: signed in as the owner, with data that fills the wide tables (the assistant's
// conversations and tool calls in the review and the audit, an API key in the settings, the
// members), no page is wider than the screen: a wide table scrolls inside its own box, and text
// hidden for screen readers stays inside it too. Checked in the light and the dark theme; a full
// screenshot of each page is saved (test-artifacts/screenshots/narrow-*.png).
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, newPage, openBrowser, shot } from './browser';
import { PANEL, ask, findProjectId } from './panel';

/** A phone's screen width (px). */
const SCREEN = 390;
const PHONE: BrowserContextOptions = { viewport: { width: SCREEN, height: 844 }, isMobile: true, hasTouch: true };

let browser: Browser;
let projectId = '';
let conversationId = '';
let storageState: Awaited<ReturnType<BrowserContext['storageState']>>;

const PAGES: Array<{ name: string; path: () => string; ready: string }> = [
  { name: 'issues', path: () => `/projects/${projectId}/issues`, ready: '[data-testid="issue-table"]' },
  { name: 'review', path: () => `/projects/${projectId}/assistant/review`, ready: '[data-testid="review-table"]' },
  {
    name: 'review-conversation',
    path: () => `/projects/${projectId}/assistant/review/${conversationId}`,
    ready: '[data-testid="review-conversation"]',
  },
  { name: 'settings', path: () => `/projects/${projectId}/settings`, ready: '[data-testid="key-table"]' },
  { name: 'audit', path: () => `/projects/${projectId}/audit`, ready: '[data-testid="audit-table"]' },
  { name: 'members', path: () => `/projects/${projectId}/members`, ready: '[data-testid="member-table"]' },
];

interface Width {
  scrollWidth: number;
  innerWidth: number;
  /** The elements reaching furthest past the right edge of the screen, for the failure message. */
  widest: string[];
}

/** How wide the page is, against the screen. */
function measure(page: Page): Promise<Width> {
  return page.evaluate((screen) => {
    /**
     * Whether an ancestor clips the element (a scrolling box), so that it cannot widen the page. An
     * absolutely positioned element is clipped only by its containing block (its nearest positioned
     * ancestor) or what contains that: a scrolling box in between does not hold it.
     */
    const clipped = (el: HTMLElement) => {
      let absolute = getComputedStyle(el).position === 'absolute';
      for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
        const style = getComputedStyle(a);
        if (absolute && style.position === 'static') continue;
        if (style.overflowX !== 'visible') return true;
        absolute = style.position === 'absolute';
      }
      return false;
    };
    const past = [...document.querySelectorAll<HTMLElement>('body *')]
      .map((el) => ({ el, right: el.getBoundingClientRect().right + window.scrollX }))
      .filter((x) => x.right > screen + 0.5 && !clipped(x.el))
      .sort((a, b) => b.right - a.right)
      .slice(0, 5)
      .map(({ el, right }) => {
        const cls = typeof el.className === 'string' ? el.className.split(/\s+/).slice(0, 4).join('.') : '';
        return `${el.tagName.toLowerCase()}${cls ? `.${cls}` : ''} right=${Math.round(right)} "${(el.textContent ?? '').trim().slice(0, 30)}"`;
      });
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth, widest: past };
  }, SCREEN);
}

beforeAll(async () => {
  browser = await openBrowser();
  // Data first, on a desktop screen: a conversation whose answers called tools (a review row, audit
  // rows), and an API key (a row of the settings' key table).
  const page = await newPage(browser);
  await login(page, 'owner@example.com');
  projectId = await findProjectId(page);
  await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
  await page.evaluate(() => window.localStorage.clear());
  await page.getByTestId('assistant-toggle').click();
  await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
  for (const q of ['list open issues', 'show issue 3', 'search docs for approvals']) await ask(page, q);
  conversationId = (await page.locator(PANEL).getAttribute('data-conversation-id')) ?? '';
  expect(conversationId).not.toBe('');
  await page.locator(`${PANEL} [data-testid="assistant-close"]`).click();
  await page.locator(PANEL).waitFor({ state: 'detached' });

  await page.goto(`${BASE_URL}/projects/${projectId}/settings`);
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
  await page.getByLabel('Key name').fill('Narrow screen check with a long key name');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByTestId('new-key-secret').waitFor();
  storageState = await page.context().storageState();
  await page.context().close();
});

afterAll(async () => {
  await browser?.close();
});

describe.each(['light', 'dark'] as const)('a 390 px screen, %s theme', (colorScheme) => {
  let ctx: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    ctx = await browser.newContext({ ...PHONE, colorScheme, baseURL: BASE_URL, storageState });
    page = await ctx.newPage();
  });
  afterAll(async () => {
    await ctx?.close();
  });

  it.each(PAGES)('shows the $name page no wider than the screen', async ({ name, path, ready }) => {
    await page.goto(`${BASE_URL}${path()}`);
    await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
    await page.locator(ready).first().waitFor();
    expect(await page.locator(PANEL).count(), 'the assistant panel is closed').toBe(0);
    const width = await measure(page);
    await shot(page, `narrow-${name}-${colorScheme}`);
    process.stdout.write(`[narrow] ${name} (${colorScheme}): ${width.scrollWidth} px for ${width.innerWidth} px\n`);
    // A phone zooms a page that is too wide out (its layout width grows past the screen's), so the
    // page is compared with the screen, and the layout must keep the screen's width.
    const past = `past the edge: ${width.widest.join(' | ')}`;
    expect(width.innerWidth, `${name} was zoomed out to fit; ${past}`).toBe(SCREEN);
    expect(width.scrollWidth, `${name} is wider than the screen; ${past}`).toBeLessThanOrEqual(width.innerWidth);
  });
});
