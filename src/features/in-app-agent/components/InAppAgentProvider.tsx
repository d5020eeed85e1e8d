'use client';
/**
 * The panel's React layer over the agent store (agent-store.ts, which owns runs, reconnects, the
 * queue, drafts and storage). This file only connects the store to the page: it gives it the
 * browser's fetch, storage, tab channel, frame scheduler, router and page context; forwards what
 * the page says (visibility, network back online); and keeps the purely visual state (which view
 * the panel shows, focus requests, the page selection, the shortcut, the panel clock). The panel's
 * parts read the store through selectors (panel-context.tsx); the provider itself renders again
 * only for what it keeps.
 */
import { usePathname, useRouter } from 'next/navigation';
import { useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import { LIMITS } from '../constants';
import type { ProductObject } from '../schema';
import { agentStoreApi, useAgentApi } from './agent-api';
import type { AgentStore } from './agent-store';
import {
  AgentContext,
  HistoryContext,
  PanelUiContext,
  createPanelClock,
  useSelectorOn,
  type AgentActions,
  type AgentBinding,
  type PanelUi,
  type PanelView,
} from './panel-context';
import { buildPageContext } from './page-context';
import { selectApprovalsWaiting } from './selectors';
import { browserStorages } from './storage';
import { openBrowserChannel } from './tab-channel';
import { useAgentStore } from './use-agent-store';
import { useConversationHistory } from './use-conversation-history';

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

/** The panel-side setters the actions need (React state setters: stable). */
interface PanelSetters {
  setPanelView: (view: PanelView) => void;
  requestFocus: () => void;
  clearSelection: () => void;
  toggleRef: { current: HTMLButtonElement | null };
}

/** The store's actions as the panel uses them, built once per store. */
function actionsFor(store: AgentStore, panel: PanelSetters): AgentActions {
  const setOpen = (next: boolean) => {
    store.setOpen(next);
    if (next) panel.requestFocus();
    else window.requestAnimationFrame(() => panel.toggleRef.current?.focus());
  };
  return {
    setOpen,
    toggle: () => setOpen(!store.getSnapshot().open),
    setWidth: (width) => store.setWidth(width),
    setDraft: (text) => store.setDraft(text),
    addReference: (ref) => store.addReference(ref),
    send: (text) => {
      store.send(text);
      // The selection was context for this message; the next one starts without it.
      panel.clearSelection();
    },
    stop: () => store.stop(),
    retry: () => store.retry(),
    editQueued: (id, text) => store.editQueued(id, text),
    setQueuedEditing: (id, editing) => store.setQueuedEditing(id, editing),
    removeQueued: (id) => store.removeQueued(id),
    sendQueuedNow: (id) => store.sendQueuedNow(id),
    clearQueue: () => store.clearQueue(),
    editLastMessage: (text) => store.editLastMessage(text),
    regenerate: () => store.regenerate(),
    selectVersion: (fromRunId, toRunId) => void store.selectVersion(fromRunId, toRunId),
    loadOlder: () => void store.loadOlder(),
    newConversation: (opts) => {
      store.newConversation();
      if (opts?.focus !== false) panel.requestFocus();
    },
    selectConversation: (id) => {
      store.selectConversation(id);
      panel.setPanelView('chat');
    },
    setApprovalDraft: (interruptId, draft) => store.setApprovalDraft(interruptId, draft),
    submitApprovals: () => store.submitApprovals(),
    setQuestionDraft: (interruptId, draft) => store.setQuestionDraft(interruptId, draft),
    answerQuestion: (interruptId, action) => store.answerQuestion(interruptId, action),
    answerAll: (decision, note) => store.answerAll(decision, note),
    submitFeedback: (messageId, value, comment, reasons) => store.submitFeedback(messageId, value, comment, reasons),
    setFeedbackDraft: (messageId, text) => store.setFeedbackDraft(messageId, text),
    attachFiles: (files) => store.attachFiles(files),
    removeAttachment: (localId) => store.removeAttachment(localId),
  };
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

  const requestFocus = useCallback(() => {
    setPanelView('chat');
    setFocusRequest((n) => n + 1);
  }, []);
  const clearSelection = useCallback(() => setSelection(null), []);
  const [clock] = useState(() => createPanelClock(Date.now()));
  const binding = useMemo<AgentBinding>(
    () => ({ store, clock, actions: actionsFor(store, { setPanelView, requestFocus, clearSelection, toggleRef }) }),
    [store, clock, requestFocus, clearSelection],
  );
  const { actions } = binding;

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
      actions.toggle();
    }
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [actions, requestFocus, store]);

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

  // The panel clock ticks once a second while approvals wait (countdown, expiry).
  const approvalsWaiting = useSelectorOn(binding, selectApprovalsWaiting);
  useEffect(() => {
    if (!approvalsWaiting) return;
    clock.set(Date.now());
    const timer = window.setInterval(() => clock.set(Date.now()), 1000);
    return () => window.clearInterval(timer);
  }, [approvalsWaiting, clock]);

  // The history list loads while it is shown, and again after each run.
  const historyShown = useSelectorOn(binding, (state) => state.open) && panelView === 'history';
  const runsFinished = useSelectorOn(binding, (state) => state.runsFinished);
  const history = useConversationHistory({
    api,
    projectId,
    active: historyShown,
    version: runsFinished,
    onDeleted: (id) => store.forgetConversation(id),
  });

  const ui = useMemo<PanelUi>(
    () => ({ projectId, toggleRef, focusRequest, panelView, setPanelView, selection, clearSelection }),
    [projectId, focusRequest, panelView, selection, clearSelection],
  );

  return (
    <AgentContext.Provider value={binding}>
      <PanelUiContext.Provider value={ui}>
        <HistoryContext.Provider value={history}>{children}</HistoryContext.Provider>
      </PanelUiContext.Provider>
    </AgentContext.Provider>
  );
}
