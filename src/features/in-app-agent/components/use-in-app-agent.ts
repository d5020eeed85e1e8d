'use client';
/**
 * The whole panel state, actions and derived values in one object, for host code that wants
 * everything at once. It renders again on every change of the store (each streamed frame
 * included); the panel's own parts read only what they show, with `useAgentSelector`.
 */
import type { RefObject } from 'react';
import type { FeedbackReason } from '../schema';
import type { AgentState, QueuedMessage } from './agent-store';
import type { ApprovalRequest, DraftAnswer } from './approval';
import type { QuestionDraft } from './interrupts/question';
import {
  useAgentBinding,
  useAgentSelector,
  useNow,
  usePanelUi,
  useConversationHistoryList,
  type PanelView,
} from './panel-context';
import {
  selectApprovalDrafts,
  selectBlockedReason,
  selectCanRevise,
  selectInputHint,
  selectOpenApprovals,
  selectQueueHeld,
  selectQuestionDrafts,
} from './selectors';
import type { ConversationHistory } from './use-conversation-history';

/** The current conversation as the store holds it. */
type ConversationState = Pick<
  AgentState,
  | 'conversationId'
  | 'view'
  | 'feedback'
  | 'hydrating'
  | 'hydrateError'
  | 'connection'
  | 'pendingUserMessage'
  | 'requestError'
  | 'statusNote'
  | 'model'
  | 'announcements'
  | 'queuePaused'
>;

interface InAppAgentContextValue extends ConversationState {
  projectId: string;
  // panel
  open: boolean;
  setOpen: (open: boolean) => void;
  toggle: () => void;
  width: number;
  setWidth: (width: number) => void;
  toggleRef: RefObject<HTMLButtonElement | null>;
  /** Increments when the user opens the panel; the panel then focuses its input. */
  focusRequest: number;
  /** What the panel shows: the conversation or the history list. */
  panelView: PanelView;
  setPanelView: (view: PanelView) => void;
  /** An answer is being sent, streamed, reconnected to or stopped. */
  busy: boolean;
  // input
  draft: string;
  setDraft: (text: string) => void;
  selection: string | null;
  clearSelection: () => void;
  canSend: boolean;
  blockedReason: string | null;
  /** A non-blocking note under the input (e.g. an approval is still waiting). */
  inputHint: string | null;
  /** Sends now, or queues the message while an answer streams. */
  send: (text?: string) => void;
  stop: () => void;
  /** Retry is offered (a refused request, or a failed answer asked again in place). */
  canRetry: boolean;
  retry: () => void;
  // queue
  queue: QueuedMessage[];
  /** The queue waits for an answer to the open approvals. */
  queueHeld: boolean;
  editQueued: (id: string, text: string) => void;
  setQueuedEditing: (id: string, editing: boolean) => void;
  removeQueued: (id: string) => void;
  sendQueuedNow: (id: string) => void;
  clearQueue: () => void;
  // versions, earlier messages
  /** The newest turn may be edited or asked again now (nothing runs, no approval waits). */
  canRevise: boolean;
  editLastMessage: (text: string) => void;
  regenerate: () => void;
  selectVersion: (fromRunId: string, toRunId: string) => void;
  switchingVersion: boolean;
  /** Earlier messages than those shown exist ("Show earlier messages"). */
  hasOlder: boolean;
  loadingOlder: boolean;
  olderError: string | null;
  loadOlder: () => void;
  // history
  newConversation: (opts?: { focus?: boolean }) => void;
  selectConversation: (id: string) => void;
  /** The history list's data and actions (loaded while the list is shown), and the pending undo. */
  history: ConversationHistory;
  // approvals
  openApprovals: ApprovalRequest[];
  approvalDrafts: Record<string, DraftAnswer | undefined>;
  setApprovalDraft: (interruptId: string, draft: DraftAnswer) => void;
  submitApprovals: () => void;
  answerAll: (decision: 'approve' | 'reject', note?: string) => void;
  approvalError: string | null;
  // questions (ask_user)
  questionDrafts: Record<string, QuestionDraft | undefined>;
  setQuestionDraft: (interruptId: string, draft: QuestionDraft) => void;
  answerQuestion: (interruptId: string, action: 'accept' | 'decline') => void;
  // feedback
  submitFeedback: (messageId: string, value: 1 | -1, comment?: string, reasons?: FeedbackReason[]) => Promise<void>;
  /** Unsaved thumbs-down comments of the current conversation, per message. */
  feedbackDrafts: Record<string, string | undefined>;
  setFeedbackDraft: (messageId: string, text: string | null) => void;
  now: number;
}

const whole = (state: AgentState) => state;

export function useInAppAgent(): InAppAgentContextValue {
  const { store, actions } = useAgentBinding();
  const ui = usePanelUi();
  const history = useConversationHistoryList();
  const state = useAgentSelector(whole);
  const now = useNow();
  return {
    ...actions,
    projectId: ui.projectId,
    toggleRef: ui.toggleRef,
    focusRequest: ui.focusRequest,
    panelView: ui.panelView,
    setPanelView: ui.setPanelView,
    selection: ui.selection,
    clearSelection: ui.clearSelection,
    history,
    open: state.open,
    width: state.width,
    conversationId: state.conversationId,
    view: state.view,
    feedback: state.feedback,
    hydrating: state.hydrating,
    hydrateError: state.hydrateError,
    busy: state.connection !== 'idle',
    connection: state.connection,
    pendingUserMessage: state.pendingUserMessage,
    requestError: state.requestError,
    statusNote: state.statusNote,
    model: state.model,
    announcements: state.announcements,
    draft: state.draft,
    canSend: !state.signedOut,
    blockedReason: selectBlockedReason(state, now),
    inputHint: selectInputHint(state, now),
    canRetry: store.canRetry,
    queuePaused: state.queuePaused,
    queue: state.queue,
    queueHeld: selectQueueHeld(state, now),
    canRevise: selectCanRevise(state, now),
    switchingVersion: state.switchingVersion,
    hasOlder: state.olderBefore !== null,
    loadingOlder: state.loadingOlder,
    olderError: state.olderError,
    openApprovals: selectOpenApprovals(state, now),
    approvalDrafts: selectApprovalDrafts(state, now),
    approvalError: state.approvalError,
    questionDrafts: selectQuestionDrafts(state, now),
    feedbackDrafts: state.feedbackDrafts,
    now,
  };
}
