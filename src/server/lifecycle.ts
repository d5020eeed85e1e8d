/**
 * The process's life stage, shared by the readiness probe, the routes that start work and the
 * shutdown sequence: `serving`, then `draining` from the first SIGTERM/SIGINT on (readiness is
 * false at once and new runs are refused with 503 DRAINING), until the process exits.
 */
import 'server-only';
import { processWide } from '@/server/process-wide';
interface Holder {
  drainingSince?: number;
}
const holder: Holder = processWide<Holder>('__trackerLifecycle', () => ({}));

/** Seconds a client refused because this instance is draining is told to wait (another one answers). */
export const DRAINING_RETRY_AFTER_SECONDS = 2;

export function isDraining(): boolean {
  return holder.drainingSince !== undefined;
}

/** Marks the process as draining (idempotent). */
export function startDraining(): void {
  holder.drainingSince ??= Date.now();
}

/** Back to serving (tests that drain in-process). */
export function resetLifecycleForTests(): void {
  holder.drainingSince = undefined;
}
