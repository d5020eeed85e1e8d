/**
 * The module's part of a graceful shutdown: the runs live in this process get until `deadlineMs`
 * (epoch ms) to finish on their own; the rest are released (`LiveRun.stop('released')`: their
 * lease is let go at once, so another instance takes each over from its last stored step and
 * finishes it; on the embedded database the next start of the process does) and get
 * `stopGraceMs` to do so. Runs that start while this waits (a request already past the draining
 * check) are included. The host refuses new runs before calling this (503 DRAINING).
 */
import 'server-only';
import { childLog } from '../host';
import { liveRuns } from './live';

export interface DrainResult {
  /** Runs that ended on their own within the window. */
  finished: number;
  /** Runs released at the deadline (another instance goes on with them). */
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
      { event: 'run.released', reason: 'shutdown' },
      'run released: the drain window ended; another instance goes on with it',
    );
    run.stop('released');
  }
  // Releasing needs the database (retried while it is briefly away): bounded all the same.
  const graceUntil = Date.now() + (opts.stopGraceMs ?? 15_000);
  while (liveRuns().length > 0 && Date.now() < graceUntil) await sleep(pollMs);
  const left = liveRuns().map((r) => r.runId);
  return { finished: seen.size - remaining.length, stopped: remaining.length, left };
}
