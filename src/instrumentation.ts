/**
 * Runs once when the server starts (`next start`, `next dev`, however it is launched): validates the
 * environment, so a misconfigured server stops at start-up with a message naming the variable
 * instead of failing on its first request; then installs the process's graceful shutdown
 * (SIGTERM/SIGINT, src/server/shutdown.ts) and starts its periodic housekeeping (stale-run sweep,
 * retention purge; src/server/housekeeping.ts), once per process. Skipped while `next build`
 * collects pages (production secrets are not needed to build) and in the edge runtime. Under the
 * test runner the processes a test starts install these themselves.
 */
export async function register(): Promise<void> {
  if (process.env.NEXT_RUNTIME !== 'nodejs') return;
  if (process.env.NEXT_PHASE === 'phase-production-build') return;
  // First, so every async-local storage the process enables is counted (see diagnostics.ts).
  const { trackAsyncLocalStorages } = await import('./server/diagnostics');
  trackAsyncLocalStorages();
  const { env } = await import('./server/env');
  const settings = env();
  if (settings.NODE_ENV === 'test') return;
  const { installShutdownHandlers } = await import('./server/shutdown');
  const { startHousekeeping } = await import('./server/housekeeping');
  installShutdownHandlers();
  startHousekeeping();
}
