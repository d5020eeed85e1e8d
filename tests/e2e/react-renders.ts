/**
 * Counting what React renders in the browser, for the browser tests and `scripts/bench-panel.ts`:
 * an init script (installed before the page's own scripts) that plays React's devtools hook. React,
 * also in production builds, hands every commit to that hook; while counting is on, the script
 * walks the committed tree and counts, per message id, the panel's message rows
 * (`data-testid="assistant-message"`) that React rendered: mounted, or given a new props object by
 * their component. A memoized row that bailed out keeps its props object and is not counted; a
 * subtree whose children React did not clone (`child` unchanged) was not rendered and is not walked.
 */
import type { Page } from 'playwright-core';

export const RENDER_COUNTER_SCRIPT = `(() => {
  const stats = { active: false, commits: 0, rows: {} };
  window.__reactRenders = stats;
  const count = (fiber) => {
    const props = fiber.memoizedProps;
    if (fiber.tag !== 5 || !props || props['data-testid'] !== 'assistant-message') return;
    const id = props['data-message-id'] || '(pending)';
    stats.rows[id] = (stats.rows[id] || 0) + 1;
  };
  function walk(next, prev) {
    if (!prev || next.memoizedProps !== prev.memoizedProps) count(next);
    if (prev && next.child === prev.child) return;
    for (let c = next.child; c; c = c.sibling) walk(c, c.alternate);
  }
  let id = 0;
  window.__REACT_DEVTOOLS_GLOBAL_HOOK__ = {
    supportsFiber: true,
    renderers: new Map(),
    inject(renderer) { id += 1; this.renderers.set(id, renderer); return id; },
    checkDCE() {},
    onScheduleFiberRoot() {},
    onCommitFiberUnmount() {},
    onPostCommitFiberRoot() {},
    setStrictMode() {},
    onCommitFiberRoot(_id, root) {
      if (!stats.active) return;
      stats.commits += 1;
      walk(root.current, root.current.alternate);
    },
  };
})();`;

export interface RenderCounts {
  /** React commits while counting. */
  commits: number;
  /** Renders of each message row, by message id. */
  rows: Record<string, number>;
}

/** Starts counting from zero (the page must have been opened with `RENDER_COUNTER_SCRIPT`). */
export async function startCountingRenders(page: Page): Promise<void> {
  await page.evaluate(() => {
    const stats = (window as unknown as { __reactRenders?: { active: boolean; commits: number; rows: object } })
      .__reactRenders;
    if (!stats) throw new Error('the render counter is not installed (RENDER_COUNTER_SCRIPT)');
    stats.active = true;
    stats.commits = 0;
    stats.rows = {};
  });
}

/** Stops counting and returns what was counted. */
export async function stopCountingRenders(page: Page): Promise<RenderCounts> {
  return page.evaluate(() => {
    const stats = (window as unknown as { __reactRenders: RenderCounts & { active: boolean } }).__reactRenders;
    stats.active = false;
    return { commits: stats.commits, rows: { ...stats.rows } };
  });
}
