/**
 * What catches the user's eye when the assistant waits for them, decided without the DOM: the page
 * title's count, and whether a browser notification is due (an approval or a question came to wait,
 * or a long answer finished, while the panel is closed or the tab hidden). Pure.
 */

/** An answer that took at least this long (sending to its end) is "long": its end is notified. */
export const LONG_ANSWER_MS = 20_000;

const COUNT_PREFIX = /^\(\d+\) /;

/** The title with the number of requests waiting in front ("(2) Issues · Tracker"), or without one. */
export function titleWithCount(title: string, count: number): string {
  const base = title.replace(COUNT_PREFIX, '');
  return count > 0 ? `(${count}) ${base}` : base;
}

/** Whether the user would not see the panel's news: it is closed, or the tab is hidden. */
export function outOfSight(input: { panelOpen: boolean; hidden: boolean }): boolean {
  return !input.panelOpen || input.hidden;
}

export interface AttentionNotice {
  title: string;
  body: string;
  /** The conversation it is about (clicking the notification opens it). */
  conversationId: string | null;
  /** Notifications with the same tag replace each other. */
  tag: string;
}

/**
 * A notice for requests that came to wait: when the total grew since the last look (the first look
 * says nothing: they were waiting already), naming the conversation of the newest one.
 */
export function waitingNotice(
  before: number | null,
  after: {
    total: number;
    conversations: ReadonlyArray<{ conversationId: string; title: string; approvals: number; questions: number }>;
  },
): AttentionNotice | null {
  if (before === null || after.total <= before) return null;
  const newest = after.conversations[0];
  const approvals = after.conversations.reduce((n, c) => n + c.approvals, 0);
  const what =
    approvals === after.total
      ? `${after.total === 1 ? 'An approval waits' : `${after.total} approvals wait`} for you`
      : `${after.total === 1 ? 'A request waits' : `${after.total} requests wait`} for you`;
  return {
    title: `Assistant: ${what}`,
    body: newest ? `In “${newest.title}”.` : 'Open the assistant to answer.',
    conversationId: newest?.conversationId ?? null,
    tag: 'in-app-agent-waiting',
  };
}

/** A notice for an answer that finished after a long time (not one that stopped for an approval). */
export function finishedNotice(input: {
  startedAt: number;
  endedAt: number;
  completed: boolean;
  conversationId: string | null;
  title: string | null;
}): AttentionNotice | null {
  if (!input.completed || input.endedAt - input.startedAt < LONG_ANSWER_MS) return null;
  return {
    title: 'Assistant: your answer is ready',
    body: input.title ? `In “${input.title}”.` : 'Open the assistant to read it.',
    conversationId: input.conversationId,
    tag: 'in-app-agent-finished',
  };
}
