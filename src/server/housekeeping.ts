/**
 * The periodic housekeeping of a process, started once at boot (src/instrumentation.ts; the test
 * instances call it too) rather than by the first request: the assistant's stale-run sweep and the
 * retention purge (one instance at a time, see retention.ts). Stopped by the shutdown sequence
 * before the database is closed.
 */
import 'server-only';
import { startAgentServices } from '@/features/in-app-agent/server/boot';
import { stopStaleSweep } from '@/features/in-app-agent/server/persistence';
import { stopTakeovers } from '@/features/in-app-agent/server/takeover-state';
import { getDb } from './db';
import { env } from './env';
import { describeError } from './errors';
import { childLog } from './log';
import { purgeExpired } from './retention';
import { processWide } from '@/server/process-wide';

export interface HousekeepingOptions {
  /** Period of the stale-run sweep (default: half the stale window, at least 5 s). */
  staleSweepMs?: number;
  /** Period of the retention purge (default RETENTION_PURGE_INTERVAL_SECONDS). */
  purgeEveryMs?: number;
}

interface Holder {
  started: boolean;
  purgeTimer?: NodeJS.Timeout;
  firstPurge?: NodeJS.Timeout;
  purging?: Promise<unknown>;
  stopping: boolean;
}
const holder: Holder = processWide<Holder>('__trackerHousekeeping', () => ({
  started: false,
  stopping: false,
}));

/** One purge pass now (the timer's job; also used by tests). Never throws. */
function runPurge(): Promise<unknown> {
  if (holder.purging) return holder.purging;
  const settings = env();
  holder.purging = getDb()
    .then((db) =>
      purgeExpired(db, {
        agentRetentionDays: settings.AGENT_RETENTION_DAYS,
        auditRetentionDays: settings.AUDIT_RETENTION_DAYS,
        shouldStop: () => holder.stopping,
      }),
    )
    .catch((err: unknown) =>
      childLog({ job: 'retention' }).error({ event: 'purge.failed', error: describeError(err) }, 'purge failed'),
    )
    .finally(() => (holder.purging = undefined));
  return holder.purging;
}

/** Starts the sweep and the purge timers (once per process). */
export function startHousekeeping(opts: HousekeepingOptions = {}): void {
  if (holder.started) return;
  holder.started = true;
  holder.stopping = false;
  const settings = env();
  // The assistant's services: its stale-run sweep, trace exporter, cross-instance connection and
  // taking over runs whose instance stopped (on the embedded database, one process owns it: the
  // runs a previous process left RUNNING, now rather than at the first assistant request).
  void startAgentServices({ staleSweepMs: opts.staleSweepMs });
  const every = opts.purgeEveryMs ?? settings.RETENTION_PURGE_INTERVAL_SECONDS * 1000;
  // The first pass soon after boot (not at once: boot has enough to do), then every period.
  holder.firstPurge = setTimeout(() => void runPurge(), Math.min(every, 60_000));
  holder.firstPurge.unref();
  holder.purgeTimer = setInterval(() => void runPurge(), every);
  holder.purgeTimer.unref();
}

/** Stops the timers and waits (bounded) for a purge pass in progress to stop after its batch. */
export async function stopHousekeeping(waitMs = 10_000): Promise<void> {
  holder.stopping = true;
  stopStaleSweep();
  stopTakeovers();
  if (holder.firstPurge) clearTimeout(holder.firstPurge);
  if (holder.purgeTimer) clearInterval(holder.purgeTimer);
  holder.firstPurge = holder.purgeTimer = undefined;
  holder.started = false;
  if (holder.purging) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([holder.purging, new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
  }
}
