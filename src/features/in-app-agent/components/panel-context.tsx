'use client';
/**
 * How the panel's parts reach the store: `InAppAgentProvider` puts the store, its actions (created
 * once per store, so they never change identity) and the panel clock in one context, and the
 * few values that are not store state (the page selection, the panel's view, focus requests, the
 * history list) in two small ones. A part reads state with `useAgentSelector(selector)` and
 * renders again only when what it selected changed; nothing hands the whole state down.
 */
import { createContext, useCallback, useContext, useRef, useSyncExternalStore, type RefObject } from 'react';
import type { FeedbackReason } from '../schema';
import type { AgentState, AgentStore } from './agent-store';
import type { DraftAnswer } from './approval';
import type { ReferencePart } from './composer/mention-logic';
import type { QuestionDraft } from './interrupts/question';
import type { AgentSelector } from './selectors';
import type { ConversationHistory } from './use-conversation-history';

export type PanelView = 'chat' | 'history';

/** What the panel can do. Every function keeps its identity for the life of the store. */
export interface AgentActions {
  setOpen: (open: boolean) => void;
  toggle: () => void;
  setWidth: (width: number) => void;
  setDraft: (text: string) => void;
  /** An issue or member picked in the composer: messages that name it send it with its id. */
  addReference: (ref: ReferencePart) => void;
  /** Sends the draft (or `text`) now, or queues it while an answer streams; the page selection goes with it once. */
  send: (text?: string) => void;
  stop: () => void;
  retry: () => void;
  editQueued: (id: string, text: string) => void;
  setQueuedEditing: (id: string, editing: boolean) => void;
  removeQueued: (id: string) => void;
  sendQueuedNow: (id: string) => void;
  clearQueue: () => void;
  /** Asks the newest turn again with this text instead of its message (a new version). */
  editLastMessage: (text: string) => void;
  /** Asks the newest turn's message again for a new answer (a new version). */
  regenerate: () => void;
  /** Shows another version of a turn (`toRunId` instead of `fromRunId`). */
  selectVersion: (fromRunId: string, toRunId: string) => void;
  loadOlder: () => void;
  /** Starts a new conversation; `focus: false` keeps the current view (e.g. the history list). */
  newConversation: (opts?: { focus?: boolean }) => void;
  selectConversation: (id: string) => void;
  setApprovalDraft: (interruptId: string, draft: DraftAnswer) => void;
  submitApprovals: () => void;
  /** A question's form as the user fills it in (kept across a reload). */
  setQuestionDraft: (interruptId: string, draft: QuestionDraft) => void;
  /** Send or Decline on a question's card (the batch is sent with it). */
  answerQuestion: (interruptId: string, action: 'accept' | 'decline') => void;
  /** Approve all / Reject all (one note for a rejected batch). */
  answerAll: (decision: 'approve' | 'reject', note?: string) => void;
  submitFeedback: (messageId: string, value: 1 | -1, comment?: string, reasons?: FeedbackReason[]) => Promise<void>;
  setFeedbackDraft: (messageId: string, text: string | null) => void;
  /** Uploads files (picked, dropped or pasted) to attach to the next message. */
  attachFiles: (files: ReadonlyArray<Blob & { name?: string }>) => void;
  removeAttachment: (localId: string) => void;
}

/**
 * The panel's clock: a number read like the store (subscribe/getSnapshot). The provider advances
 * it once a second while approvals wait (countdown, expiry); otherwise it stands still.
 */
export interface PanelClock {
  subscribe: (listener: () => void) => () => void;
  getSnapshot: () => number;
  set: (now: number) => void;
}

export function createPanelClock(start: number): PanelClock {
  let now = start;
  const listeners = new Set<() => void>();
  return {
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    getSnapshot: () => now,
    set: (next) => {
      if (next === now) return;
      now = next;
      for (const listener of listeners) listener();
    },
  };
}

export interface AgentBinding {
  store: AgentStore;
  actions: AgentActions;
  clock: PanelClock;
}

/** The panel's state outside the store. */
export interface PanelUi {
  projectId: string;
  toggleRef: RefObject<HTMLButtonElement | null>;
  /** Increments when the user opens the panel; the panel then focuses its input. */
  focusRequest: number;
  /** What the panel shows: the conversation or the history list. */
  panelView: PanelView;
  setPanelView: (view: PanelView) => void;
  /** Text selected on the page, sent as context with the next message. */
  selection: string | null;
  clearSelection: () => void;
}

export const AgentContext = createContext<AgentBinding | null>(null);
export const PanelUiContext = createContext<PanelUi | null>(null);
export const HistoryContext = createContext<ConversationHistory | null>(null);

function need<T>(value: T | null, name: string): T {
  if (value === null) throw new Error(`${name} must be used inside <InAppAgentProvider>.`);
  return value;
}

export function useAgentBinding(): AgentBinding {
  return need(useContext(AgentContext), 'useAgentBinding');
}

/** The store's actions (stable: safe in dependency lists and as props of memoized components). */
export function useAgentActions(): AgentActions {
  return useAgentBinding().actions;
}

export function usePanelUi(): PanelUi {
  return need(useContext(PanelUiContext), 'usePanelUi');
}

export function useConversationHistoryList(): ConversationHistory {
  return need(useContext(HistoryContext), 'useConversationHistoryList');
}

/**
 * Reads `selector(state, now)` and renders again only when its result changes (`isEqual`, default
 * `Object.is`). The selector may be a new function each render; its result is kept while the
 * state, the clock and the selector stay the same, and an equal result keeps the earlier value's
 * identity.
 */
export function useAgentSelector<T>(selector: AgentSelector<T>, isEqual: (a: T, b: T) => boolean = Object.is): T {
  return useSelectorOn(useAgentBinding(), selector, isEqual);
}

/** `useAgentSelector` over a given binding (the provider reads its own store this way). */
export function useSelectorOn<T>(
  binding: AgentBinding,
  selector: AgentSelector<T>,
  isEqual: (a: T, b: T) => boolean = Object.is,
): T {
  const { store, clock } = binding;
  const last = useRef<{ state: AgentState; now: number; selector: AgentSelector<T>; value: T } | null>(null);
  const subscribe = useCallback(
    (onChange: () => void) => {
      const fromStore = store.subscribe(onChange);
      const fromClock = clock.subscribe(onChange);
      return () => {
        fromStore();
        fromClock();
      };
    },
    [store, clock],
  );
  const read = (): T => {
    const state = store.getSnapshot();
    const now = clock.getSnapshot();
    const memo = last.current;
    if (memo && memo.state === state && memo.now === now && memo.selector === selector) return memo.value;
    const next = selector(state, now);
    const value = memo && isEqual(memo.value, next) ? memo.value : next;
    last.current = { state, now, selector, value };
    return value;
  };
  return useSyncExternalStore(subscribe, read, read);
}

/** The panel clock's time (ms since epoch). */
export function useNow(): number {
  const { clock } = useAgentBinding();
  return useSyncExternalStore(clock.subscribe, clock.getSnapshot, clock.getSnapshot);
}
