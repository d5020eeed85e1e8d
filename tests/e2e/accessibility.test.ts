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
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, docsImage, login, openBrowser, shot } from './browser';
import { PANEL, ask, cardStates, ensureOpen, findProjectId, waitLoaded } from './panel';

const require = createRequire(import.meta.url);
const AXE_SCRIPT = require.resolve('axe-core/axe.min.js');
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];
const BLOCKING = new Set(['serious', 'critical']);
/** Rules of lower impact that the panel once broke and must not break again (landmarks, roles). */
const FIXED_RULES = new Set(['landmark-unique', 'landmark-no-duplicate-banner', 'aria-allowed-role']);

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

let browser: Browser;
let projectId = '';
/** Cookies and local storage of the owner after the two conversations were made. */
let storageState: Awaited<ReturnType<BrowserContext['storageState']>>;
let toolConversationId = '';

/** Runs axe over the whole page and returns its violations (every impact). */
async function scan(page: Page): Promise<AxeViolation[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: AXE_SCRIPT });
  return page.evaluate(async (tags) => {
    type Axe = { run: (ctx: unknown, opts: unknown) => Promise<{ violations: unknown[] }> };
    const axe = (window as unknown as { axe: Axe }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return result.violations as AxeViolation[];
  }, AXE_TAGS);
}

function describeViolations(vs: AxeViolation[]): string {
  return vs
    .map((v) => {
      const nodes = v.nodes.map((n) => `    ${JSON.stringify(n.target)}`).join('\n');
      return `${v.id} (${v.impact ?? 'no impact'}): ${v.help}\n${nodes}`;
    })
    .join('\n');
}

/** Scans the page and fails on serious or critical violations, printing all of them. */
async function expectAccessible(page: Page, label: string): Promise<void> {
  const violations = await scan(page);
  if (violations.length) process.stdout.write(`[axe] ${label}:\n${describeViolations(violations)}\n`);
  const blocking = violations.filter((v) => BLOCKING.has(v.impact ?? '') || FIXED_RULES.has(v.id));
  if (blocking.length) await shot(page, `axe-${label}`, { fullPage: false }).catch(() => undefined);
  const found = blocking.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(' ')}`);
  expect(found, `serious or critical accessibility violations in ${label}`).toEqual([]);
}

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
