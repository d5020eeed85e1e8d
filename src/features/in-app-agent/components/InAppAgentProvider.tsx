'use client';
/**
 * The panel's controller. Owns open/closed, width, what the panel shows (chat or history), the
 * current conversation, the live stream (@ag-ui/client HttpAgent against the module's route),
 * pending approvals, feedback, the history list (use-conversation-history.ts) and the live-region
 * announcements, plus the user's unsent work, kept in localStorage so a reload, a closed panel or a
 * refused request never loses it: the message draft per conversation, the approval answers being
 * prepared per interrupt, and unsaved thumbs-down comments per message. Every AG-UI event is folded
 * with the same reducer the server uses for replay, so what streams live and what a reload shows
 * come from one `ConversationView`; after a stop or a broken stream the server's copy is loaded
 * quietly so the two agree. Render components receive everything as props; this (with the review
 * page's export controller) is the only place that talks to the network.
 */
import { HttpAgent, type BaseEvent } from '@ag-ui/client';
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
import { z } from 'zod';
import { CUSTOM_EVENTS, INTERRUPT_REASON_TOOL_APPROVAL, LIMITS } from '../constants';
import { emptyView, foldEvent, openInterrupts } from '../fold';
import {
  AgentEventSchema,
  ModelInfoSchema,
  NavigateValueSchema,
  type AgentEvent,
  type ConversationView,
  type FeedbackReason,
  type ModelInfo,
  type ResumeEntry,
  type ViewMessage,
} from '../schema';
import { trpcErrorCode, trpcErrorMessage, useAgentApi } from './agent-api';
import {
  DraftAnswerSchema,
  buildResume,
  initialDraft,
  isExpired,
  readApprovalInterrupt,
  stableStringify,
  type ApprovalRequest,
  type DraftAnswer,
} from './approval';
import { describeError, errorFromHttp, type PanelError } from './errors';
import type { FeedbackValue } from './FeedbackButtons';
import { buildPageContext } from './page-context';
import { internalPath } from './safe-url';
import { PANEL_WIDTH, clampWidth, readRecord, readStorage, storageKeys, writeRecord, writeStorage } from './storage';
import { useConversationHistory, type ConversationHistory } from './use-conversation-history';

/** One message for screen readers (the live region lists the last few). */
export interface Announcement {
  id: number;
  text: string;
}

export type PanelView = 'chat' | 'history';

/** How long a collapsed page selection waits before it stops being context (ms). */
const SELECTION_CLEAR_MS = 400;
const FeedbackDraftSchema = z.string().max(LIMITS.maxFeedbackChars * 2);

/** Views equal as JSON (undefined fields ignored, key order ignored). */
function sameView(a: ConversationView, b: ConversationView): boolean {
  return stableStringify(JSON.parse(JSON.stringify(a))) === stableStringify(JSON.parse(JSON.stringify(b)));
}

/** Inputs that take text (where Escape should first leave the field). */
export function isTextField(el: Element | null): el is HTMLElement {
  if (!el) return false;
  if (el instanceof HTMLTextAreaElement) return true;
  if (el instanceof HTMLInputElement) return !['button', 'checkbox', 'radio', 'submit', 'reset', 'range', 'color', 'file', 'image'].includes(el.type);
  return el instanceof HTMLElement && el.isContentEditable;
}

export interface InAppAgentContextValue {
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
  // conversation
  conversationId: string | null;
  view: ConversationView;
  feedback: Record<string, FeedbackValue | undefined>;
  hydrating: boolean;
  hydrateError: string | null;
  busy: boolean;
  pendingUserMessage: string | null;
  requestError: PanelError | null;
  model: ModelInfo | null;
  /** The last few live-region messages (new answers, approval requests, failures), oldest first. */
  announcements: Announcement[];
  // input
  draft: string;
  setDraft: (text: string) => void;
  selection: string | null;
  clearSelection: () => void;
  canSend: boolean;
  blockedReason: string | null;
  /** A non-blocking note under the input (e.g. an approval is still waiting). */
  inputHint: string | null;
  send: (text?: string) => void;
  stop: () => void;
  retry: () => void;
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
  const v = useContext(Ctx);
  if (!v) throw new Error('useInAppAgent must be used inside <InAppAgentProvider>.');
  return v;
}

let localCounter = 0;
function localId(prefix: string): string {
  localCounter += 1;
  const rnd = typeof crypto !== 'undefined' && 'randomUUID' in crypto ? crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
  return `${prefix}${rnd}-${localCounter}`;
}

function cloneMessage(m: ViewMessage): ViewMessage {
  return m.role === 'assistant' ? { ...m, toolCalls: m.toolCalls.map((t) => ({ ...t })) } : { ...m };
}

/**
 * A render snapshot of the mutable live view: messages touched since the last snapshot get new
 * objects, the others keep their identity (so memoized bubbles do not re-render per token).
 */
function snapshotView(view: ConversationView, prev: ConversationView, dirty: Set<string> | 'all'): ConversationView {
  const prevById = new Map(prev.messages.map((m) => [m.id, m]));
  return {
    threadId: view.threadId,
    messages: view.messages.map((m) => {
      const old = prevById.get(m.id);
      return dirty === 'all' || !old || dirty.has(m.id) ? cloneMessage(m) : old;
    }),
    runs: view.runs.map((r) => ({ ...r, interrupts: [...r.interrupts] })),
    decisions: { ...view.decisions },
    navigations: [...view.navigations],
  };
}

function lastUserText(view: ConversationView): string | null {
  for (let i = view.messages.length - 1; i >= 0; i--) {
    const m = view.messages[i]!;
    if (m.role === 'user') return m.content;
  }
  return null;
}

function navigateHrefFromToolResult(content: string): string | null {
  try {
    const v = JSON.parse(content) as unknown;
    const direct = NavigateValueSchema.safeParse(v);
    if (direct.success) return direct.data.href;
    const nested = NavigateValueSchema.safeParse((v as { structuredContent?: unknown } | null)?.structuredContent);
    return nested.success ? nested.data.href : null;
  } catch {
    return null;
  }
}

export interface InAppAgentProviderProps {
  projectId: string;
  children: ReactNode;
}

export function InAppAgentProvider({ projectId, children }: InAppAgentProviderProps) {
  const api = useAgentApi();
  const router = useRouter();
  const pathname = usePathname();

  // ---------------------------------------------------------------- panel state (persisted)
  const [open, setOpenState] = useState(false);
  const [width, setWidthState] = useState<number>(PANEL_WIDTH.default);
  const [focusRequest, setFocusRequest] = useState(0);
  const [panelView, setPanelView] = useState<PanelView>('chat');
  const toggleRef = useRef<HTMLButtonElement | null>(null);
  const [restored, setRestored] = useState(false);

  // ---------------------------------------------------------------- conversation state
  const [conversationId, setConversationIdState] = useState<string | null>(null);
  const [view, setView] = useState<ConversationView>(() => emptyView());
  const viewRef = useRef<ConversationView>(emptyView());
  const renderedRef = useRef<ConversationView>(view);
  const dirtyRef = useRef<Set<string> | 'all'>(new Set());
  const frameRef = useRef<number | null>(null);
  const [feedback, setFeedback] = useState<Record<string, FeedbackValue | undefined>>({});
  const [feedbackDrafts, setFeedbackDrafts] = useState<Record<string, string | undefined>>({});
  const [hydrating, setHydrating] = useState(false);
  const [hydrateError, setHydrateError] = useState<string | null>(null);
  const loadedRef = useRef<string | null | undefined>(undefined);
  const hydrateToken = useRef(0);

  const [busy, setBusy] = useState(false);
  const busyRef = useRef(false);
  const agentRef = useRef<HttpAgent | null>(null);
  const [pendingUserMessage, setPendingUserMessage] = useState<string | null>(null);
  const [requestError, setRequestError] = useState<PanelError | null>(null);
  const lastSentRef = useRef<string | null>(null);
  const [model, setModel] = useState<ModelInfo | null>(null);
  const [announcements, setAnnouncements] = useState<Announcement[]>([]);
  const announceId = useRef(0);
  const [historyVersion, setHistoryVersion] = useState(0);

  const [draft, setDraftState] = useState('');
  const draftRef = useRef('');
  draftRef.current = draft;
  const [selection, setSelection] = useState<string | null>(null);

  const [approvalDraftsState, setApprovalDrafts] = useState<Record<string, DraftAnswer | undefined>>({});
  const [approvalError, setApprovalError] = useState<string | null>(null);
  const [now, setNow] = useState(() => Date.now());

  const conversationIdRef = useRef<string | null>(null);
  conversationIdRef.current = conversationId;

  const announce = useCallback((text: string) => {
    const t = text.trim();
    if (!t) return;
    announceId.current += 1;
    const id = announceId.current;
    setAnnouncements((prev) => [...prev.slice(-2), { id, text: t }]);
  }, []);

  // Restore persisted UI state after mount (localStorage is not available during SSR).
  useEffect(() => {
    const w = Number(readStorage(storageKeys.width()));
    if (w) setWidthState(clampWidth(w, window.innerWidth));
    const conv = readStorage(storageKeys.conversation(projectId));
    setConversationIdState(conv || null);
    setDraftState(readStorage(storageKeys.draft(projectId, conv || null)) ?? '');
    setOpenState(readStorage(storageKeys.open()) === '1');
    setRestored(true);
  }, [projectId]);

  const requestFocus = useCallback(() => {
    setPanelView('chat');
    setFocusRequest((n) => n + 1);
  }, []);

  const setOpen = useCallback(
    (next: boolean) => {
      setOpenState(next);
      writeStorage(storageKeys.open(), next ? '1' : null);
      if (next) requestFocus();
      else window.requestAnimationFrame(() => toggleRef.current?.focus());
    },
    [requestFocus],
  );
  const openRef = useRef(open);
  openRef.current = open;
  const toggle = useCallback(() => setOpen(!openRef.current), [setOpen]);

  const setWidth = useCallback((w: number) => {
    const c = clampWidth(w, typeof window === 'undefined' ? undefined : window.innerWidth);
    setWidthState(c);
    writeStorage(storageKeys.width(), String(c));
  }, []);

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
      if (openRef.current && panel && !panel.contains(document.activeElement)) {
        requestFocus();
        return;
      }
      toggle();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [toggle, requestFocus]);

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
  useEffect(() => setSelection(null), [pathname]);

  // ---------------------------------------------------------------- view plumbing
  const flush = useCallback(() => {
    frameRef.current = null;
    const snap = snapshotView(viewRef.current, renderedRef.current, dirtyRef.current);
    dirtyRef.current = new Set();
    renderedRef.current = snap;
    setView(snap);
  }, []);
  const scheduleFlush = useCallback(() => {
    if (frameRef.current !== null) return;
    frameRef.current = typeof window !== 'undefined' ? window.requestAnimationFrame(flush) : null;
    if (frameRef.current === null) flush();
  }, [flush]);
  const flushNow = useCallback(() => {
    if (frameRef.current !== null) window.cancelAnimationFrame(frameRef.current);
    flush();
  }, [flush]);
  const replaceView = useCallback(
    (next: ConversationView) => {
      viewRef.current = next;
      dirtyRef.current = 'all';
      flushNow();
    },
    [flushNow],
  );
  useEffect(() => () => {
    if (frameRef.current !== null) window.cancelAnimationFrame(frameRef.current);
  }, []);

  const setConversationId = useCallback(
    (id: string | null) => {
      setConversationIdState(id);
      conversationIdRef.current = id;
      writeStorage(storageKeys.conversation(projectId), id);
    },
    [projectId],
  );

  // Draft, kept per conversation so a reload does not lose it.
  const setDraft = useCallback(
    (text: string) => {
      setDraftState(text);
      writeStorage(storageKeys.draft(projectId, conversationIdRef.current), text);
    },
    [projectId],
  );

  // ---------------------------------------------------------------- unsent work (approvals, comments)
  /**
   * Restores the approval answers and thumbs-down comments kept for a conversation: those of
   * requests still open (not decided, not expired) and of messages still there; the rest is
   * dropped from storage.
   */
  const restoreDrafts = useCallback(
    (id: string, v: ConversationView) => {
      const openIds = new Set(
        openInterrupts(v)
          .filter((i) => i.reason === INTERRUPT_REASON_TOOL_APPROVAL && !isExpired(i.expiresAt, Date.now()))
          .map((i) => i.id),
      );
      const storedApprovals = readRecord(storageKeys.approvals(projectId, id), DraftAnswerSchema);
      const keptApprovals: Record<string, DraftAnswer> = {};
      for (const [k, d] of Object.entries(storedApprovals)) if (openIds.has(k)) keptApprovals[k] = d;
      writeRecord(storageKeys.approvals(projectId, id), keptApprovals);
      setApprovalDrafts(keptApprovals);

      const messageIds = new Set(v.messages.filter((m) => m.role === 'assistant').map((m) => m.id));
      const storedComments = readRecord(storageKeys.feedbackDrafts(projectId, id), FeedbackDraftSchema);
      const keptComments: Record<string, string> = {};
      for (const [k, t] of Object.entries(storedComments)) if (messageIds.has(k)) keptComments[k] = t;
      writeRecord(storageKeys.feedbackDrafts(projectId, id), keptComments);
      setFeedbackDrafts(keptComments);
    },
    [projectId],
  );

  // ---------------------------------------------------------------- hydrate from the server
  /**
   * Loads a conversation from the server. `quiet` (after a stop or a refused request): no loading
   * state, the live view stays until the server has closed the run, and it is replaced only when
   * the server's copy differs, so nothing flickers and the scroll position stays.
   */
  const hydrate = useCallback(
    async (id: string, opts: { attempt?: number; quiet?: boolean } = {}) => {
      const attempt = opts.attempt ?? 0;
      const quiet = opts.quiet === true;
      const token = ++hydrateToken.current;
      if (quiet) setHydrating(false);
      else {
        setHydrating(true);
        setHydrateError(null);
      }
      try {
        const res = await api.getConversation({ projectId, conversationId: id });
        if (token !== hydrateToken.current || busyRef.current || conversationIdRef.current !== id) return;
        const last = res.view.runs[res.view.runs.length - 1];
        const running = last?.status === 'running';
        if (quiet && running) {
          // The server is still closing the run (it keeps what streamed): look again shortly.
          if (attempt < 8) {
            window.setTimeout(() => {
              if (conversationIdRef.current === id && !busyRef.current && hydrateToken.current === token) {
                void hydrate(id, { quiet: true, attempt: attempt + 1 });
              }
            }, 250 * (attempt + 1));
          }
          return;
        }
        loadedRef.current = id;
        const next = structuredClone(res.view);
        if (!quiet || !sameView(next, viewRef.current)) replaceView(next);
        const fb: Record<string, FeedbackValue> = {};
        for (const [k, v] of Object.entries(res.feedback ?? {})) {
          fb[k] = { value: v.value === 1 ? 1 : -1, comment: v.comment ?? null, reasons: v.reasons };
        }
        if (!quiet) setFeedback(fb);
        const lastModel = [...res.view.runs].reverse().find((r) => r.model)?.model;
        if (lastModel) setModel(lastModel);
        restoreDrafts(id, next);
        // A run still marked running (the page was reloaded mid-answer): look again shortly.
        if (!quiet && running && attempt < 5) {
          window.setTimeout(() => {
            if (conversationIdRef.current === id && !busyRef.current) void hydrate(id, { attempt: attempt + 1 });
          }, 1500);
        }
      } catch (err) {
        if (token !== hydrateToken.current || quiet) return;
        const code = trpcErrorCode(err);
        if (code === 'NOT_FOUND' || code === 'CONVERSATION_NOT_FOUND') {
          // Deleted or not ours: start fresh instead of showing an error.
          setConversationId(null);
          loadedRef.current = null;
          replaceView(emptyView());
          setFeedback({});
          setFeedbackDrafts({});
          setApprovalDrafts({});
        } else {
          setHydrateError(trpcErrorMessage(err, 'Could not load the conversation.'));
        }
      } finally {
        if (!quiet && token === hydrateToken.current) setHydrating(false);
      }
    },
    [api, projectId, replaceView, restoreDrafts, setConversationId],
  );

  // Load the current conversation when the panel is open and it is not loaded yet.
  useEffect(() => {
    if (!restored || !open || busyRef.current) return;
    if (loadedRef.current === conversationId) return;
    if (conversationId) void hydrate(conversationId);
    else {
      loadedRef.current = null;
      replaceView(emptyView());
      setFeedback({});
    }
  }, [restored, open, conversationId, hydrate, replaceView]);

  // Model notice: from the stream, the replay, or the server's configuration.
  useEffect(() => {
    if (!open || model) return;
    let cancelled = false;
    api
      .modelInfo({ projectId })
      .then((info) => {
        const parsed = ModelInfoSchema.safeParse(info);
        if (!cancelled && parsed.success) setModel((m) => m ?? parsed.data);
      })
      .catch(() => undefined);
    return () => {
      cancelled = true;
    };
  }, [open, model, api, projectId]);

  // ---------------------------------------------------------------- live events
  const navigatedRef = useRef<Set<string>>(new Set());
  const navigate = useCallback(
    (href: unknown) => {
      const path = internalPath(href);
      if (!path || navigatedRef.current.has(path)) return;
      navigatedRef.current.add(path);
      router.push(path);
    },
    [router],
  );

  const onEvent = useCallback(
    (raw: BaseEvent) => {
      const parsed = AgentEventSchema.safeParse(raw);
      if (!parsed.success) return;
      const ev: AgentEvent = parsed.data;
      const v = viewRef.current;
      foldEvent(v, ev);
      const dirty = dirtyRef.current;
      const mark = (id: string) => {
        if (dirty !== 'all') dirty.add(id);
      };
      switch (ev.type) {
        case 'RUN_STARTED':
          dirtyRef.current = 'all';
          if (ev.threadId && ev.threadId !== conversationIdRef.current) {
            // A new conversation got its id: whatever is typed now belongs to it.
            writeStorage(storageKeys.draft(projectId, conversationIdRef.current), null);
            setConversationId(ev.threadId);
            writeStorage(storageKeys.draft(projectId, ev.threadId), draftRef.current || null);
          }
          loadedRef.current = ev.threadId;
          break;
        case 'TEXT_MESSAGE_START':
          mark(ev.messageId);
          if (ev.role === 'user') setPendingUserMessage(null);
          break;
        case 'TEXT_MESSAGE_CONTENT':
          mark(ev.messageId);
          break;
        case 'TEXT_MESSAGE_END': {
          mark(ev.messageId);
          const m = v.messages.findLast((x) => x.id === ev.messageId);
          if (m?.role === 'assistant' && m.content.trim()) {
            const text = m.content.length > 600 ? `${m.content.slice(0, 600)}…` : m.content;
            announce(`Assistant: ${text}`);
          }
          break;
        }
        case 'TOOL_CALL_START':
          mark(ev.parentMessageId ?? `msg_${ev.toolCallId}`);
          break;
        case 'TOOL_CALL_ARGS':
        case 'TOOL_CALL_END': {
          const owner = v.messages.findLast((m) => m.role === 'assistant' && m.toolCalls.some((t) => t.id === ev.toolCallId));
          if (owner) mark(owner.id);
          break;
        }
        case 'TOOL_CALL_RESULT': {
          dirtyRef.current = 'all';
          const owner = v.messages.findLast((m) => m.role === 'assistant' && m.toolCalls.some((t) => t.id === ev.toolCallId));
          const call = owner?.role === 'assistant' ? owner.toolCalls.find((t) => t.id === ev.toolCallId) : undefined;
          if (call?.name === 'navigate') {
            const href = navigateHrefFromToolResult(ev.content);
            if (href) navigate(href);
          }
          break;
        }
        case 'CUSTOM':
          dirtyRef.current = 'all';
          if (ev.name === CUSTOM_EVENTS.model) {
            const info = ModelInfoSchema.safeParse(ev.value);
            if (info.success) setModel(info.data);
          } else if (ev.name === CUSTOM_EVENTS.navigate) {
            const nav = NavigateValueSchema.safeParse(ev.value);
            if (nav.success) navigate(nav.data.href);
          }
          break;
        case 'RUN_FINISHED': {
          dirtyRef.current = 'all';
          const approvals = ev.outcome?.type === 'interrupt' ? ev.outcome.interrupts.filter((i) => i.reason === INTERRUPT_REASON_TOOL_APPROVAL).length : 0;
          if (approvals > 0) announce(`The assistant needs your approval for ${approvals} action${approvals === 1 ? '' : 's'}.`);
          break;
        }
        case 'RUN_ERROR':
          dirtyRef.current = 'all';
          announce(`The answer failed: ${describeError(ev.code, ev.message).message}`);
          break;
      }
      scheduleFlush();
    },
    [announce, navigate, projectId, scheduleFlush, setConversationId],
  );

  // ---------------------------------------------------------------- running a request
  const run = useCallback(
    async (opts: { text?: string; resume?: ResumeEntry[] }) => {
      if (busyRef.current) return;
      busyRef.current = true;
      setBusy(true);
      setRequestError(null);
      setApprovalError(null);
      navigatedRef.current = new Set();
      hydrateToken.current++; // a late hydrate must not overwrite the live view
      setHydrating(false);
      if (opts.text !== undefined) {
        lastSentRef.current = opts.text;
        setPendingUserMessage(opts.text);
      }
      const runsBefore = viewRef.current.runs.length;
      const pageContext = buildPageContext({
        pathname,
        title: typeof document !== 'undefined' ? document.title : undefined,
        selection,
      });
      const agent = new HttpAgent({
        url: `/api/projects/${encodeURIComponent(projectId)}/in-app-agent`,
        threadId: conversationIdRef.current ?? 'new',
        initialMessages: opts.text !== undefined ? [{ id: localId('local_'), role: 'user', content: opts.text }] : [],
      });
      agentRef.current = agent;
      const outcome: { failure: PanelError | null } = { failure: null };
      // Returning stopPropagation from onRunFailed tells @ag-ui/client the error is handled here
      // (it then skips its console.error and does not rethrow); its typings omit the field, but
      // the runtime honours it. Errors are still caught below in case a version rethrows.
      const handled = { stopPropagation: true } as unknown as void;
      try {
        await agent.runAgent(
          { forwardedProps: { pageContext }, ...(opts.resume ? { resume: opts.resume } : {}) },
          {
            onEvent: ({ event }) => {
              onEvent(event);
            },
            onRunFailed: ({ error }) => {
              if ((error as { name?: string }).name !== 'AbortError') outcome.failure = errorFromHttp(error);
              return handled;
            },
          },
        );
      } catch (err) {
        const name = (err as { name?: string } | null)?.name;
        if (name !== 'AbortError') outcome.failure = errorFromHttp(err);
      } finally {
        agentRef.current = null;
      }
      const v = viewRef.current;
      const started = v.runs.length > runsBefore;
      const current = v.runs[v.runs.length - 1];
      let interrupted = false;
      if (started && current?.status === 'running') {
        // The stream ended without a terminal event: stopped by the user, or the connection broke.
        interrupted = true;
        const terminal: AgentEvent = outcome.failure
          ? { type: 'RUN_ERROR', message: outcome.failure.message }
          : { type: 'RUN_FINISHED', threadId: v.threadId ?? '', runId: current.runId, outcome: { type: 'cancelled' } };
        foldEvent(v, terminal);
        dirtyRef.current = 'all';
        if (outcome.failure) announce(`The answer failed: ${outcome.failure.message}`);
      } else if (!started && outcome.failure) {
        // Refused before the stream (409 run in progress, 429, expired approval, ...).
        setRequestError(opts.resume ? { ...outcome.failure, retryable: false } : outcome.failure);
        announce(`${opts.resume ? 'Your decisions were not accepted' : 'Your message was not sent'}: ${outcome.failure.message}`);
      }
      if (started || !outcome.failure) setPendingUserMessage(null);
      if (opts.resume && started) {
        setApprovalDrafts({});
        if (conversationIdRef.current) writeRecord(storageKeys.approvals(projectId, conversationIdRef.current), {});
      }
      flushNow();
      busyRef.current = false;
      setBusy(false);
      setHistoryVersion((n) => n + 1);
      const id = conversationIdRef.current;
      // What the server kept may differ from what reached this tab (a stop or a broken connection
      // races the last words; a refused resume leaves the requests as they were): load the
      // server's copy quietly, so this view and a reload agree. Drafts of open requests stay.
      if (id && (interrupted || (opts.resume && !started))) void hydrate(id, { quiet: true });
    },
    [announce, flushNow, hydrate, onEvent, pathname, projectId, selection],
  );

  const openApprovals = useMemo(
    () =>
      openInterrupts(view)
        .map(readApprovalInterrupt)
        .filter((r): r is ApprovalRequest => r !== null),
    [view],
  );
  const liveApprovals = openApprovals.filter((r) => !isExpired(r.expiresAt, now));

  // Tick once a second while approvals are open (countdown, expiry).
  useEffect(() => {
    if (openApprovals.length === 0) return;
    setNow(Date.now());
    const t = window.setInterval(() => setNow(Date.now()), 1000);
    return () => window.clearInterval(t);
  }, [openApprovals.length]);

  const approvalDrafts = useMemo(() => {
    const out: Record<string, DraftAnswer | undefined> = {};
    for (const r of openApprovals) out[r.interruptId] = approvalDraftsState[r.interruptId] ?? initialDraft(r);
    return out;
  }, [openApprovals, approvalDraftsState]);

  const setApprovalDraft = useCallback(
    (interruptId: string, d: DraftAnswer) => {
      setApprovalDrafts((prev) => {
        const next = { ...prev, [interruptId]: d };
        const id = conversationIdRef.current;
        if (id) writeRecord(storageKeys.approvals(projectId, id), next);
        return next;
      });
      setApprovalError(null);
    },
    [projectId],
  );

  const submitApprovals = useCallback(() => {
    const result = buildResume(openApprovals, approvalDrafts, Date.now());
    if (!result.ok) {
      setApprovalError(result.error);
      return;
    }
    void run({ resume: result.resume });
  }, [approvalDrafts, openApprovals, run]);

  const blockedReason = busy ? null : hydrating ? 'Loading the conversation…' : null;
  const canSend = !busy && !blockedReason;
  const inputHint =
    liveApprovals.length > 0 && liveApprovals.length === openApprovals.length
      ? 'An approval is waiting above. Sending a new message instead leaves it unanswered.'
      : null;

  const send = useCallback(
    (text?: string) => {
      const body = (text ?? draft).trim();
      if (!body || busyRef.current || blockedReason) return;
      if (body.length > LIMITS.maxUserMessageChars) {
        setRequestError(describeError('PAYLOAD_TOO_LARGE'));
        return;
      }
      if (text === undefined || text === draft) setDraft('');
      void run({ text: body }).then(() => setSelection(null));
    },
    [blockedReason, draft, run, setDraft],
  );

  const stop = useCallback(() => {
    agentRef.current?.abortRun();
  }, []);
  // Leaving the project (the provider unmounts) stops a running answer; the server keeps what streamed.
  useEffect(() => () => agentRef.current?.abortRun(), []);

  const retry = useCallback(() => {
    const text = lastSentRef.current ?? lastUserText(viewRef.current);
    if (text) void run({ text });
  }, [run]);

  const resetConversationState = useCallback(() => {
    setApprovalDrafts({});
    setFeedbackDrafts({});
    setApprovalError(null);
    setRequestError(null);
    setPendingUserMessage(null);
    lastSentRef.current = null;
  }, []);

  const newConversation = useCallback(
    (opts?: { focus?: boolean }) => {
      if (busyRef.current) return;
      hydrateToken.current++;
      setHydrating(false);
      setConversationId(null);
      loadedRef.current = null;
      replaceView(emptyView());
      setFeedback({});
      resetConversationState();
      setDraftState(readStorage(storageKeys.draft(projectId, null)) ?? '');
      if (opts?.focus !== false) requestFocus();
    },
    [projectId, replaceView, requestFocus, resetConversationState, setConversationId],
  );

  const selectConversation = useCallback(
    (id: string) => {
      if (busyRef.current) return;
      setConversationId(id);
      resetConversationState();
      setDraftState(readStorage(storageKeys.draft(projectId, id)) ?? '');
      loadedRef.current = id;
      replaceView(emptyView(id));
      setFeedback({});
      setPanelView('chat');
      void hydrate(id);
    },
    [hydrate, projectId, replaceView, resetConversationState, setConversationId],
  );

  const forgetConversation = useCallback(
    (id: string) => {
      writeStorage(storageKeys.draft(projectId, id), null);
      writeStorage(storageKeys.approvals(projectId, id), null);
      writeStorage(storageKeys.feedbackDrafts(projectId, id), null);
      if (conversationIdRef.current === id) newConversation({ focus: false });
    },
    [newConversation, projectId],
  );

  const history = useConversationHistory({
    api,
    projectId,
    active: open && panelView === 'history',
    version: historyVersion,
    onDeleted: forgetConversation,
  });

  const submitFeedback = useCallback(
    async (messageId: string, value: 1 | -1, comment?: string, reasons?: FeedbackReason[]) => {
      const id = conversationIdRef.current;
      if (!id) throw new Error('Send a message first.');
      const previous = feedback[messageId];
      setFeedback((f) => ({ ...f, [messageId]: { value, comment: comment ?? null, reasons: reasons ?? [] } }));
      try {
        const extra = { ...(comment ? { comment } : {}), ...(reasons?.length ? { reasons } : {}) };
        await api.submitFeedback({ projectId, conversationId: id, messageId, value, ...extra });
      } catch (err) {
        setFeedback((f) => ({ ...f, [messageId]: previous }));
        throw new Error(trpcErrorMessage(err, 'Could not save your feedback.'));
      }
    },
    [api, feedback, projectId],
  );

  const setFeedbackDraft = useCallback(
    (messageId: string, text: string | null) => {
      setFeedbackDrafts((prev) => {
        const next = { ...prev };
        if (text === null) delete next[messageId];
        else next[messageId] = text.slice(0, LIMITS.maxFeedbackChars * 2);
        const id = conversationIdRef.current;
        if (id) writeRecord(storageKeys.feedbackDrafts(projectId, id), next);
        return next;
      });
    },
    [projectId],
  );

  const value: InAppAgentContextValue = {
    projectId,
    open,
    setOpen,
    toggle,
    width,
    setWidth,
    toggleRef,
    focusRequest,
    panelView,
    setPanelView,
    conversationId,
    view,
    feedback,
    hydrating,
    hydrateError,
    busy,
    pendingUserMessage,
    requestError,
    model,
    announcements,
    draft,
    setDraft,
    selection,
    clearSelection: () => setSelection(null),
    canSend,
    blockedReason,
    inputHint,
    send,
    stop,
    retry,
    newConversation,
    selectConversation,
    history,
    openApprovals,
    approvalDrafts,
    setApprovalDraft,
    submitApprovals,
    approvalError,
    submitFeedback,
    feedbackDrafts,
    setFeedbackDraft,
    now,
  };

  return <Ctx.Provider value={value}>{children}</Ctx.Provider>;
}
