/**
 * What the assistant's server part starts once per process, at boot (the host calls it from its
 * start-up: `src/server/housekeeping.ts`, which `src/instrumentation.ts` runs; the test servers
 * call it too), so that no request pays for it: the trace exporter (when configured), the
 * cross-instance fan-out's listening connection (PostgreSQL), the periodic stale-run sweep, and
 * taking over runs whose instance stopped (takeover.ts: on PostgreSQL every second and when another
 * instance lets a run go; on the embedded database, the runs a previous process left running, once
 * at start; runs from before takeovers existed are closed as stale instead).
 */
import { childLog, describeError, env, getDb, getPrisma, processWide } from '../host';
import { fanOut } from './fan-out';
import { configureTracing } from './instrumentation';
import { recoverAfterRestart, startStaleSweep } from './persistence';
import { startTakeovers } from './takeover';

export interface AgentServicesOptions {
  /** Period of the stale-run sweep (default: half the stale window, at least 5 s). */
  staleSweepMs?: number;
  /** How often to look for runs to take over (default LIMITS.claimPollMs). */
  claimPollMs?: number;
}

/**
 * Starts the assistant's process-wide services (once; later calls get the same promise). Never
 * rejects: a service that cannot start now (the database is not reachable yet) is logged and tried
 * again every few seconds until it starts (one timer for the process, not per request or run).
 */
export function startAgentServices(opts: AgentServicesOptions = {}): Promise<void> {
  return processWide('__inAppAgentServices', () => ({ ready: start(opts) })).ready;
}

async function start(opts: AgentServicesOptions): Promise<void> {
  const settings = env();
  const log = childLog({ job: 'assistant-services' });
  startStaleSweep(getPrisma, settings.AGENT_RUN_STALE_SECONDS, opts.staleSweepMs);
  const steps: Array<[string, () => Promise<unknown>]> = [
    ['tracing', () => configureTracing(settings)],
    ['fan-out', () => fanOut(settings.DATABASE_URL).listen()],
    [
      'takeovers',
      async () => {
        // The fan-out listens first: an instance that lets a run go wakes this one.
        await fanOut(settings.DATABASE_URL).listen();
        await startTakeovers({ everyMs: opts.claimPollMs });
        const db = await getDb();
        return db.kind === 'pglite' ? recoverAfterRestart(db.prisma, true) : 0;
      },
    ],
  ];
  const attempt = (name: string, run: () => Promise<unknown>, tries: number): Promise<void> =>
    run().then(
      () => undefined,
      (err: unknown) => {
        log.warn(
          { event: 'services.start_failed', service: name, attempt: tries, error: describeError(err) },
          'an assistant service did not start; trying again',
        );
        const again = setTimeout(() => void attempt(name, run, tries + 1), Math.min(30_000, 1_000 * 2 ** tries));
        again.unref();
      },
    );
  await Promise.all(steps.map(([name, run]) => attempt(name, run, 1)));
}
