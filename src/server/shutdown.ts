/**
 * Graceful shutdown of a process, on SIGTERM or SIGINT (registered once per process from
 * src/instrumentation.ts, and by the test instances):
 *
 * 1. draining: readiness answers 503 at once and new runs are refused (503 DRAINING, Retry-After);
 *    every other request is still served;
 * 2. running answers get SHUTDOWN_DRAIN_SECONDS to finish; the rest are released (the module's
 *    `drainRuns`): another instance takes each over at once from its last stored step and
 *    finishes it (on the embedded database, the next start of the process does);
 * 3. the housekeeping stops, the fan-out connection and the database pool are closed;
 * 4. the process exits 0 (1 if a run could not be released; its lease runs out and another
 *    instance takes it over all the same).
 *
 * A repeated signal within a second is the same request (a terminal sends Ctrl+C to the whole
 * process group, and `npm start` forwards it too); one a second or more later exits at once.
 * Next.js closes its server and exits on these signals itself unless NEXT_MANUAL_SIG_HANDLE is
 * set (`npm start` sets it); under a plain `next start` its handlers are taken over here, so the
 * drain behaves the same however the process was started.
 */
import 'server-only';
import { closeFanOut } from '@/features/in-app-agent/server/fan-out';
import { drainRuns } from '@/features/in-app-agent/server/shutdown';
import { closeDb } from './db';
import { env } from './env';
import { describeError } from './errors';
import { stopHousekeeping } from './housekeeping';
import { startDraining } from './lifecycle';
import { childLog } from './log';
import { processWide } from '@/server/process-wide';

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
type Signal = (typeof SIGNALS)[number];

export interface ShutdownOptions {
  /** How the process ends (tests replace it). */
  exit?: (code: number) => void;
}

interface Holder {
  installed: boolean;
  shutdown?: Promise<number>;
  firstSignalAt?: number;
}
const holder: Holder = processWide<Holder>('__trackerShutdown', () => ({ installed: false }));

const logger = () => childLog({ job: 'shutdown' });

/**
 * Next.js's own handlers (`cleanup` in next/dist/server/lib/start-server.js) close the HTTP
 * server, wait for open responses (a live answer's stream) and exit 143: that would cut the
 * drain short or wait on streams nobody ends. This process owns the signals instead.
 */
function takeOverNextSignalHandlers(): number {
  if (process.env.NEXT_MANUAL_SIG_HANDLE) return 0;
  let removed = 0;
  for (const signal of SIGNALS) {
    for (const listener of process.listeners(signal)) {
      if (listener.name === 'cleanup') {
        process.off(signal, listener);
        removed += 1;
      }
    }
  }
  return removed;
}

/** Drains and closes everything; resolves with the exit code (does not exit). Idempotent. */
function shutdown(reason: string): Promise<number> {
  holder.shutdown ??= (async () => {
    const settings = env();
    startDraining();
    const drainSeconds = settings.SHUTDOWN_DRAIN_SECONDS;
    logger().info({ event: 'drain.started', reason, drainSeconds }, 'draining: no new runs; answers may finish');
    // Whatever happens below, the process does not outlive the window by much.
    const started = Date.now();
    const result = await drainRuns(started + drainSeconds * 1000);
    logger().info(
      {
        event: 'drain.finished',
        finished: result.finished,
        released: result.stopped,
        left: result.left.length,
        ms: Date.now() - started,
      },
      'drain finished',
    );
    if (result.left.length) {
      logger().error({ event: 'drain.incomplete', runIds: result.left }, 'runs could not be released in time');
    }
    await stopHousekeeping().catch(() => undefined);
    const warn = (event: string) => (err: unknown) => logger().warn({ event, error: describeError(err) });
    await closeFanOut().catch(warn('shutdown.fan_out_close_failed'));
    await closeDb().catch(warn('shutdown.db_close_failed'));
    const code = result.left.length ? 1 : 0;
    logger().info({ event: 'shutdown.complete', exitCode: code, ms: Date.now() - started }, 'shutdown complete');
    return code;
  })();
  return holder.shutdown;
}

/** Registers the signal handlers (once per process). */
export function installShutdownHandlers(opts: ShutdownOptions = {}): void {
  if (holder.installed) return;
  holder.installed = true;
  const exit = opts.exit ?? ((code: number) => process.exit(code));
  const removed = takeOverNextSignalHandlers();
  if (removed) logger().info({ event: 'shutdown.signals_taken_over', removed }, 'the app handles SIGTERM/SIGINT');
  const onSignal = (signal: Signal) => {
    const now = Date.now();
    if (holder.firstSignalAt !== undefined) {
      if (now - holder.firstSignalAt < 1_000) return;
      logger().warn({ event: 'shutdown.forced', signal }, 'second signal: exiting without waiting for the drain');
      exit(1);
      return;
    }
    holder.firstSignalAt = now;
    // A safety net: if closing hangs (an unreachable database), exit anyway after the window.
    const hardLimit = setTimeout(
      () => {
        logger().error({ event: 'shutdown.timeout' }, 'shutdown did not complete in time: exiting');
        exit(1);
      },
      (env().SHUTDOWN_DRAIN_SECONDS + 45) * 1000,
    );
    hardLimit.unref();
    void shutdown(signal).then(
      (code) => exit(code),
      (err: unknown) => {
        logger().error({ event: 'shutdown.failed', error: describeError(err) }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
}
