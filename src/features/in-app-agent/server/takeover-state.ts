/**
 * The process's look-out for runs to take over (takeover.ts), kept apart so that stopping it
 * (shutdown, the end of a test file) loads nothing else.
 */
import { processWide } from '../host';

export interface Claimer {
  started: boolean;
  timer?: NodeJS.Timeout;
  /** A look is under way; `again`: another was asked for meanwhile. */
  running: boolean;
  again: boolean;
}

export const claimer = processWide<Claimer>('__inAppAgentTakeovers', () => ({
  started: false,
  running: false,
  again: false,
}));

/** Stops looking for runs to take over (before the database is closed: shutdown, tests). */
export function stopTakeovers(): void {
  if (claimer.timer) clearInterval(claimer.timer);
  claimer.timer = undefined;
  claimer.started = false;
}
