/**
 * The module's part of a graceful shutdown: the runs live in this process get until `deadlineMs`
 * (epoch ms) to finish on their own; the rest are stopped (`LiveRun.stop('shutdown')`: they end
 * ABORTED with what they produced kept, and revoke their keys) and get `stopGraceMs` to record
 * their end. Runs that start while this waits (a request already past the draining check) are
 * included. The host refuses new runs before calling this (503 DRAINING).
 */
import 'server-only';
import { childLog } from '../host';
import { liveRuns } from './live';

export interface DrainResult {
  /** Runs that ended on their own within the window. */
  finished: number;
  /** Runs stopped at the deadline. */
  stopped: number;
  /** Runs still live after the grace (their end could not be recorded in time). */
  left: string[];
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function drainRuns(
  deadlineMs: number,
  opts: { pollMs?: number; stopGraceMs?: number } = {},
): Promise<DrainResult> {
  const pollMs = opts.pollMs ?? 100;
  const seen = new Set<string>();
  const note = () => {
    for (const run of liveRuns()) seen.add(run.runId);
  };
  note();
  while (liveRuns().length > 0 && Date.now() < deadlineMs) {
    await sleep(Math.min(pollMs, Math.max(1, deadlineMs - Date.now())));
    note();
  }
  const remaining = liveRuns();
  for (const run of remaining) {
    childLog({ runId: run.runId, projectId: run.info.projectId, userId: run.info.userId }).info(
      { event: 'run.stopped', reason: 'shutdown' },
      'run stopped: the drain window ended',
    );
    run.stop('shutdown');
  }
  // Recording the end needs the database (retried while it is briefly away): bounded all the same.
  const graceUntil = Date.now() + (opts.stopGraceMs ?? 15_000);
  while (liveRuns().length > 0 && Date.now() < graceUntil) await sleep(pollMs);
  const left = liveRuns().map((r) => r.runId);
  return { finished: seen.size - remaining.length, stopped: remaining.length, left };
}
