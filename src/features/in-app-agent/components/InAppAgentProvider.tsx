'use client';
/**
 * The panel's React layer over the agent store (agent-store.ts, which owns runs, reconnects, the
 * queue, drafts and storage). This file only connects the store to the page: it gives it the
 * browser's fetch, storage, tab channel, frame scheduler, router and page context; forwards what
 * the page says (visibility, network back online); and keeps the purely visual state (which view
 * the panel shows, focus requests, the page selection, the shortcut, the countdown clock). Render
 * components receive everything through `useInAppAgent()` and props.
 */
import { usePathname, useRouter } from 'next/navigation';
import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  type ReactNode,
  type RefObject,
} from 'react';
import { LIMITS } from '../constants';
import type { FeedbackReason, ProductObject } from '../schema';
import { agentStoreApi, useAgentApi } from './agent-api';
import {
  canReviseLastTurn,
  effectiveApprovalDrafts,
  selectOpenApprovals,
  type AgentState,
  type QueuedMessage,
} from './agent-store';
import { isExpired, type ApprovalRequest, type DraftAnswer } from './approval';
import { buildPageContext } from './page-context';
import { browserStorages } from './storage';
import { openBrowserChannel } from './tab-channel';
import { useAgentState, useAgentStore } from './use-agent-store';
import { useConversationHistory, type ConversationHistory } from './use-conversation-history';

export type { Announcement } from './agent-store';
export type PanelView = 'chat' | 'history';

/** How long a collapsed page selection waits before it stops being context (ms). */
const SELECTION_CLEAR_MS = 400;

/** Inputs that take text (where Escape should first leave the field). */
export function isTextField(el: Element | null): el is HTMLElement {
  if (!el) return false;
  if (el instanceof HTMLTextAreaElement) return true;
  if (el instanceof HTMLInputElement)
    return !['button', 'checkbox', 'radio', 'submit', 'reset', 'range', 'color', 'file', 'image'].includes(el.type);
  return el instanceof HTMLElement && el.isContentEditable;
}

/** The current conversation as the store holds it: the panel reads these fields as they are. */
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

export interface InAppAgentContextValue extends ConversationState {
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
  // conversation: the store's fields (`ConversationState`), and
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
  /** Asks the newest turn again with this text instead of its message (a new version). */
  editLastMessage: (text: string) => void;
  /** Asks the newest turn's message again for a new answer (a new version). */
  regenerate: () => void;
  /** Shows another version of a turn (`toRunId` instead of `fromRunId`). */
  selectVersion: (fromRunId: string, toRunId: string) => void;
  switchingVersion: boolean;
  /** Earlier messages than those shown exist ("Show earlier messages"). */
  hasOlder: boolean;
  loadingOlder: boolean;
  olderError: string | null;
  loadOlder: () => void;
  // history
  /** Starts a new conversation; `focus: false` keeps the current view (e.g. the history list). */
  newConversation: (opts?: { focus?: boolean }) => void;
  selectConversation: (id: string) => void;
  /** The history list's data and actions (loaded while the list is shown), and the pending undo. */
  history: ConversationHistory;
  // approvals
  openApprovals: ApprovalRequest[];
  approvalDrafts: Record<string, DraftAnswer | undefined>;
  setApprovalDraft: (interruptId: string, draft: DraftAnswer) => void;
  submitApprovals: () => void;
  /** Approve all / Reject all (one note for a rejected batch). */
  answerAll: (decision: 'approve' | 'reject', note?: string) => void;
  approvalError: string | null;
  // feedback
  submitFeedback: (messageId: string, value: 1 | -1, comment?: string, reasons?: FeedbackReason[]) => Promise<void>;
  /** Unsaved thumbs-down comments of the current conversation, per message. */
  feedbackDrafts: Record<string, string | undefined>;
  setFeedbackDraft: (messageId: string, text: string | null) => void;
  now: number;
}

const Ctx = createContext<InAppAgentContextValue | null>(null);

export function useInAppAgent(): InAppAgentContextValue {
  const value = useContext(Ctx);
  if (!value) throw new Error('useInAppAgent must be used inside <InAppAgentProvider>.');
  return value;
}

export interface InAppAgentProviderProps {
  projectId: string;
  /** The signed-in user: the panel's browser storage is kept per user. */
  userId: string;
  /**
   * The assistant changed objects of the product (`{kind, id}`, e.g. an issue it created or
   * closed): the host refreshes what its page shows.
   */
  onProductChange?: (objects: ProductObject[]) => void;
  children: ReactNode;
}

export function InAppAgentProvider({ projectId, userId, onProductChange, children }: InAppAgentProviderProps) {
  const api = useAgentApi();
  const router = useRouter();
  const pathname = usePathname();
  const [selection, setSelection] = useState<string | null>(null);
  const [panelView, setPanelView] = useState<PanelView>('chat');
  const [focusRequest, setFocusRequest] = useState(0);
  const toggleRef = useRef<HTMLButtonElement | null>(null);
  // What the store reads when it sends or navigates: the latest render's values (it outlives renders).
  const latest = useRef({ api, router, pathname, selection, onProductChange });
  latest.current = { api, router, pathname, selection, onProductChange };

  const store = useAgentStore(
    () => ({
      projectId,
      userId,
      api: agentStoreApi(() => latest.current.api, projectId),
      fetch: (input, init) => fetch(input, init),
      storage: browserStorages(),
      openChannel: openBrowserChannel,
      scheduleFrame: (callback) => {
        const frame = window.requestAnimationFrame(callback);
        return () => window.cancelAnimationFrame(frame);
      },
      pageContext: () =>
        buildPageContext({
          pathname: latest.current.pathname,
          title: document.title,
          selection: latest.current.selection,
        }),
      navigate: (path) => latest.current.router.push(path),
      onProductChange: (objects) => latest.current.onProductChange?.(objects),
      viewportWidth: () => window.innerWidth,
    }),
    [projectId, userId],
  );
  const state = useAgentState(store);

  // ---------------------------------------------------------------- panel
  const requestFocus = useCallback(() => {
    setPanelView('chat');
    setFocusRequest((n) => n + 1);
  }, []);

  const setOpen = useCallback(
    (next: boolean) => {
      store.setOpen(next);
      if (next) requestFocus();
      else window.requestAnimationFrame(() => toggleRef.current?.focus());
    },
    [requestFocus, store],
  );
  const toggle = useCallback(() => setOpen(!store.getSnapshot().open), [setOpen, store]);

  // Ctrl/⌘+I toggles the panel anywhere in the project. With the panel already open but the
  // focus on the page, it brings the focus back to the panel's input instead of closing it.
  // Rich-text editors (contenteditable) keep the key for italics, and a key the page already
  // handled (defaultPrevented) is left alone; plain inputs and textareas have no italics, so the
  // shortcut works there.
  useEffect(() => {
    function onKey(e: KeyboardEvent) {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || e.key.toLowerCase() !== 'i') return;
      if (e.defaultPrevented || e.isComposing) return;
      const target = e.target instanceof Element ? e.target : null;
      if (target instanceof HTMLElement && target.isContentEditable) return;
      e.preventDefault();
      const panel = document.getElementById('assistant-panel');
      if (store.getSnapshot().open && panel && !panel.contains(document.activeElement)) {
        requestFocus();
        return;
      }
      toggle();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [toggle, requestFocus, store]);

  // Another tab may have moved the conversation on: look again when this one is shown again, and
  // reconnect at once when the network comes back instead of waiting out the backoff.
  useEffect(() => {
    const onVisible = () => {
      if (document.visibilityState === 'visible') store.checkLiveRun();
    };
    const onOnline = () => store.reconnectNow();
    document.addEventListener('visibilitychange', onVisible);
    window.addEventListener('focus', onVisible);
    window.addEventListener('online', onOnline);
    return () => {
      document.removeEventListener('visibilitychange', onVisible);
      window.removeEventListener('focus', onVisible);
      window.removeEventListener('online', onOnline);
    };
  }, [store]);

  // The user's text selection on the page (outside the panel) becomes page context. When it
  // collapses (the user clicked elsewhere on the page), it stops being context after a short
  // pause; moving into the panel (to type the question) keeps it.
  useEffect(() => {
    let timer: number | null = null;
    const inPanel = (node: Node | null | undefined) => {
      const el = node instanceof Element ? node : node?.parentElement;
      return Boolean(el?.closest('[data-testid="assistant-panel"]'));
    };
    function onSelection() {
      const sel = window.getSelection();
      const text = sel?.toString().trim() ?? '';
      if (text) {
        if (inPanel(sel?.anchorNode)) return;
        if (timer !== null) window.clearTimeout(timer);
        timer = null;
        setSelection(text.slice(0, LIMITS.maxSelectionChars));
        return;
      }
      if (timer !== null) window.clearTimeout(timer);
      timer = window.setTimeout(() => {
        timer = null;
        const current = window.getSelection();
        if (current?.toString().trim()) return;
        if (inPanel(document.activeElement) || inPanel(current?.anchorNode)) return;
        setSelection(null);
      }, SELECTION_CLEAR_MS);
    }
    document.addEventListener('selectionchange', onSelection);
    return () => {
      document.removeEventListener('selectionchange', onSelection);
      if (timer !== null) window.clearTimeout(timer);
    };
  }, []);
  // biome-ignore lint/correctness/useExhaustiveDependencies: a selection belongs to one page; navigating drops it
  useEffect(() => setSelection(null), [pathname]);

  // ---------------------------------------------------------------- approvals
  const openApprovals = selectOpenApprovals(state.view);
  const [now, setNow] = useState(() => Date.now());
  // Tick once a second while approvals are open (countdown, expiry).
  useEffect(() => {
    if (openApprovals.length === 0) return;
    setNow(Date.now());
    const timer = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [openApprovals.length]);
  const approvalDrafts = useMemo(
    () => effectiveApprovalDrafts(openApprovals, state.approvalDrafts),
    [openApprovals, state.approvalDrafts],
  );
  const liveApprovals = openApprovals.filter((request) => !isExpired(request.expiresAt, now));
  const queueHeld = state.queue.length > 0 && liveApprovals.length > 0 && state.connection === 'idle';

  // ---------------------------------------------------------------- history
  const history = useConversationHistory({
    api,
    projectId,
    active: state.open && panelView === 'history',
    version: state.runsFinished,
    onDeleted: (id) => store.forgetConversation(id),
  });

  const newConversation = useCallback(
    (opts?: { focus?: boolean }) => {
      store.newConversation();
      if (opts?.focus !== false) requestFocus();
    },
    [requestFocus, store],
  );
  const selectConversation = useCallback(
    (id: string) => {
      store.selectConversation(id);
      setPanelView('chat');
    },
    [store],
  );

  const send = useCallback(
    (text?: string) => {
      store.send(text);
      // The selection was context for this message; the next one starts without it.
      setSelection(null);
    },
    [store],
  );

  const busy = state.connection !== 'idle';
  const inputHint = queueHeld
    ? 'Queued messages wait until you answer the approval above (or send one now).'
    : liveApprovals.length > 0 && liveApprovals.length === openApprovals.length
      ? 'An approval is waiting above. Sending a new message instead leaves it unanswered.'
      : null;

  const value: InAppAgentContextValue = {
    projectId,
    open: state.open,
    setOpen,
    toggle,
    width: state.width,
    setWidth: (width) => store.setWidth(width),
    toggleRef,
    focusRequest,
    panelView,
    setPanelView,
    conversationId: state.conversationId,
    view: state.view,
    feedback: state.feedback,
    hydrating: state.hydrating,
    hydrateError: state.hydrateError,
    busy,
    connection: state.connection,
    pendingUserMessage: state.pendingUserMessage,
    requestError: state.requestError,
    statusNote: state.statusNote,
    model: state.model,
    announcements: state.announcements,
    draft: state.draft,
    setDraft: (text) => store.setDraft(text),
    selection,
    clearSelection: () => setSelection(null),
    canSend: !state.signedOut,
    blockedReason: state.signedOut ? 'You signed out. Sign in again to use the assistant.' : null,
    inputHint,
    send,
    stop: () => store.stop(),
    canRetry: store.canRetry,
    retry: () => store.retry(),
    queuePaused: state.queuePaused,
    queue: state.queue,
    queueHeld,
    editQueued: (id, text) => store.editQueued(id, text),
    setQueuedEditing: (id, editing) => store.setQueuedEditing(id, editing),
    removeQueued: (id) => store.removeQueued(id),
    sendQueuedNow: (id) => store.sendQueuedNow(id),
    clearQueue: () => store.clearQueue(),
    canRevise: canReviseLastTurn(state, now),
    editLastMessage: (text) => store.editLastMessage(text),
    regenerate: () => store.regenerate(),
    selectVersion: (fromRunId, toRunId) => void store.selectVersion(fromRunId, toRunId),
    switchingVersion: state.switchingVersion,
    hasOlder: state.olderBefore !== null,
    loadingOlder: state.loadingOlder,
    olderError: state.olderError,
    loadOlder: () => void store.loadOlder(),
    newConversation,
    selectConversation,
    history,
    openApprovals,
    approvalDrafts,
    setApprovalDraft: (interruptId, draft) => store.setApprovalDraft(interruptId, draft),
    submitApprovals: () => store.submitApprovals(),
    answerAll: (decision, note) => store.answerAll(decision, note),
    approvalError: state.approvalError,
    submitFeedback: (messageId, rating, comment, reasons) => store.submitFeedback(messageId, rating, comment, reasons),
    feedbackDrafts: state.feedbackDrafts,
    setFeedbackDraft: (messageId, text) => store.setFeedbackDraft(messageId, text),
    now,
  };

  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}
