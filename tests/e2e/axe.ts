/**
 * axe-core in a real browser, for the browser tests: scans the whole page for WCAG 2.0/2.1 A and
 * AA and axe's best practices, and fails on a serious or critical violation (and on three rules of
 * lower impact the panel once broke: unique landmarks, one banner, allowed roles), printing every
 * violation with its impact and the elements it was found on. axe is injected as a script tag, so
 * the page's context must bypass its Content-Security-Policy.
 */
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { shot } from './browser';

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
export async function expectAccessible(page: Page, label: string): Promise<void> {
  // Colours mid-transition (a panel sliding in, a theme being applied) are not what a user reads:
  // finite animations end first (at most 2 s; endless ones, such as a spinner, are not waited for).
  await page.evaluate(() =>
    Promise.race([
      Promise.all(
        document
          .getAnimations()
          .filter((a) => a.effect?.getComputedTiming().endTime !== Number.POSITIVE_INFINITY)
          .map((a) => a.finished.catch(() => undefined)),
      ),
      new Promise((r) => setTimeout(r, 2_000)),
    ]),
  );
  // A page's title is streamed after its body (Next.js streams metadata) and written again when the
  // page is refreshed after a save: scan once the document has one. A page that never gets one
  // still fails below (document-title).
  await page.waitForFunction(() => document.title.trim() !== '', undefined, { timeout: 5_000 }).catch(() => undefined);
  const violations = await scan(page);
  if (violations.length) process.stdout.write(`[axe] ${label}:\n${describeViolations(violations)}\n`);
  const blocking = violations.filter((v) => BLOCKING.has(v.impact ?? '') || FIXED_RULES.has(v.id));
  if (blocking.length) await shot(page, `axe-${label}`, { fullPage: false }).catch(() => undefined);
  const found = blocking.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => JSON.stringify(n.target)).join(' ')}`);
  expect(found, `serious or critical accessibility violations in ${label}`).toEqual([]);
}
