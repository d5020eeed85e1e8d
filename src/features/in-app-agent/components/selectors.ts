/**
 * What the panel derives from the store's state: pure functions of `(state, now)` that the panel's
 * parts read through `useAgentSelector` (panel-context.tsx), so each part renders again only when
 * what it shows changed. `now` is the panel's clock (it ticks once a second while approvals wait).
 * Selectors that build objects are memoized per input object, so the same state gives the same
 * object and an unchanged request keeps its identity from one render snapshot to the next.
 */
import {
  canReviseLastTurn,
  effectiveApprovalDrafts,
  effectiveQuestionDrafts,
  selectOpenApprovals as openApprovalsOf,
  type AgentState,
} from './agent-store';
import { isExpired, type ApprovalRequest, type DraftAnswer } from './approval';
import { openRequests, waitingNoun } from './interrupts/batch';
import type { QuestionDraft } from './interrupts/question';

/** A selector as `useAgentSelector` takes it. */
export type AgentSelector<T> = (state: AgentState, now: number) => T;

/** An answer is being sent, streamed, reconnected to or stopped. */
export const selectBusy: AgentSelector<boolean> = (state) => state.connection !== 'idle';

export const selectCanSend: AgentSelector<boolean> = (state) => !state.signedOut;

/** Why nothing can be sent (shown under the input instead of the status). */
export const selectBlockedReason: AgentSelector<string | null> = (state) =>
  state.signedOut ? 'You signed out. Sign in again to use the assistant.' : null;

/** Earlier messages than those shown exist ("Show earlier messages"). */
export const selectHasOlder: AgentSelector<boolean> = (state) => state.olderBefore !== null;

export const selectOpenApprovals: AgentSelector<ApprovalRequest[]> = (state) => openApprovalsOf(state.view);

/** Approvals or questions wait: the panel's clock ticks (countdown, expiry). */
export const selectApprovalsWaiting: AgentSelector<boolean> = (state) => openRequests(state.view).length > 0;

function liveApprovalCount(state: AgentState, now: number): number {
  return openRequests(state.view).filter((request) => !isExpired(request.expiresAt, now)).length;
}

/** The queue waits for an answer to the open approvals. */
export const selectQueueHeld: AgentSelector<boolean> = (state, now) =>
  state.queue.length > 0 && state.connection === 'idle' && liveApprovalCount(state, now) > 0;

/** A non-blocking note under the input (e.g. an approval is still waiting). */
export const selectInputHint: AgentSelector<string | null> = (state, now) => {
  const open = openRequests(state.view);
  const noun = waitingNoun(open);
  if (selectQueueHeld(state, now)) return `Queued messages wait until you answer the ${noun} above (or send one now).`;
  const live = liveApprovalCount(state, now);
  if (live === 0 || live !== open.length) return null;
  return noun === 'request'
    ? 'Requests are waiting above. Sending a new message instead leaves them unanswered.'
    : `${noun === 'approval' ? 'An approval' : 'A question'} is waiting above. Sending a new message instead leaves it unanswered.`;
};

/** The newest turn may be edited or asked again now (nothing runs, no approval waits). */
export const selectCanRevise: AgentSelector<boolean> = (state, now) => canReviseLastTurn(state, now);

const draftsByOpen = new WeakMap<
  ApprovalRequest[],
  WeakMap<Record<string, DraftAnswer | undefined>, Record<string, DraftAnswer | undefined>>
>();
/** Each open request's draft: what the user prepared, else the untouched proposal (memoized per open list and stored drafts). */
export const selectApprovalDrafts: AgentSelector<Record<string, DraftAnswer | undefined>> = (state) => {
  const open = openApprovalsOf(state.view);
  let byStored = draftsByOpen.get(open);
  if (!byStored) {
    byStored = new WeakMap();
    draftsByOpen.set(open, byStored);
  }
  let drafts = byStored.get(state.approvalDrafts);
  if (!drafts) {
    drafts = effectiveApprovalDrafts(open, state.approvalDrafts);
    byStored.set(state.approvalDrafts, drafts);
  }
  return drafts;
};

/** Files attached to the next message: some uploaded, and whether any is still uploading (Send waits). */
export const selectAttachmentsReady: AgentSelector<boolean> = (state) =>
  state.attachments.some((a) => a.status === 'ready');
export const selectAttachmentsUploading: AgentSelector<boolean> = (state) =>
  state.attachments.some((a) => a.status === 'uploading');
const questionDraftsByView = new WeakMap<
  AgentState['view'],
  WeakMap<Record<string, QuestionDraft | undefined>, Record<string, QuestionDraft | undefined>>
>();
/** Each open question's answer so far: what the user put in, else the form's defaults (memoized per view and stored drafts). */
export const selectQuestionDrafts: AgentSelector<Record<string, QuestionDraft | undefined>> = (state) => {
  let byStored = questionDraftsByView.get(state.view);
  if (!byStored) {
    byStored = new WeakMap();
    questionDraftsByView.set(state.view, byStored);
  }
  let drafts = byStored.get(state.questionDrafts);
  if (!drafts) {
    drafts = effectiveQuestionDrafts(state.view, state.questionDrafts);
    byStored.set(state.questionDrafts, drafts);
  }
  return drafts;
};
