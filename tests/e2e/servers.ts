/**
 * How many app servers the browser tests start, each with a database of its own: test files run
 * side by side, one per server (`VITEST_POOL_ID` picks a worker's server), and a server sees one
 * file at a time, as a single server does. `E2E_SERVERS=<n>` sets it (1 runs the files one after
 * another); by default one per core, at most two. An app already running (`E2E_BASE_URL`) is one.
 * Read by `vitest.e2e.config.ts` (its workers) and `global-setup.ts` (its servers).
 */
import os from 'node:os';

export function e2eServerCount(env: NodeJS.ProcessEnv = process.env): number {
  if (env.E2E_BASE_URL) return 1;
  const set = env.E2E_SERVERS?.trim();
  if (set) {
    const n = Number(set);
    if (!Number.isInteger(n) || n < 1 || n > 8)
      throw new Error(`E2E_SERVERS must be a whole number from 1 to 8, not "${set}"`);
    return n;
  }
  return Math.max(1, Math.min(2, os.availableParallelism()));
}
