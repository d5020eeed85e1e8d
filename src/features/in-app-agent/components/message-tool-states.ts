/**
 * What each tool card of a conversation view shows, derived once per view: the approval requests
 * of each run, and per assistant message the status of each of its tool calls, whether an approved
 * call ran with edited arguments, and the arguments it ran with. Memoized by the view object and
 * per message: a message that did not change between two render snapshots (live-view.ts keeps its
 * object) gets the very same arrays, so its memoized bubble does not render again while another
 * message streams. Pure; used by ConversationMessages.
 */
import type { ConversationView, ViewMessage } from '../schema';
import { approvalRequestOf, cardState, isExpired, type ApprovalRequest, type CardState } from './approval';
import type { ToolCardStatus } from './ToolCallCard';

type AssistantMessage = Extract<ViewMessage, { role: 'assistant' }>;

/** Per tool call of one assistant message, in the order of its `toolCalls`. */
export interface MessageToolStates {
  statuses: ToolCardStatus[];
  /** Approved with arguments the user edited. */
  edited: boolean[];
  /** The arguments it ran with, when an approval recorded them. */
  ranWith: Array<Record<string, unknown> | undefined>;
}

/** The approval requests of a view, by run and by tool call, and the run whose requests can be answered. */
export interface ViewApprovals {
  batches: Map<string, ApprovalRequest[]>;
  byToolCall: Map<string, ApprovalRequest>;
  /** The last run when it waits for approvals (its cards stay answerable-looking while a resume is sent). */
  answerableRun: string | null;
}

const approvalsByView = new WeakMap<ConversationView, ViewApprovals>();

export function viewApprovals(view: ConversationView): ViewApprovals {
  let found = approvalsByView.get(view);
  if (!found) {
    const batches = new Map<string, ApprovalRequest[]>();
    const byToolCall = new Map<string, ApprovalRequest>();
    for (const run of view.runs) {
      const reqs = run.interrupts.map(approvalRequestOf).filter((r): r is ApprovalRequest => r !== null);
      if (reqs.length) batches.set(run.runId, reqs);
      for (const r of reqs) byToolCall.set(r.toolCallId, r);
    }
    const lastRun = view.runs[view.runs.length - 1];
    found = { batches, byToolCall, answerableRun: lastRun?.status === 'interrupted' ? lastRun.runId : null };
    approvalsByView.set(view, found);
  }
  return found;
}

/**
 * A batch is answered as a unit: once one of its requests expired, none can be answered.
 * `pending`: the batch belongs to the last, interrupted run (read-only, it shows as waiting).
 */
export function batchStates(
  reqs: ApprovalRequest[],
  view: ConversationView,
  now: number,
  answerable: boolean,
  pending = answerable,
): CardState[] {
  const expired = reqs.some((r) => !view.decisions[r.toolCallId] && isExpired(r.expiresAt, now));
  return reqs.map((r) => {
    const s = cardState(r, view.decisions, now, answerable, pending);
    return expired && (s.kind === 'open' || s.kind === 'waiting') ? { kind: 'expired' } : s;
  });
}

/** The states of a message without tool calls (one object for all of them). */
export const NO_TOOL_STATES: MessageToolStates = Object.freeze({
  statuses: Object.freeze([]) as unknown as ToolCardStatus[],
  edited: Object.freeze([]) as unknown as boolean[],
  ranWith: Object.freeze([]) as unknown as Array<Record<string, unknown> | undefined>,
});

/** Equal arrays item by item. */
function sameItems<T>(a: readonly T[], b: readonly T[]): boolean {
  return a === b || (a.length === b.length && a.every((item, i) => Object.is(item, b[i])));
}

const byMessage = new WeakMap<ViewMessage, MessageToolStates>();
const byView = new WeakMap<ConversationView, { now: number; states: Map<string, MessageToolStates> }>();

/**
 * The tool states of every assistant message of `view` at `now`, by message id, in one pass. An
 * unchanged message whose states are unchanged gets the arrays it got before.
 */
export function toolStatesOf(view: ConversationView, now: number): Map<string, MessageToolStates> {
  const cached = byView.get(view);
  if (cached && cached.now === now) return cached.states;
  const { batches, byToolCall, answerableRun } = viewApprovals(view);
  const openCalls = new Set<string>();
  if (answerableRun) {
    const reqs = batches.get(answerableRun) ?? [];
    const states = batchStates(reqs, view, now, true);
    reqs.forEach((r, i) => {
      if (states[i]?.kind === 'open') openCalls.add(r.toolCallId);
    });
  }
  const status = (call: AssistantMessage['toolCalls'][number]): ToolCardStatus => {
    const decision = view.decisions[call.id];
    if (decision) {
      if (decision.decision !== 'approved') return decision.decision;
      return call.result !== undefined ? call.status : 'approved';
    }
    if (call.result !== undefined) return call.status;
    const req = byToolCall.get(call.id);
    if (req) {
      if (req.expiresAt && Date.parse(req.expiresAt) <= now) return 'expired';
      if (openCalls.has(call.id)) return 'awaiting-approval';
    }
    return call.status;
  };
  const states = new Map<string, MessageToolStates>();
  for (const message of view.messages) {
    if (message.role !== 'assistant') continue;
    if (message.toolCalls.length === 0) {
      states.set(message.id, NO_TOOL_STATES);
      continue;
    }
    const next: MessageToolStates = {
      statuses: message.toolCalls.map(status),
      edited: message.toolCalls.map((tc) => {
        const d = view.decisions[tc.id];
        return d?.decision === 'approved' && d.edited === true;
      }),
      ranWith: message.toolCalls.map((tc) => {
        const d = view.decisions[tc.id];
        return d?.decision === 'approved' ? d.args : undefined;
      }),
    };
    const before = byMessage.get(message);
    if (
      before &&
      sameItems(before.statuses, next.statuses) &&
      sameItems(before.edited, next.edited) &&
      sameItems(before.ranWith, next.ranWith)
    ) {
      states.set(message.id, before);
    } else {
      byMessage.set(message, next);
      states.set(message.id, next);
    }
  }
  byView.set(view, { now, states });
  return states;
}
