/**
 * The assistant panel's state and everything that changes it, without React or the DOM: the run
 * lifecycle (start, follow, reattach with backoff, stop), folding every AG-UI event with the
 * module's reducer, the message queue, approval answers, drafts and feedback, all persisted per
 * user (storage.ts). React reads it through `useSyncExternalStore` (use-agent-store.ts); the render
 * components stay prop-driven. It is the only code that talks to the agent routes (through
 * agent-transport.ts); conversation loading and feedback go through the injected `api`.
 *
 * Runs outlive their connection: a closed tab, a reload or a broken network only stops watching.
 * So this store never stops a run by itself; it reattaches — from the last position it received
 * after a drop (the server then sends exactly the events after it), from a snapshot after a reload
 * or when another tab started the run. Stop is a request to the server (any tab may send it); the
 * run's own terminal event then reaches every tab.
 *
 * Connection phases (`state.connection`):
 *   idle ─send/resume→ sending ─stream→ streaming ─terminal + stream closed→ idle (→ next queued message)
 *   streaming ─drop→ reconnecting ─backoff, GET ?after=position→ streaming
 *   streaming|reconnecting ─Stop→ stopping ─terminal (cancelled)→ idle
 *   idle ─liveRunId / another tab's run→ streaming (from a snapshot)
 * Everything injected (fetch, timers, storage, channel, frame scheduler) so unit tests drive it.
 */
import { CUSTOM_EVENTS, LIMITS } from '../constants';
import { interruptKindOf } from '../interrupt-kinds';
import { isAgentErrorCode } from '../error-codes';
import { emptyView, openInterrupts } from '../fold';
import { formatBytes } from '../attachments';
import {
  AttachmentPartSchema,
  attachmentsOf,
  type AttachmentPart,
  ChangedValueSchema,
  ConversationViewSchema,
  ModelInfoSchema,
  NavigateValueSchema,
  type AgentEvent,
  type ConversationView,
  type FeedbackReason,
  type ModelInfo,
  type MessagePart,
  type PageContext,
  type ProductObject,
  type ResumeEntry,
} from '../schema';
import {
  DraftAnswerSchema,
  approvalRequestOf,
  draftsForAll,
  initialDraft,
  isExpired,
  stableStringify,
  type ApprovalRequest,
  type DraftAnswer,
} from './approval';
import { buildBatchResume, openRequests } from './interrupts/batch';
import {
  initialQuestionDraft,
  QuestionDraftSchema,
  selectOpenQuestions,
  type QuestionDraft,
} from './interrupts/question';
import {
  createAgentTransport,
  type AgentTransport,
  type FetchLike,
  type OpenedStream,
  type Refused,
} from './agent-transport';
import {
  attachmentName,
  type DraftAttachment,
  keptAttachments,
  readKeptAttachments,
  readyAttachments,
} from './draft-attachments';
import { referencePartsFor, type ReferencePart } from './composer/mention-logic';
import { budgetWarningFor } from './budget-warning';
import { describeError, type PanelError } from './errors';
import type { FeedbackValue } from './FeedbackButtons';
import { LiveView } from './live-view';
import { internalPath } from './safe-url';
import { readSseBatches, type SseFrame } from './sse';
import {
  PANEL_WIDTH,
  SafeStorage,
  clampWidth,
  clearAssistantStorage,
  dropUnattributedKeys,
  storageKeys,
  type StorageKeys,
  type StorageLike,
} from './storage';
import { TabMessageSchema, type ChannelLike, type TabMessage } from './tab-channel';
import { addVersion, failedTurnRunId, joinViews, lastTurnRunId, viewBefore, viewFrom } from './view-pages';
import { z } from 'zod';

// ------------------------------------------------------------------------------------------------
// Public shapes
// ------------------------------------------------------------------------------------------------

/** One message for screen readers (the live region lists the last few). */
export interface Announcement {
  id: number;
  text: string;
}

export type ConnectionPhase = 'idle' | 'sending' | 'streaming' | 'reconnecting' | 'stopping';

/** A message typed while an answer streams: sent, in order, once the run has ended. */
export interface QueuedMessage {
  id: string;
  text: string;
  /** Files it attaches (uploaded already). */
  attachments?: AttachmentPart[];
  /** Being edited: it waits (and holds the ones after it) until the edit is saved or cancelled. */
  editing: boolean;
}

export interface AgentState {
  projectId: string;
  userId: string;
  open: boolean;
  width: number;
  conversationId: string | null;
  view: ConversationView;
  feedback: Record<string, FeedbackValue | undefined>;
  /** Unsaved thumbs-down comments of the current conversation, per message. */
  feedbackDrafts: Record<string, string | undefined>;
  hydrating: boolean;
  hydrateError: string | null;
  connection: ConnectionPhase;
  /** The run this tab starts or follows. */
  liveRunId: string | null;
  /** Failed reattach attempts in a row (0 while connected). */
  reconnectAttempt: number;
  /**
   * The server writing the answer stopped and another one is taking it over (the server says so);
   * cleared when the answer goes on or ends.
   */
  resuming: boolean;
  /** A user message sent but not yet echoed by the server. */
  pendingUserMessage: string | null;
  /** An error of the request itself (refused before any event arrived). */
  requestError: PanelError | null;
  /** A short note in the status line (e.g. Stop could not be sent). */
  statusNote: string | null;
  /** A budget of the project is 80 % used (said once per budget and window: budget-warning.ts). */
  budgetWarning: string | null;
  model: ModelInfo | null;
  /** The last few live-region messages (new answers, approval requests, failures), oldest first. */
  announcements: Announcement[];
  draft: string;
  /** Files attached to the next message (draft-attachments.ts), kept with the draft. */
  attachments: DraftAttachment[];
  queue: QueuedMessage[];
  /**
   * The answer was stopped while messages waited: they stay queued (Stop halts everything) until
   * the user sends them or clears the queue.
   */
  queuePaused: boolean;
  /** Approval answers being prepared, per interrupt id (what the user did; defaults are derived). */
  approvalDrafts: Record<string, DraftAnswer | undefined>;
  /** Answers to questions (`ask_user`) being prepared, per interrupt id (defaults are derived). */
  questionDrafts: Record<string, QuestionDraft | undefined>;
  /** Why the answers of the batch (approvals and questions) could not be sent. */
  approvalError: string | null;
  /** Increments whenever a run ends (the history list refetches). */
  runsFinished: number;
  /** Earlier messages exist on the server: the run to ask for the page before the shown ones. */
  olderBefore: string | null;
  loadingOlder: boolean;
  /** Why the earlier messages could not be loaded (the button offers to try again). */
  olderError: string | null;
  /** Another version of a turn is being fetched (the arrows wait). */
  switchingVersion: boolean;
  /** The user signed out (in any tab): nothing is kept or sent any more. */
  signedOut: boolean;
}

/** What the store needs from the host's data API (tRPC in this product). */
export interface AgentStoreApi {
  loadConversation(conversationId: string): Promise<ConversationLoad>;
  /** The page of the conversation before the run `before`. */
  loadOlder(conversationId: string, before: string): Promise<PageLoad>;
  /** Shows another version of a turn (server state); answers the newest page of the new path. */
  selectVersion(conversationId: string, runId: string): Promise<PageLoad>;
  submitFeedback(input: {
    conversationId: string;
    messageId: string;
    value: 1 | -1;
    comment?: string;
    reasons?: FeedbackReason[];
  }): Promise<void>;
  modelInfo(): Promise<unknown>;
}

export type ConversationLoad =
  | {
      ok: true;
      view: unknown;
      feedback?: Record<string, { value: number; comment?: string | null; reasons?: FeedbackReason[] } | undefined>;
      /** A run still answering in the conversation (on any server instance). */
      liveRunId?: string | null;
      /** The view is the newest page; this run asks for the one before it (null: it is all). */
      olderBefore?: string | null;
    }
  | { ok: false; notFound: boolean; message: string };

/** A page of a conversation (`view`), and the run to ask for the page before it. */
export type PageLoad =
  | { ok: true; view: unknown; olderBefore: string | null }
  | { ok: false; notFound: boolean; message: string };

/** Timers, injectable so tests control time. */
export interface Clock {
  now(): number;
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface AgentStoreDeps {
  projectId: string;
  userId: string;
  api: AgentStoreApi;
  fetch: FetchLike;
  /** Origin of the routes ('' for same-origin relative URLs). */
  baseUrl?: string;
  storage?: { local: StorageLike | null; session: StorageLike | null };
  clock?: Clock;
  /** Opens this tab's channel to the other tabs (BroadcastChannel in the browser). */
  openChannel?: () => ChannelLike | null;
  /** Runs `callback` before the next paint and returns a cancel function (default: at once). */
  scheduleFrame?: (callback: () => void) => () => void;
  /** The page the user is on, sent with each message. */
  pageContext?: () => PageContext;
  /** Opens a page of the product when the assistant asks for it (client-side navigation). */
  navigate?: (path: string) => void;
  /**
   * The assistant changed objects of the product (an issue created, closed, commented on): the
   * host refreshes what its page shows. Called for changes seen live, in this tab or another's run.
   */
  onProductChange?: (objects: ProductObject[]) => void;
  newId?: () => string;
  /** The viewport width, for the panel's maximum width. */
  viewportWidth?: () => number | undefined;
  /** 0..1; spreads reconnect attempts of many tabs (default Math.random). */
  random?: () => number;
}

/** Reconnect backoff: the first reattach after a short pause, then doubling up to the cap. */
export const RECONNECT = { firstDelayMs: 500, maxDelayMs: 15_000 } as const;
/**
 * A message refused with RUN_IN_PROGRESS while no other run is live is retried this often: the
 * run that just ended may still be closing its row.
 */
export const CONFLICT_RETRY = { delayMs: 300, attempts: 8 } as const;
/** After the terminal event the server closes the stream once the end is stored; wait at most this long. */
export const FINISH_GRACE_MS = 3_000;
/** A conversation whose last run shows as running but that nobody runs live is looked at again. */
const STALE_RECHECK = { delayMs: 1_500, attempts: 5 } as const;
/** Re-checking for a live run when the tab becomes visible again, at most this often. */
const LIVE_CHECK_MIN_INTERVAL_MS = 2_000;
const ANNOUNCEMENTS_KEPT = 3;
/** Items picked in the composer the store remembers (by their text). */
const PICKED_KEPT = 200;
/** Frames that arrive this soon after the first frames of a snapshot attach are its catch-up (ms). */
const CATCH_UP_WINDOW_MS = 300;

const FeedbackDraftSchema = z.string().max(LIMITS.maxFeedbackChars * 2);
const QueuedMessageSchema = z.object({
  id: z.string().max(200),
  text: z.string().max(LIMITS.maxUserMessageChars),
  attachments: z.array(AttachmentPartSchema).max(50).optional(),
});

export function reconnectDelay(attempt: number, random = 1): number {
  const full = Math.min(RECONNECT.maxDelayMs, RECONNECT.firstDelayMs * 2 ** Math.max(0, attempt - 1));
  // Between half and all of the full delay, so tabs that lost the same server do not return in step.
  return Math.round(full * (0.5 + 0.5 * random));
}

const approvalsCache = new WeakMap<ConversationView, ApprovalRequest[]>();
/** The tool approvals still waiting for an answer (of the last, interrupted run). */
export function selectOpenApprovals(view: ConversationView): ApprovalRequest[] {
  let found = approvalsCache.get(view);
  if (!found) {
    found = openInterrupts(view)
      .map(approvalRequestOf)
      .filter((request): request is ApprovalRequest => request !== null);
    approvalsCache.set(view, found);
  }
  return found;
}

/** Each open question's answer so far: what the user put in, else the form's defaults. */
export function effectiveQuestionDrafts(
  view: ConversationView,
  stored: Record<string, QuestionDraft | undefined>,
): Record<string, QuestionDraft | undefined> {
  const out: Record<string, QuestionDraft | undefined> = {};
  for (const request of selectOpenQuestions(view))
    out[request.interruptId] = stored[request.interruptId] ?? initialQuestionDraft(request);
  return out;
}

/** Each open request's draft: what the user prepared, else the untouched proposal. */
export function effectiveApprovalDrafts(
  open: ApprovalRequest[],
  stored: Record<string, DraftAnswer | undefined>,
): Record<string, DraftAnswer | undefined> {
  const out: Record<string, DraftAnswer | undefined> = {};
  for (const request of open) out[request.interruptId] = stored[request.interruptId] ?? initialDraft(request);
  return out;
}

/**
 * Whether the newest turn may be edited or asked again now: nothing runs or loads, no approval
 * waits for an answer (a new version would leave it unanswered), and there is a turn to replace.
 */
export function canReviseLastTurn(state: AgentState, now: number): boolean {
  if (state.signedOut || state.connection !== 'idle' || state.hydrating || state.switchingVersion) return false;
  if (openRequests(state.view).some((request) => !isExpired(request.expiresAt, now))) return false;
  const runId = lastTurnRunId(state.view);
  return runId !== null && state.view.runs.some((run) => run.runId === runId && run.status !== 'running');
}

/**
 * Whether Retry can do something now: ask a refused request again (a new version, or a message
 * this tab sent), or ask a failed turn again in place.
 */
function canRetry(state: AgentState, now: number, sentHere: boolean): boolean {
  if (state.signedOut || state.connection !== 'idle') return false;
  if (state.requestError) return state.requestError.retryable;
  if (failedTurnRunId(state.view)) return canReviseLastTurn(state, now);
  // A run that failed before storing this tab's message: the message is sent again.
  return sentHere && state.view.runs.at(-1)?.status === 'failed';
}

/** Views equal as JSON (undefined fields and key order ignored). */
function sameView(a: ConversationView, b: ConversationView): boolean {
  return stableStringify(JSON.parse(JSON.stringify(a))) === stableStringify(JSON.parse(JSON.stringify(b)));
}

function navigateHrefFromToolResult(content: string): string | null {
  try {
    const value = JSON.parse(content) as unknown;
    const direct = NavigateValueSchema.safeParse(value);
    if (direct.success) return direct.data.href;
    const nested = NavigateValueSchema.safeParse((value as { structuredContent?: unknown } | null)?.structuredContent);
    return nested.success ? nested.data.href : null;
  } catch {
    return null;
  }
}

const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

function defaultId(): string {
  if (typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 12)}`;
}

// ------------------------------------------------------------------------------------------------
// Internals
// ------------------------------------------------------------------------------------------------

/**
 * A new version of the newest turn: an edit (`text`) or a regeneration (`text` null). `shown` is the
 * user message it asks; `restore` the view (and its paging) as it was, shown again if it is refused.
 */
interface VersionRequest {
  kind: 'version';
  of: string;
  text: string | null;
  shown: string;
  messageId: string;
  restore: { view: ConversationView; olderBefore: string | null };
}

type RunRequest =
  | { kind: 'message'; text: string; parts: MessagePart[]; messageId: string }
  | VersionRequest
  | { kind: 'resume'; resume: ResumeEntry[] }
  | { kind: 'follow' };

/** The user text a request sends (echoed by the server as the run's user message). */
function sentText(request: RunRequest): string | null {
  return request.kind === 'message' ? request.text : request.kind === 'version' ? request.shown : null;
}

/** One run this tab starts or follows, across however many HTTP connections it takes. */
interface Connection {
  controller: AbortController;
  runId: string | null;
  threadId: string;
  /** The last position received; null: none yet (a reattach then starts from a snapshot). */
  position: number | null;
  /** 'sent': this tab started the run, so it follows the assistant's navigation; 'followed': attached. */
  origin: 'sent' | 'followed';
  request: RunRequest;
  /** The server accepted the request (headers or RUN_STARTED). */
  started: boolean;
  terminal: boolean;
  stopRequested: boolean;
  /** The user message of a 'message' request came back from the server. */
  echoed: boolean;
  /** Events replayed right after attaching from a snapshot: not announced again, no navigation. */
  catchingUp: boolean;
  /** When the first frames of a snapshot attach arrived (the catch-up burst is measured from it). */
  catchUpStartedAt: number | null;
  reconnectAttempt: number;
  /** A reattach waits for its backoff timer. */
  reconnectPending: boolean;
  conflictAttempt: number;
  announcedDrop: boolean;
  /** The request got no answer and this tab then followed the conversation's live run. */
  recovered: boolean;
}

/** Named timers: setting one replaces the previous of that name; all are cleared on unmount. */
class TimerBag {
  private readonly handles = new Map<string, unknown>();
  constructor(private readonly clock: Clock) {}

  set(name: string, ms: number, callback: () => void): void {
    this.clear(name);
    const handle = this.clock.setTimeout(() => {
      this.handles.delete(name);
      callback();
    }, ms);
    this.handles.set(name, handle);
  }

  clear(name: string): void {
    const handle = this.handles.get(name);
    if (handle !== undefined) this.clock.clearTimeout(handle);
    this.handles.delete(name);
  }

  clearAll(): void {
    for (const handle of this.handles.values()) this.clock.clearTimeout(handle);
    this.handles.clear();
  }

  get size(): number {
    return this.handles.size;
  }
}

// ------------------------------------------------------------------------------------------------
// The store
// ------------------------------------------------------------------------------------------------

export class AgentStore {
  private state: AgentState;
  private readonly listeners = new Set<() => void>();
  private readonly clock: Clock;
  private readonly timers: TimerBag;
  private readonly transport: AgentTransport;
  private readonly local: SafeStorage;
  private readonly session: SafeStorage;
  private readonly keys: StorageKeys;
  private readonly liveView = new LiveView();
  private connection: Connection | null = null;
  private channel: ChannelLike | null = null;
  private mounted = false;
  /** Which conversation the view holds (undefined: none loaded yet; null: a new conversation). */
  private loadedConversationId: string | null | undefined = undefined;
  private hydrateToken = 0;
  private cancelFrame: (() => void) | null = null;
  private navigated = new Set<string>();
  private lastSentText: string | null = null;
  /** A new version the server refused: Retry asks for it again (not for a new message). */
  private refusedVersion: VersionRequest | null = null;
  /** A run another tab started while this one was still busy: followed next. */
  private pendingAttachRunId: string | null = null;
  private announcementId = 0;
  private modelRequested = false;
  private lastLiveCheck = -Infinity;

  constructor(private readonly deps: AgentStoreDeps) {
    this.clock = deps.clock ?? realClock;
    this.timers = new TimerBag(this.clock);
    this.transport = createAgentTransport({ fetch: deps.fetch, baseUrl: deps.baseUrl, projectId: deps.projectId });
    this.local = new SafeStorage(deps.storage?.local ?? null);
    this.session = new SafeStorage(deps.storage?.session ?? null);
    this.keys = storageKeys(deps.userId, deps.projectId);
    this.state = this.initialState();
  }

  // ---------------------------------------------------------------- external store contract

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  readonly getSnapshot = (): AgentState => this.state;

  private initialState(): AgentState {
    return {
      projectId: this.deps.projectId,
      userId: this.deps.userId,
      open: false,
      width: PANEL_WIDTH.default,
      conversationId: null,
      view: this.liveView.snapshot(),
      feedback: {},
      feedbackDrafts: {},
      hydrating: false,
      hydrateError: null,
      connection: 'idle',
      liveRunId: null,
      reconnectAttempt: 0,
      resuming: false,
      pendingUserMessage: null,
      requestError: null,
      statusNote: null,
      budgetWarning: null,
      model: null,
      announcements: [],
      draft: '',
      attachments: [],
      queue: [],
      queuePaused: false,
      approvalDrafts: {},
      questionDrafts: {},
      approvalError: null,
      runsFinished: 0,
      olderBefore: null,
      loadingOlder: false,
      olderError: null,
      switchingVersion: false,
      signedOut: false,
    };
  }

  private set(patch: Partial<AgentState>): void {
    this.state = { ...this.state, ...patch };
    for (const listener of [...this.listeners]) listener();
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Starts the store in the browser: reads what this user kept, listens to the other tabs, and
   * loads (and reattaches to) the current conversation when the panel is open or messages wait
   * in its queue. Safe to call again after `unmount`.
   */
  mount(): void {
    if (this.mounted || this.state.signedOut) return;
    this.mounted = true;
    dropUnattributedKeys(this.deps.storage?.local ?? null);
    const width = Number(this.local.read(this.keys.width()));
    const conversationId = this.local.read(this.keys.conversation()) || null;
    this.set({
      width: width ? clampWidth(width, this.deps.viewportWidth?.()) : PANEL_WIDTH.default,
      open: this.local.read(this.keys.open()) === '1',
      conversationId,
      draft: this.local.read(this.keys.draft(conversationId)) ?? '',
      attachments: this.readAttachments(conversationId),
      queue: this.readQueue(conversationId),
      queuePaused: this.readQueuePaused(conversationId),
    });
    this.channel = this.deps.openChannel?.() ?? null;
    this.channel?.listen((data) => this.onTabMessage(data));
    if (this.state.open || this.state.queue.length > 0) this.ensureLoaded();
    if (this.state.open) this.ensureModelInfo();
  }

  /**
   * Stops watching: closes the stream (the run goes on on the server), timers and the channel.
   * The panel never stops a run because it unmounts or the page reloads.
   */
  unmount(): void {
    if (!this.mounted) return;
    this.mounted = false;
    this.dropConnection();
    this.timers.clearAll();
    this.cancelFrame?.();
    this.cancelFrame = null;
    this.channel?.close();
    this.channel = null;
    this.hydrateToken++;
    this.loadedConversationId = undefined;
    this.pendingAttachRunId = null;
    this.set({ connection: 'idle', liveRunId: null, hydrating: false, reconnectAttempt: 0 });
  }

  /** Open timers (tests check that nothing outlives an unmount). */
  get pendingTimers(): number {
    return this.timers.size;
  }

  // ---------------------------------------------------------------- panel

  setOpen(open: boolean): void {
    this.local.write(this.keys.open(), open ? '1' : null);
    this.set({ open });
    if (open) {
      this.ensureLoaded();
      this.ensureModelInfo();
    }
  }

  setWidth(width: number): void {
    const clamped = clampWidth(width, this.deps.viewportWidth?.());
    this.local.write(this.keys.width(), String(clamped));
    this.set({ width: clamped });
  }

  /** Loads the current conversation when the view does not hold it yet. */
  ensureLoaded(): void {
    if (!this.mounted || this.state.signedOut) return;
    const id = this.state.conversationId;
    if (this.loadedConversationId === id) return;
    if (id) {
      void this.hydrate(id);
    } else {
      this.loadedConversationId = null;
      this.replaceView(emptyView());
      this.flushQueue();
    }
  }

  /** The model notice (from the stream, the replay, or else the server's configuration) and what may be attached. */
  ensureModelInfo(): void {
    if (this.state.model?.attachments || this.modelRequested) return;
    this.modelRequested = true;
    this.deps.api
      .modelInfo()
      .then((info) => {
        const parsed = ModelInfoSchema.safeParse(info);
        // A model a run named meanwhile stays; the info adds what may be attached.
        if (parsed.success)
          this.set({ model: { ...(this.state.model ?? parsed.data), attachments: parsed.data.attachments } });
      })
      .catch(() => {
        this.modelRequested = false;
      });
  }

  // ---------------------------------------------------------------- input, queue

  /** What the user picked in the composer, by the text that stands for it (newest last). */
  private readonly picked = new Map<string, ReferencePart>();

  /** The message being typed, kept per conversation so a reload does not lose it. */
  setDraft(text: string): void {
    this.local.write(this.keys.draft(this.state.conversationId), text);
    this.set({ draft: text });
  }

  /**
   * Sends `text` (or the draft). While an answer streams (or the conversation is still loading)
   * the message is queued instead and sent once the run has ended.
   */
  send(text?: string): void {
    if (this.state.signedOut || !this.mounted) return;
    const body = (text ?? this.state.draft).trim();
    // The draft goes with the files attached to it (all uploaded: the panel waits for them).
    const attached = text === undefined ? readyAttachments(this.state.attachments) : [];
    if (text === undefined && this.state.attachments.some((a) => a.status === 'uploading')) return;
    if (!body && !attached.length) return;
    if (body.length > LIMITS.maxUserMessageChars) {
      this.set({ requestError: describeError('PAYLOAD_TOO_LARGE') });
      return;
    }
    if (text === undefined || text === this.state.draft) this.setDraft('');
    if (text === undefined) this.setAttachments([]);
    if (this.connection || this.state.hydrating || this.state.switchingVersion) {
      this.enqueue(body, attached);
      return;
    }
    this.startRun(this.messageRequest(body, attached));
  }

  // ---------------------------------------------------------------- attachments

  /**
   * Uploads files for the next message (a picked, dropped or pasted file). Each shows at once; a
   * file the server refuses stays in the tray with why, until removed. Files over the model's
   * limits are refused here without an upload (the server checks again).
   */
  attachFiles(files: ReadonlyArray<Blob & { name?: string }>): void {
    if (this.state.signedOut || !this.mounted) return;
    const limits = this.state.model?.attachments;
    for (const file of files) {
      const localId = this.newId();
      const name = attachmentName(file);
      const waiting = this.state.attachments.filter((a) => a.status !== 'failed').length;
      const refusal =
        limits && waiting >= limits.maxFilesPerMessage
          ? describeError('ATTACHMENTS_TOO_MANY', `A message may attach ${limits.maxFilesPerMessage} files at most.`)
          : limits && file.size > limits.maxFileBytes
            ? describeError(
                'ATTACHMENT_TOO_LARGE',
                `${name} is larger than ${formatBytes(limits.maxFileBytes)}, the most a file may be.`,
              )
            : null;
      if (refusal) {
        this.setAttachments([...this.state.attachments, { localId, name, status: 'failed', error: refusal }]);
        this.announce(`${name} was not attached: ${refusal.message}`);
        continue;
      }
      this.setAttachments([...this.state.attachments, { localId, name, status: 'uploading' }]);
      void this.transport.uploadAttachment(file, name).then((result) => {
        if (!this.state.attachments.some((a) => a.localId === localId)) {
          // Removed (or sent without it) meanwhile: the upload is not needed.
          if (result.kind === 'uploaded') void this.transport.removeAttachment(result.part.attachmentId);
          return;
        }
        const done: DraftAttachment =
          result.kind === 'uploaded'
            ? { localId, name: result.part.name, status: 'ready', part: result.part }
            : { localId, name, status: 'failed', error: result.error };
        this.setAttachments(this.state.attachments.map((a) => (a.localId === localId ? done : a)));
        this.announce(done.error ? `${name} was not attached: ${done.error.message}` : `${done.name} is attached.`);
      });
    }
  }

  /** Takes a file off the next message (an uploaded one is removed from the server too). */
  removeAttachment(localId: string): void {
    const item = this.state.attachments.find((a) => a.localId === localId);
    if (!item) return;
    this.setAttachments(this.state.attachments.filter((a) => a.localId !== localId));
    if (item.part) void this.transport.removeAttachment(item.part.attachmentId);
  }

  private setAttachments(attachments: DraftAttachment[]): void {
    this.local.write(this.keys.draftAttachments(this.state.conversationId), keptAttachments(attachments));
    this.set({ attachments });
  }

  private readAttachments(conversationId: string | null): DraftAttachment[] {
    return readKeptAttachments(this.local.read(this.keys.draftAttachments(conversationId)), () => this.newId());
  }

  /** Files of a message that did not go through: back in the tray, unless other files are there now. */
  private restoreAttachments(parts: MessagePart[]): void {
    const attached = attachmentsOf(parts);
    if (!attached.length || this.state.attachments.length) return;
    this.setAttachments(attached.map((part) => ({ localId: this.newId(), name: part.name, status: 'ready', part })));
  }

  private enqueue(text: string, attachments: AttachmentPart[] = []): void {
    const queue = [
      ...this.state.queue,
      { id: this.newId(), text, editing: false, ...(attachments.length ? { attachments } : {}) },
    ];
    this.setQueue(queue);
    this.announce(
      queue.length === 1
        ? 'Message queued: it is sent when the answer ends.'
        : `Message queued (${queue.length} waiting).`,
    );
  }

  editQueued(id: string, text: string): void {
    this.setQueue(
      this.state.queue.map((item) =>
        item.id === id ? { ...item, text: text.slice(0, LIMITS.maxUserMessageChars) } : item,
      ),
    );
  }

  /** Starts or ends editing a queued message; it is not sent while being edited. */
  setQueuedEditing(id: string, editing: boolean): void {
    const queue = this.state.queue
      .map((item) => (item.id === id ? { ...item, editing } : item))
      // Saving an emptied message removes it.
      .filter((item) => item.editing || item.text.trim() !== '' || item.attachments?.length);
    this.setQueue(queue);
    if (!editing) this.flushQueue();
  }

  removeQueued(id: string): void {
    this.setQueue(this.state.queue.filter((item) => item.id !== id));
    this.flushQueue();
  }

  /** Empties the queue (nothing of it is sent). */
  clearQueue(): void {
    this.setQueue([]);
  }

  /**
   * Sends a queued message at once (only while no answer runs; it leaves open approvals
   * unanswered). After a Stop, sending one resumes the queue: the rest follow in order.
   */
  sendQueuedNow(id: string): void {
    const item = this.state.queue.find((entry) => entry.id === id);
    if (!item || this.connection || this.state.signedOut) return;
    this.setQueuePaused(false);
    this.setQueue(this.state.queue.filter((entry) => entry.id !== id));
    this.startRun(this.messageRequest(item.text.trim(), item.attachments));
  }

  private setQueue(queue: QueuedMessage[]): void {
    this.session.writeList(
      this.keys.queue(this.state.conversationId),
      queue.map(({ id, text, attachments }) => ({ id, text, ...(attachments ? { attachments } : {}) })),
    );
    this.set({ queue });
    // An emptied queue has nothing left to hold.
    if (queue.length === 0 && this.state.queuePaused) this.setQueuePaused(false);
  }

  private setQueuePaused(paused: boolean): void {
    if (paused === this.state.queuePaused) return;
    this.session.write(this.keys.queuePaused(this.state.conversationId), paused ? '1' : null);
    this.set({ queuePaused: paused });
  }

  private readQueuePaused(conversationId: string | null): boolean {
    return this.session.read(this.keys.queuePaused(conversationId)) === '1';
  }

  private readQueue(conversationId: string | null): QueuedMessage[] {
    return this.session
      .readList(this.keys.queue(conversationId), QueuedMessageSchema)
      .map((item) => ({ ...item, editing: false }));
  }

  /**
   * Sends the next queued message when nothing runs. Approvals still open hold the queue (a new
   * message would leave them unanswered); it goes on once they are answered or expire.
   */
  private flushQueue(): void {
    if (!this.mounted || this.state.signedOut || this.connection || this.state.hydrating) return;
    if (this.state.queuePaused) return;
    if (this.state.switchingVersion || this.loadedConversationId !== this.state.conversationId) return;
    const head = this.state.queue[0];
    if (!head || head.editing) return;
    const now = this.clock.now();
    const waiting = openRequests(this.state.view).filter((request) => !isExpired(request.expiresAt, now));
    if (waiting.length > 0) {
      const soonest = Math.min(...waiting.map((request) => Date.parse(request.expiresAt ?? '') || Infinity));
      if (Number.isFinite(soonest))
        this.timers.set('queue-expiry', Math.max(0, soonest - now) + 50, () => this.flushQueue());
      return;
    }
    this.setQueue(this.state.queue.slice(1));
    this.startRun(this.messageRequest(head.text.trim(), head.attachments));
  }

  /** What Retry would do now (the panel offers it only then). */
  get canRetry(): boolean {
    return canRetry(this.state, this.clock.now(), this.lastSentText !== null);
  }

  /**
   * Retry. A request the server refused is sent again (the new version it asked for, or the
   * message). A failed answer (model error, timeout, tools unavailable, a stale run) is asked again
   * in place: a new version of its turn, so the question is shown and sent to the model once, and
   * the failed attempt stays reachable as the earlier version (also after a reload).
   */
  retry(): void {
    if (this.connection || this.state.signedOut) return;
    if (this.refusedVersion) {
      this.startVersion(this.refusedVersion.text);
      return;
    }
    if (!this.state.requestError && failedTurnRunId(this.liveView.current)) {
      this.startVersion(null);
      return;
    }
    const text = this.lastSentText;
    if (!text && !this.state.attachments.length) return;
    // The refused message is back in the input with its files: Retry sends them together.
    const attached = this.state.draft.trim() === (text ?? '').trim() ? readyAttachments(this.state.attachments) : [];
    if (this.state.draft.trim() === (text ?? '').trim()) this.setDraft('');
    if (attached.length) this.setAttachments([]);
    this.startRun(this.messageRequest(text ?? '', attached));
  }

  // ---------------------------------------------------------------- versions, earlier messages

  /** Asks the newest turn again with `text` instead of its message (the earlier version is kept). */
  editLastMessage(text: string): void {
    const body = text.trim();
    if (!body) return;
    if (body.length > LIMITS.maxUserMessageChars) {
      this.set({ requestError: describeError('PAYLOAD_TOO_LARGE') });
      return;
    }
    this.startVersion(body);
  }

  /** Asks the newest turn's message again for a new answer (the earlier answer is kept as a version). */
  regenerate(): void {
    this.startVersion(null);
  }

  private startVersion(text: string | null): void {
    if (!this.mounted || this.connection || !canReviseLastTurn(this.state, this.clock.now())) return;
    const view = this.liveView.current;
    const of = lastTurnRunId(view);
    if (!of) return;
    const shown = text ?? view.messages.findLast((m) => m.role === 'user' && m.runId === of)?.content ?? '';
    const restore = { view: structuredClone(view), olderBefore: this.state.olderBefore };
    // The turn being replaced leaves the view; the new version's events take its place.
    this.replaceView(viewBefore(view, of));
    this.startRun({ kind: 'version', of, text, shown, messageId: this.newId(), restore });
  }

  /** A refused new version: the turn it was to replace is shown again. */
  private restoreVersion(request: VersionRequest): void {
    this.replaceView(request.restore.view);
    this.set({ olderBefore: request.restore.olderBefore, pendingUserMessage: null });
  }

  /**
   * Shows another version of a turn (`toRunId`, instead of `fromRunId`, both starting that turn):
   * the server records the choice, so it holds after a reload and in other tabs. What comes before
   * the turn stays as it is (with the earlier pages already loaded); from the turn on the view shows
   * the chosen branch.
   */
  async selectVersion(fromRunId: string, toRunId: string): Promise<void> {
    const id = this.state.conversationId;
    if (!id || !this.mounted || this.connection || this.state.hydrating || this.state.switchingVersion) return;
    if (fromRunId === toRunId || this.loadedConversationId !== id) return;
    const token = ++this.hydrateToken;
    this.set({ switchingVersion: true, statusNote: null });
    const stale = () => token !== this.hydrateToken || this.state.conversationId !== id || this.connection !== null;
    const page = await this.pageOrError(() => this.deps.api.selectVersion(id, toRunId));
    if (stale()) {
      this.set({ switchingVersion: false });
      return;
    }
    if (!page.ok) {
      const note = `Could not show that version: ${page.message}`;
      this.set({ switchingVersion: false, statusNote: note });
      this.announce(note);
      // The conversation may have moved on (another tab): show the server's copy.
      if (!page.notFound) void this.hydrate(id, { quiet: true });
      else this.forgetConversation(id);
      return;
    }
    let view = page.view;
    let olderBefore = page.olderBefore;
    // The chosen turn may lie before the newest page: pages back until it is in (bounded by the
    // conversation's size limit).
    for (let pages = 0; olderBefore && !view.runs.some((r) => r.runId === toRunId); pages++) {
      if (pages > LIMITS.maxRunsPerConversation / LIMITS.replayPageRuns) break;
      const older = await this.pageOrError(() => this.deps.api.loadOlder(id, olderBefore!));
      if (stale()) {
        this.set({ switchingVersion: false });
        return;
      }
      if (!older.ok) break;
      view = joinViews(older.view, view);
      olderBefore = older.olderBefore;
    }
    const current = this.liveView.current;
    if (view.runs.some((r) => r.runId === toRunId) && current.runs.some((r) => r.runId === fromRunId)) {
      const merged = joinViews(viewBefore(current, fromRunId), viewFrom(view, toRunId));
      // The merged view starts where the kept part starts, unless the fetched pages reach further back.
      if (merged.runs[0]?.runId !== view.runs[0]?.runId || !view.runs.length) olderBefore = this.state.olderBefore;
      view = merged;
    }
    this.replaceView(view);
    this.set({ switchingVersion: false, olderBefore, olderError: null });
    this.pruneApprovalDrafts();
    const shown = view.versions?.[toRunId];
    if (shown) this.announce(`Showing version ${shown.index} of ${shown.count}.`);
    this.flushQueue();
  }

  /** Loads the page of messages before the ones shown ("Show earlier messages"). */
  async loadOlder(): Promise<void> {
    const id = this.state.conversationId;
    const before = this.state.olderBefore;
    if (!id || !before || !this.mounted || this.state.loadingOlder) return;
    this.set({ loadingOlder: true, olderError: null });
    const page = await this.pageOrError(() => this.deps.api.loadOlder(id, before));
    // The view was replaced meanwhile (another conversation, a new version): the page is not its.
    if (this.state.conversationId !== id || this.state.olderBefore !== before) {
      this.set({ loadingOlder: false });
      return;
    }
    if (!page.ok) {
      this.set({ loadingOlder: false, olderError: page.message });
      this.announce(`Earlier messages could not be loaded: ${page.message}`);
      return;
    }
    const count = page.view.messages.filter((m) => m.role !== 'tool').length;
    this.replaceView(joinViews(page.view, this.liveView.current));
    this.set({ loadingOlder: false, olderBefore: page.olderBefore });
    this.announce(`${count} earlier message${count === 1 ? '' : 's'} loaded.`);
  }

  /** Calls the API for a page and checks what it answers (never throws). */
  private async pageOrError(
    call: () => Promise<PageLoad>,
  ): Promise<{ ok: true; view: ConversationView; olderBefore: string | null } | Extract<PageLoad, { ok: false }>> {
    let page: PageLoad;
    try {
      page = await call();
    } catch {
      return { ok: false, notFound: false, message: 'The connection was interrupted.' };
    }
    if (!page.ok) return page;
    const parsed = ConversationViewSchema.safeParse(page.view);
    if (!parsed.success) return { ok: false, notFound: false, message: 'Could not read the conversation.' };
    return { ok: true, view: parsed.data, olderBefore: page.olderBefore };
  }

  // ---------------------------------------------------------------- approvals

  setApprovalDraft(interruptId: string, draft: DraftAnswer): void {
    const next = { ...this.state.approvalDrafts, [interruptId]: draft };
    if (this.state.conversationId) this.local.writeRecord(this.keys.approvals(this.state.conversationId), next);
    this.set({ approvalDrafts: next, approvalError: null });
  }

  setQuestionDraft(interruptId: string, draft: QuestionDraft): void {
    const next = { ...this.state.questionDrafts, [interruptId]: draft };
    if (this.state.conversationId) this.local.writeRecord(this.keys.questions(this.state.conversationId), next);
    this.set({ questionDrafts: next, approvalError: null });
  }

  /** Send (accept) or Decline on a question's card: the answer is kept, then the batch is sent. */
  answerQuestion(interruptId: string, action: 'accept' | 'decline'): void {
    if (this.connection || this.state.signedOut) return;
    const request = selectOpenQuestions(this.state.view).find((q) => q.interruptId === interruptId);
    if (!request) return;
    const current = this.state.questionDrafts[interruptId] ?? initialQuestionDraft(request);
    this.setQuestionDraft(interruptId, { ...current, action });
    this.submitApprovals();
  }

  /**
   * Sends every answer of the batch in one request (a new run continues from them): approvals and
   * questions of the interrupted run alike (`interrupts/batch.ts`).
   */
  submitApprovals(): void {
    if (this.connection || this.state.signedOut) return;
    const open = selectOpenApprovals(this.state.view);
    const drafts = {
      approvals: effectiveApprovalDrafts(open, this.state.approvalDrafts),
      questions: effectiveQuestionDrafts(this.state.view, this.state.questionDrafts),
    };
    const result = buildBatchResume(this.state.view, drafts, this.clock.now());
    if (!result.ok) {
      this.set({ approvalError: result.error });
      return;
    }
    this.startRun({ kind: 'resume', resume: result.resume });
  }

  /** Approve all / Reject all: one click answers every card, each with its own explicit entry. */
  answerAll(decision: 'approve' | 'reject', note?: string): void {
    if (this.connection || this.state.signedOut) return;
    const open = selectOpenApprovals(this.state.view);
    if (open.length === 0) return;
    const drafts = draftsForAll(open, effectiveApprovalDrafts(open, this.state.approvalDrafts), decision, note);
    // Kept like answers chosen card by card, so a refused request still shows what was chosen.
    for (const [interruptId, draft] of Object.entries(drafts)) this.setApprovalDraft(interruptId, draft);
    this.submitApprovals();
  }

  private clearApprovalDrafts(): void {
    if (this.state.conversationId) {
      this.local.writeRecord(this.keys.approvals(this.state.conversationId), {});
      this.local.writeRecord(this.keys.questions(this.state.conversationId), {});
    }
    this.set({ approvalDrafts: {}, questionDrafts: {} });
  }

  // ---------------------------------------------------------------- feedback

  async submitFeedback(messageId: string, value: 1 | -1, comment?: string, reasons?: FeedbackReason[]): Promise<void> {
    const conversationId = this.state.conversationId;
    if (!conversationId) throw new Error('Send a message first.');
    const previous = this.state.feedback[messageId];
    const rated = { value, comment: comment ?? null, reasons: reasons ?? [] };
    this.set({ feedback: { ...this.state.feedback, [messageId]: rated } });
    try {
      const extra = { ...(comment ? { comment } : {}), ...(reasons?.length ? { reasons } : {}) };
      await this.deps.api.submitFeedback({ conversationId, messageId, value, ...extra });
    } catch (err) {
      this.set({ feedback: { ...this.state.feedback, [messageId]: previous } });
      throw err instanceof Error ? err : new Error('Could not save your feedback.');
    }
  }

  setFeedbackDraft(messageId: string, text: string | null): void {
    const next = { ...this.state.feedbackDrafts };
    if (text === null) delete next[messageId];
    else next[messageId] = text.slice(0, LIMITS.maxFeedbackChars * 2);
    if (this.state.conversationId) this.local.writeRecord(this.keys.feedbackDrafts(this.state.conversationId), next);
    this.set({ feedbackDrafts: next });
  }

  // ---------------------------------------------------------------- conversations

  newConversation(): void {
    if (this.connection) return;
    this.hydrateToken++;
    this.timers.clear('stale-recheck');
    this.setConversationId(null);
    this.loadedConversationId = null;
    this.replaceView(emptyView());
    this.resetConversationState();
    this.set({
      feedback: {},
      hydrating: false,
      draft: this.local.read(this.keys.draft(null)) ?? '',
      attachments: this.readAttachments(null),
      queue: this.readQueue(null),
      queuePaused: this.readQueuePaused(null),
    });
    this.flushQueue();
  }

  selectConversation(id: string): void {
    if (this.connection) return;
    this.timers.clear('stale-recheck');
    this.setConversationId(id);
    this.resetConversationState();
    this.loadedConversationId = id;
    this.replaceView(emptyView(id));
    this.set({
      feedback: {},
      draft: this.local.read(this.keys.draft(id)) ?? '',
      attachments: this.readAttachments(id),
      queue: this.readQueue(id),
      queuePaused: this.readQueuePaused(id),
    });
    void this.hydrate(id);
  }

  /** A conversation was deleted: its kept work goes too, and the panel leaves it if it is open. */
  forgetConversation(id: string): void {
    this.local.write(this.keys.draft(id), null);
    this.local.write(this.keys.draftAttachments(id), null);
    this.local.write(this.keys.approvals(id), null);
    this.local.write(this.keys.questions(id), null);
    this.local.write(this.keys.feedbackDrafts(id), null);
    this.session.write(this.keys.queue(id), null);
    this.session.write(this.keys.queuePaused(id), null);
    if (this.state.conversationId === id) this.newConversation();
  }

  private setConversationId(id: string | null): void {
    this.local.write(this.keys.conversation(), id);
    this.set({ conversationId: id });
  }

  private resetConversationState(): void {
    this.lastSentText = null;
    this.refusedVersion = null;
    this.set({
      olderBefore: null,
      loadingOlder: false,
      olderError: null,
      switchingVersion: false,
      approvalDrafts: {},
      questionDrafts: {},
      feedbackDrafts: {},
      approvalError: null,
      requestError: null,
      statusNote: null,
      pendingUserMessage: null,
    });
  }

  /**
   * A new conversation got its id (the first message was accepted): what is typed or queued now
   * belongs to it.
   */
  private adoptConversation(id: string): void {
    if (this.state.conversationId === id) return;
    const before = this.state.conversationId;
    this.local.write(this.keys.draft(before), null);
    this.local.write(this.keys.draft(id), this.state.draft || null);
    this.local.write(this.keys.draftAttachments(before), null);
    this.local.write(this.keys.draftAttachments(id), keptAttachments(this.state.attachments));
    this.session.write(this.keys.queue(before), null);
    this.session.write(this.keys.queuePaused(before), null);
    this.setConversationId(id);
    this.loadedConversationId = id;
    this.setQueue(this.state.queue);
    if (this.state.queuePaused) this.session.write(this.keys.queuePaused(id), '1');
  }

  // ---------------------------------------------------------------- loading a conversation

  /**
   * Loads a conversation from the server and follows its live run when it has one. `quiet`
   * (a re-check): no loading state, and the view is replaced only when the server's copy differs,
   * so nothing flickers.
   */
  private async hydrate(id: string, opts: { quiet?: boolean; attempt?: number } = {}): Promise<void> {
    const quiet = opts.quiet === true;
    const token = ++this.hydrateToken;
    if (!quiet) this.set({ hydrating: true, hydrateError: null });
    let load: ConversationLoad;
    try {
      load = await this.deps.api.loadConversation(id);
    } catch {
      load = { ok: false, notFound: false, message: 'Could not load the conversation.' };
    }
    if (token !== this.hydrateToken || !this.mounted || this.state.conversationId !== id) return;
    if (!load.ok) {
      if (load.notFound) {
        // Deleted (maybe in another tab) or not ours: start fresh instead of showing an error.
        // What was typed or queued for it moves into the new conversation's input, unsent.
        const unsent = [this.state.draft, ...this.state.queue.map((item) => item.text)].filter((text) => text.trim());
        this.forgetConversation(id);
        if (unsent.length && !this.state.draft.trim()) this.setDraft(unsent.join('\n\n'));
        this.set({ hydrating: false });
      } else {
        this.set({ hydrating: false, ...(quiet ? {} : { hydrateError: load.message }) });
      }
      return;
    }
    const parsed = ConversationViewSchema.safeParse(load.view);
    if (!parsed.success) {
      this.set({ hydrating: false, ...(quiet ? {} : { hydrateError: 'Could not read the conversation.' }) });
      return;
    }
    const view = parsed.data;
    this.loadedConversationId = id;
    if (this.connection) {
      // A live stream owns the view now; it is exact.
      this.set({ hydrating: false });
      return;
    }
    const patch: Partial<AgentState> = { hydrating: false };
    const olderBefore = load.olderBefore ?? null;
    const first = view.runs[0]?.runId;
    const current = this.liveView.current;
    if (quiet && first && current.runs.findIndex((run) => run.runId === first) > 0) {
      // Earlier pages are shown: only the newest page is compared and, when it changed, replaced.
      const newest = { ...viewFrom(current, first), navigations: view.navigations };
      if (!sameView(view, newest)) this.replaceView(joinViews(viewBefore(current, first), view));
    } else if (!quiet || !sameView(view, current)) {
      this.replaceView(view);
      patch.olderBefore = olderBefore;
    }
    if (!quiet) {
      const feedback: Record<string, FeedbackValue> = {};
      for (const [messageId, entry] of Object.entries(load.feedback ?? {})) {
        if (entry) {
          feedback[messageId] = {
            value: entry.value === 1 ? 1 : -1,
            comment: entry.comment ?? null,
            reasons: entry.reasons ?? [],
          };
        }
      }
      patch.feedback = feedback;
    }
    const model = [...view.runs].reverse().find((run) => run.model)?.model;
    if (model) patch.model = model;
    this.set(patch);
    this.restoreKeptWork(id, view);

    const liveRunId = load.liveRunId ?? null;
    const lastRun = view.runs.at(-1);
    if (liveRunId && !this.hasSeenEnd(liveRunId)) {
      this.attach(liveRunId);
      return;
    }
    if (lastRun?.status === 'running' && (opts.attempt ?? 0) < STALE_RECHECK.attempts) {
      // Marked running but nobody runs it (its server stopped): the sweep closes it soon.
      this.timers.set('stale-recheck', STALE_RECHECK.delayMs, () => {
        if (!this.connection && this.state.conversationId === id)
          void this.hydrate(id, { quiet: true, attempt: (opts.attempt ?? 0) + 1 });
      });
    }
    this.flushQueue();
  }

  /** True when this tab already saw that run end (its row may still be closing on the server). */
  private hasSeenEnd(runId: string): boolean {
    return this.liveView.current.runs.some((run) => run.runId === runId && run.status !== 'running');
  }

  /**
   * Restores the approval answers and thumbs-down comments kept for a conversation: those of
   * requests still open and of messages still there; the rest is dropped from storage.
   */
  private restoreKeptWork(id: string, view: ConversationView): void {
    const now = this.clock.now();
    const openIds = new Set(
      openInterrupts(view)
        .filter(
          (interrupt) => interruptKindOf(interrupt.reason) === 'tool_approval' && !isExpired(interrupt.expiresAt, now),
        )
        .map((interrupt) => interrupt.id),
    );
    const storedApprovals = this.local.readRecord(this.keys.approvals(id), DraftAnswerSchema);
    const approvals: Record<string, DraftAnswer> = {};
    for (const [interruptId, draft] of Object.entries(storedApprovals))
      if (openIds.has(interruptId)) approvals[interruptId] = draft;
    this.local.writeRecord(this.keys.approvals(id), approvals);
    const openQuestionIds = new Set(
      selectOpenQuestions(view)
        .filter((request) => !isExpired(request.expiresAt, now))
        .map((request) => request.interruptId),
    );
    const questions: Record<string, QuestionDraft> = {};
    for (const [interruptId, draft] of Object.entries(
      this.local.readRecord(this.keys.questions(id), QuestionDraftSchema),
    ))
      if (openQuestionIds.has(interruptId)) questions[interruptId] = draft;
    this.local.writeRecord(this.keys.questions(id), questions);

    const messageIds = new Set(view.messages.filter((m) => m.role === 'assistant').map((m) => m.id));
    const storedComments = this.local.readRecord(this.keys.feedbackDrafts(id), FeedbackDraftSchema);
    const comments: Record<string, string> = {};
    for (const [messageId, text] of Object.entries(storedComments))
      if (messageIds.has(messageId)) comments[messageId] = text;
    this.local.writeRecord(this.keys.feedbackDrafts(id), comments);
    this.set({ approvalDrafts: approvals, questionDrafts: questions, feedbackDrafts: comments });
  }

  /**
   * The tab became visible again (or got the focus): the conversation may have moved on in
   * another tab or window. Looks for a live run quietly and follows it.
   */
  checkLiveRun(): void {
    const id = this.state.conversationId;
    if (!this.mounted || this.connection || !id || this.loadedConversationId !== id || this.state.signedOut) return;
    const now = this.clock.now();
    if (now - this.lastLiveCheck < LIVE_CHECK_MIN_INTERVAL_MS) return;
    this.lastLiveCheck = now;
    void this.hydrate(id, { quiet: true });
  }

  /** The network is back: a pending reattach goes now instead of at the end of its backoff. */
  reconnectNow(): void {
    const connection = this.connection;
    if (!connection?.reconnectPending) return;
    this.timers.clear('reconnect');
    void this.reattach(connection);
  }

  // ---------------------------------------------------------------- runs

  private startRun(request: Exclude<RunRequest, { kind: 'follow' }>): void {
    if (this.connection || !this.mounted) return;
    const threadId = this.state.conversationId ?? this.newId();
    const connection = this.newConnection({ threadId, request, origin: 'sent' });
    this.connection = connection;
    this.navigated = new Set();
    this.hydrateToken++; // a late load must not overwrite the live view
    this.timers.clear('stale-recheck');
    this.timers.clear('queue-expiry');
    if (request.kind === 'message') this.lastSentText = request.text;
    this.refusedVersion = null;
    this.set({
      connection: 'sending',
      hydrating: false,
      requestError: null,
      approvalError: null,
      statusNote: null,
      pendingUserMessage: sentText(request),
    });
    void this.sendRequest(connection);
  }

  /** A new message's request: its text shown while it is on its way, and the parts it sends (files first). */
  private messageRequest(text: string, attachments: AttachmentPart[] = []): Extract<RunRequest, { kind: 'message' }> {
    // The issues and members picked in the composer that the text still names go with their ids.
    const refs = text ? referencePartsFor(text, this.picked.values(), LIMITS.maxReferenceParts) : [];
    const parts: MessagePart[] = [...attachments, ...(text ? [{ type: 'text' as const, text }] : []), ...refs];
    return { kind: 'message', text, parts, messageId: this.newId() };
  }

  /** An issue or member picked in the composer (`#`, `@`): sent as a reference while a message names it. */
  addReference(ref: ReferencePart): void {
    this.picked.delete(ref.label);
    this.picked.set(ref.label, ref);
    // The newest picks only: a long session does not grow the map.
    if (this.picked.size > PICKED_KEPT) this.picked.delete(this.picked.keys().next().value!);
  }

  private newConnection(init: Pick<Connection, 'threadId' | 'request' | 'origin'> & { runId?: string }): Connection {
    return {
      controller: new AbortController(),
      runId: init.runId ?? null,
      threadId: init.threadId,
      position: null,
      origin: init.origin,
      request: init.request,
      started: init.request.kind === 'follow',
      terminal: false,
      stopRequested: false,
      echoed: false,
      catchingUp: init.request.kind === 'follow',
      catchUpStartedAt: null,
      reconnectAttempt: 0,
      reconnectPending: false,
      conflictAttempt: 0,
      announcedDrop: false,
      recovered: false,
    };
  }

  /** POSTs the request of `connection` and reads its stream. */
  private async sendRequest(connection: Connection): Promise<void> {
    const request = connection.request;
    if (request.kind === 'follow') return;
    connection.controller = new AbortController();
    const result = await this.transport.startRun(
      {
        threadId: connection.threadId,
        ...(request.kind === 'message'
          ? { message: { id: request.messageId, parts: request.parts } }
          : request.kind === 'version'
            ? {
                version: { of: request.of },
                ...(request.text === null
                  ? {}
                  : { message: { id: request.messageId, parts: [{ type: 'text' as const, text: request.text }] } }),
              }
            : { resume: request.resume }),
        pageContext: this.deps.pageContext?.() ?? {},
      },
      connection.controller.signal,
    );
    if (connection !== this.connection) return;
    if (result.kind === 'stream') {
      connection.started = true;
      connection.runId = result.runId;
      if (result.threadId) this.adoptConversation(result.threadId);
      if (result.runId) {
        this.post({
          kind: 'run-started',
          userId: this.deps.userId,
          projectId: this.deps.projectId,
          conversationId: result.threadId ?? connection.threadId,
          runId: result.runId,
        });
      }
      this.set({ connection: connection.stopRequested ? 'stopping' : 'streaming', liveRunId: result.runId });
      if (connection.stopRequested) void this.requestCancel(connection);
      await this.consume(connection, result);
    } else if (result.kind === 'refused') {
      await this.onRefused(connection, result);
    } else {
      await this.onUnreachable(connection);
    }
  }

  /** Follows a run this tab did not start (or no longer holds a stream of), from a snapshot. */
  private attach(runId: string): void {
    if (!this.mounted || this.state.signedOut) return;
    if (this.connection) {
      if (this.connection.runId !== runId) this.pendingAttachRunId = runId;
      return;
    }
    const threadId = this.state.conversationId;
    if (!threadId) return;
    const connection = this.newConnection({ threadId, request: { kind: 'follow' }, origin: 'followed', runId });
    this.connection = connection;
    this.hydrateToken++;
    this.timers.clear('stale-recheck');
    this.timers.clear('queue-expiry');
    this.set({ connection: 'streaming', liveRunId: runId, hydrating: false });
    void this.reattach(connection);
  }

  /** Reads a run's stream until it ends or breaks. */
  private async consume(connection: Connection, stream: OpenedStream): Promise<void> {
    try {
      for await (const batch of readSseBatches(stream.body)) {
        if (connection !== this.connection) return;
        if (connection.reconnectAttempt > 0 || this.state.connection === 'reconnecting') {
          connection.reconnectAttempt = 0;
          this.set({ connection: connection.stopRequested ? 'stopping' : 'streaming', reconnectAttempt: 0 });
        }
        if (connection.catchingUp) {
          // The server sends what the run already said at once, on attach: frames arriving within
          // a short window of the first are that catch-up; later ones are live.
          const now = this.clock.now();
          connection.catchUpStartedAt ??= now;
          if (now - connection.catchUpStartedAt > CATCH_UP_WINDOW_MS) connection.catchingUp = false;
        }
        for (const frame of batch) this.onFrame(connection, frame);
        this.scheduleRender();
      }
    } catch {
      // The connection broke (or this tab let go of it): handled below.
    }
    if (connection !== this.connection) return;
    if (connection.terminal) this.finishRun(connection);
    else this.dropped(connection);
  }

  private onFrame(connection: Connection, frame: SseFrame): void {
    if (frame.position !== null) {
      // Never apply an event twice: a reattach asks for the events after this position.
      if (connection.position !== null && frame.position <= connection.position) return;
      connection.position = frame.position;
    }
    if (connection.terminal) return;
    const event = frame.event;
    this.liveView.apply(event);
    this.afterEvent(connection, event);
  }

  /** What an event means beyond the view: ids, announcements, navigation, the end of the run. */
  private afterEvent(connection: Connection, event: AgentEvent): void {
    switch (event.type) {
      case 'RUN_STARTED':
        connection.started = true;
        connection.runId ??= event.runId;
        if (event.threadId) this.adoptConversation(event.threadId);
        // The server accepted the answers: the prepared drafts are done.
        if (connection.request.kind === 'resume') this.clearApprovalDrafts();
        if (connection.request.kind === 'version' && event.runId !== connection.request.of) {
          // The new version is the last of its turn's versions (the replay says the same later).
          const { of, restore } = connection.request;
          const shown = this.liveView.current.versions;
          this.liveView.setVersions({ ...shown, ...addVersion(restore.view.versions, of, event.runId) });
          if (this.state.olderBefore === of) this.set({ olderBefore: event.runId });
        }
        break;
      case 'TEXT_MESSAGE_START':
        if (event.role === 'user' && this.state.pendingUserMessage !== null) this.set({ pendingUserMessage: null });
        break;
      case 'TEXT_MESSAGE_END': {
        const message = this.liveView.current.messages.findLast((m) => m.id === event.messageId);
        const sent = sentText(connection.request);
        if (message?.role === 'user' && sent !== null && message.content.trim() === sent.trim()) {
          connection.echoed = true;
        }
        if (message?.role === 'assistant' && message.content.trim() && !connection.catchingUp) {
          const text = message.content.length > 600 ? `${message.content.slice(0, 600)}…` : message.content;
          this.announce(`Assistant: ${text}`);
        }
        break;
      }
      case 'TOOL_CALL_RESULT': {
        const owner = this.liveView.current.messages.findLast(
          (m) => m.role === 'assistant' && m.toolCalls.some((call) => call.id === event.toolCallId),
        );
        const call = owner?.role === 'assistant' ? owner.toolCalls.find((c) => c.id === event.toolCallId) : undefined;
        if (call?.name === 'navigate') this.navigateFor(connection, navigateHrefFromToolResult(event.content));
        break;
      }
      case 'CUSTOM':
        if (event.name === CUSTOM_EVENTS.model) {
          const info = ModelInfoSchema.safeParse(event.value);
          // The run names its model; what may be attached comes from the model info only.
          if (info.success) this.set({ model: { ...info.data, attachments: this.state.model?.attachments } });
        } else if (event.name === CUSTOM_EVENTS.navigate) {
          const navigation = NavigateValueSchema.safeParse(event.value);
          if (navigation.success) this.navigateFor(connection, navigation.data.href);
        } else if (event.name === CUSTOM_EVENTS.resuming) {
          if (!this.state.resuming) {
            this.set({ resuming: true });
            this.announce('The server writing the answer stopped. Another one is taking it over…');
          }
        } else if (event.name === CUSTOM_EVENTS.resumed) {
          if (this.state.resuming) this.set({ resuming: false });
        } else if (event.name === CUSTOM_EVENTS.changed && !connection.catchingUp) {
          const changed = ChangedValueSchema.safeParse(event.value);
          if (changed.success && changed.data.objects.length) this.deps.onProductChange?.(changed.data.objects);
        } else if (event.name === CUSTOM_EVENTS.budget && !connection.catchingUp) {
          this.noteBudget(event.value);
        }
        break;
      case 'RUN_FINISHED': {
        const approvals =
          event.outcome?.type === 'interrupt'
            ? event.outcome.interrupts.filter((interrupt) => interruptKindOf(interrupt.reason) === 'tool_approval')
                .length
            : 0;
        if (approvals > 0)
          this.announce(`The assistant needs your approval for ${approvals} action${approvals === 1 ? '' : 's'}.`);
        for (const interrupt of event.outcome?.type === 'interrupt' ? event.outcome.interrupts : [])
          if (interruptKindOf(interrupt.reason) === 'user_question')
            this.announce(`The assistant asks you: ${interrupt.message ?? 'a question'}`);
        this.onTerminal(connection);
        break;
      }
      case 'RUN_ERROR':
        this.announce(`The answer failed: ${describeError(event.code, event.message).message}`);
        this.onTerminal(connection);
        break;
      default:
        break;
    }
  }

  /**
   * Only the tab that sent the message follows the assistant to another page, once per page and
   * run, and never for events replayed while catching up.
   */
  private navigateFor(connection: Connection, href: string | null): void {
    if (connection.origin !== 'sent' || connection.catchingUp || !href) return;
    const path = internalPath(href);
    if (!path || this.navigated.has(path)) return;
    this.navigated.add(path);
    this.deps.navigate?.(path);
  }

  private onTerminal(connection: Connection): void {
    connection.terminal = true;
    this.renderNow();
    // The server closes the stream once it has stored the end (so the next request finds the
    // conversation free); if the close does not come, stop waiting for it.
    this.timers.set('finish', FINISH_GRACE_MS, () => {
      if (connection !== this.connection) return;
      connection.controller.abort();
      this.finishRun(connection);
    });
  }

  /** The run ended and its stream closed: back to idle, then the next thing waiting. */
  private finishRun(connection: Connection): void {
    this.release(connection);
    this.showRunEnded(connection.started ? { pendingUserMessage: null } : {});
    this.pruneApprovalDrafts();
    if (
      connection.request.kind === 'message' &&
      !connection.echoed &&
      !this.lastRunHasUserText(connection.request.text)
    ) {
      if (connection.recovered) {
        // Followed the live run after the request got no answer, and it was not ours: the
        // message never arrived.
        this.refuse(connection.request, describeError('NETWORK'));
        return;
      }
      // The run ended (stopped, failed) before taking the message: it goes back into the input.
      this.keepUnsentText(connection.request.text);
    }
    // Stopped here: everything halts, including the messages that waited for this answer. They
    // stay queued until the user sends or clears them. (A run stopped from another window, or by
    // a server's restart, lets this tab's queue go on.)
    const ended = this.liveView.current.runs.find((run) => run.runId === connection.runId);
    if (connection.stopRequested && ended?.status === 'cancelled' && this.state.queue.length > 0) {
      this.setQueuePaused(true);
      this.announce('Stopped. Your queued messages wait until you send or clear them.');
    }
    const next = this.pendingAttachRunId;
    this.pendingAttachRunId = null;
    if (next && next !== connection.runId && !this.hasSeenEnd(next)) {
      this.attach(next);
      return;
    }
    this.flushQueue();
  }

  /** Lets go of the run's stream and its timers: it ended, or is no longer followed. */
  private release(connection: Connection): void {
    this.timers.clear('finish');
    this.timers.clear('reconnect');
    connection.controller.abort();
    this.connection = null;
  }

  /** Shows the run's end and goes back to idle (the history list refetches). */
  private showRunEnded(patch: Partial<AgentState>): void {
    this.renderNow();
    this.set({
      connection: 'idle',
      liveRunId: null,
      reconnectAttempt: 0,
      resuming: false,
      runsFinished: this.state.runsFinished + 1,
      ...patch,
    });
  }

  private lastRunHasUserText(text: string): boolean {
    const view = this.liveView.current;
    const lastRunId = view.runs.at(-1)?.runId;
    return view.messages.some((m) => m.role === 'user' && m.runId === lastRunId && m.content.trim() === text.trim());
  }

  /** Drafts of requests that are no longer open (answered here or elsewhere) are dropped. */
  private pruneApprovalDrafts(): void {
    const openQuestionIds = new Set(selectOpenQuestions(this.liveView.current).map((request) => request.interruptId));
    const keptQuestions: Record<string, QuestionDraft | undefined> = {};
    for (const [interruptId, draft] of Object.entries(this.state.questionDrafts))
      if (openQuestionIds.has(interruptId)) keptQuestions[interruptId] = draft;
    if (Object.keys(keptQuestions).length !== Object.keys(this.state.questionDrafts).length) {
      if (this.state.conversationId)
        this.local.writeRecord(this.keys.questions(this.state.conversationId), keptQuestions);
      this.set({ questionDrafts: keptQuestions });
    }
    const openIds = new Set(selectOpenApprovals(this.liveView.current).map((request) => request.interruptId));
    const kept: Record<string, DraftAnswer | undefined> = {};
    for (const [interruptId, draft] of Object.entries(this.state.approvalDrafts))
      if (openIds.has(interruptId)) kept[interruptId] = draft;
    if (Object.keys(kept).length === Object.keys(this.state.approvalDrafts).length) return;
    if (this.state.conversationId) this.local.writeRecord(this.keys.approvals(this.state.conversationId), kept);
    this.set({ approvalDrafts: kept });
  }

  /** The stream ended or broke before the run's end: reattach after a pause, from the last position. */
  private dropped(connection: Connection): void {
    if (!connection.runId) {
      void this.onUnreachable(connection);
      return;
    }
    connection.reconnectAttempt += 1;
    const attempt = connection.reconnectAttempt;
    this.set({ connection: connection.stopRequested ? 'stopping' : 'reconnecting', reconnectAttempt: attempt });
    if (attempt >= 2 && !connection.announcedDrop) {
      // Said once, and only when the first reattach failed too (a blip is not worth a word).
      connection.announcedDrop = true;
      this.announce('The connection to the answer was lost. Reconnecting…');
    }
    connection.reconnectPending = true;
    this.timers.set(
      'reconnect',
      reconnectDelay(attempt, this.deps.random?.() ?? Math.random()),
      () => void this.reattach(connection),
    );
  }

  /** GET the run's events after the last position (or from a snapshot when there is none). */
  private async reattach(connection: Connection): Promise<void> {
    if (connection !== this.connection || !connection.runId) return;
    connection.reconnectPending = false;
    this.timers.clear('reconnect');
    connection.controller.abort();
    connection.controller = new AbortController();
    connection.catchingUp = connection.position === null;
    connection.catchUpStartedAt = null;
    const result = await this.transport.followRun(connection.runId, connection.position, connection.controller.signal);
    if (connection !== this.connection) return;
    if (result.kind === 'stream') {
      await this.consume(connection, result);
      return;
    }
    if (result.kind === 'unreachable' || result.status >= 500 || result.status === 429 || result.status === 408) {
      this.dropped(connection);
      return;
    }
    // 401, 404 (the run or conversation is gone), ...: stop following and show the server's copy.
    this.abandon(connection, result.status === 404 ? null : result.error);
  }

  /** Stops following a run without its end (it is gone, or this user may no longer see it). */
  private abandon(connection: Connection, error: PanelError | null): void {
    this.release(connection);
    const current = this.liveView.current.runs.at(-1);
    if (current?.status === 'running' && current.runId === connection.runId) {
      // Nothing may stay "streaming" forever: the run's end is shown from what is known.
      const code = isAgentErrorCode(error?.code) ? error.code : undefined;
      this.liveView.apply({
        type: 'RUN_ERROR',
        message: error?.message ?? describeError('NETWORK').message,
        ...(code ? { code } : {}),
      });
    }
    this.showRunEnded({ pendingUserMessage: null });
    if (error) {
      this.set({ requestError: { ...error, retryable: false } });
      this.announce(`The answer could not be followed: ${error.message}`);
    }
    const id = this.state.conversationId;
    if (id && error?.code !== 'UNAUTHENTICATED') void this.hydrate(id, { quiet: true });
  }

  /** Stop: asks the server to stop the run (from any tab); its end then reaches every tab. */
  stop(): void {
    const connection = this.connection;
    if (!connection || connection.stopRequested) return;
    if (!connection.started && connection.request.kind !== 'follow') {
      // Still waiting to be accepted (a retry after RUN_IN_PROGRESS): take the message back.
      if (this.state.connection === 'sending' && connection.conflictAttempt > 0) {
        this.timers.clear('conflict-retry');
        this.connection = null;
        connection.controller.abort();
        this.set({ connection: 'idle', pendingUserMessage: null });
        if (connection.request.kind === 'message') this.restoreText(connection.request.text);
        if (connection.request.kind === 'version') this.restoreVersion(connection.request);
        return;
      }
    }
    connection.stopRequested = true;
    this.set({ connection: 'stopping', statusNote: null });
    // Without a run id yet (the request is on its way), the cancel goes as soon as it is known.
    if (connection.runId) void this.requestCancel(connection);
  }

  private async requestCancel(connection: Connection): Promise<void> {
    const runId = connection.runId;
    if (!runId) return;
    const result = await this.transport.cancelRun(runId);
    if (connection !== this.connection) return;
    if (result.kind === 'stopping') return;
    if (result.kind === 'ended') {
      // It had already ended: its end comes through the stream (at once, if a reattach was waiting).
      this.reconnectNow();
      return;
    }
    if (result.kind === 'refused' && result.status === 404) {
      this.abandon(connection, null);
      return;
    }
    connection.stopRequested = false;
    const note = `Could not stop the answer: ${result.error.message}`;
    this.set({ connection: this.state.reconnectAttempt > 0 ? 'reconnecting' : 'streaming', statusNote: note });
    this.announce(note);
  }

  /** The server answered the request with an error instead of a stream. */
  private async onRefused(connection: Connection, result: Refused): Promise<void> {
    if (result.error.code === 'RUN_IN_PROGRESS') {
      await this.onConflict(connection, result.error);
      return;
    }
    this.connection = null;
    this.set({ connection: 'idle' });
    if (connection.request.kind !== 'follow') this.refuse(connection.request, result.error);
  }

  /**
   * RUN_IN_PROGRESS: another run holds the conversation (another tab's, or one still closing).
   * A live one is followed, and this message queued behind it; otherwise the request is retried
   * shortly, a few times.
   */
  private async onConflict(connection: Connection, error: PanelError): Promise<void> {
    connection.conflictAttempt += 1;
    const load = await this.loadQuietly(connection.threadId);
    if (connection !== this.connection) return;
    const liveRunId = load?.ok ? (load.liveRunId ?? null) : null;
    if (liveRunId && !this.hasSeenEnd(liveRunId)) {
      this.connection = null;
      if (connection.request.kind === 'message') {
        const attachments = attachmentsOf(connection.request.parts);
        this.setQueue([
          {
            id: this.newId(),
            text: connection.request.text,
            editing: false,
            ...(attachments.length ? { attachments } : {}),
          },
          ...this.state.queue,
        ]);
        this.announce('The assistant is still answering (maybe in another tab): your message is queued.');
      } else if (connection.request.kind === 'version') {
        // A new version of a turn that goes on meanwhile makes no sense: it is not sent.
        this.refuse(connection.request, error);
      }
      this.set({ connection: 'idle', pendingUserMessage: null });
      this.attach(liveRunId);
      return;
    }
    if (connection.conflictAttempt < CONFLICT_RETRY.attempts) {
      this.timers.set('conflict-retry', CONFLICT_RETRY.delayMs * connection.conflictAttempt, () => {
        if (connection === this.connection) void this.sendRequest(connection);
      });
      return;
    }
    this.connection = null;
    this.set({ connection: 'idle' });
    if (connection.request.kind !== 'follow') this.refuse(connection.request, error);
  }

  /**
   * The request got no answer: it may or may not have started a run. The conversation tells:
   * a live run is followed (the message's echo then shows whether it was ours), a finished one
   * that holds the message is shown; otherwise the message was not sent.
   */
  private async onUnreachable(connection: Connection): Promise<void> {
    const load = await this.loadQuietly(connection.threadId);
    if (connection !== this.connection) return;
    const request = connection.request;
    const liveRunId = load?.ok ? (load.liveRunId ?? null) : null;
    if (liveRunId && !this.hasSeenEnd(liveRunId)) {
      connection.runId = liveRunId;
      connection.started = true;
      connection.recovered = true;
      connection.position = null;
      if (this.state.conversationId !== connection.threadId) this.adoptConversation(connection.threadId);
      this.set({ connection: 'reconnecting', liveRunId });
      await this.reattach(connection);
      return;
    }
    this.connection = null;
    this.set({ connection: 'idle' });
    const view = load?.ok ? ConversationViewSchema.safeParse(load.view) : null;
    const newestTurn = view?.success ? lastTurnRunId(view.data) : null;
    const delivered =
      view?.success &&
      (request.kind === 'message'
        ? view.data.runs.length > this.liveView.current.runs.length &&
          view.data.messages.some((m) => m.role === 'user' && m.content.trim() === request.text.trim())
        : request.kind === 'version'
          ? newestTurn !== null && !request.restore.view.runs.some((run) => run.runId === newestTurn)
          : request.kind === 'resume' && openRequests(view.data).length === 0);
    if (view?.success && delivered) {
      if (this.state.conversationId !== connection.threadId) this.adoptConversation(connection.threadId);
      this.replaceView(view.data);
      this.set({
        pendingUserMessage: null,
        runsFinished: this.state.runsFinished + 1,
        olderBefore: load?.ok ? (load.olderBefore ?? null) : null,
      });
      this.flushQueue();
      return;
    }
    if (request.kind !== 'follow') this.refuse(request, describeError('NETWORK'));
  }

  /**
   * A request that did not go through: its text goes back into the input when that is empty
   * (never lost, even across a reload), the error row offers Retry.
   */
  private refuse(request: Exclude<RunRequest, { kind: 'follow' }>, error: PanelError): void {
    if (request.kind === 'version') {
      this.restoreVersion(request);
      this.refusedVersion = error.retryable ? request : null;
      this.set({ requestError: error });
      const what = request.text === null ? 'No new answer was asked for' : 'Your edit was not sent';
      this.announce(`${what}: ${error.message}`);
      // The turn changed elsewhere (another tab): show the server's copy.
      const id = this.state.conversationId;
      if (error.code === 'VERSION_NOT_FOUND' && id) void this.hydrate(id, { quiet: true });
    } else if (request.kind === 'message') {
      this.restoreText(request.text);
      this.restoreAttachments(request.parts);
      this.set({ requestError: error });
      this.announce(`Your message was not sent: ${error.message}`);
    } else {
      // Shown on the cards too (a question's card says what was wrong with the answer).
      this.set({
        requestError: { ...error, retryable: false },
        pendingUserMessage: null,
        approvalError: error.message,
      });
      this.announce(`Your decisions were not accepted: ${error.message}`);
      // The requests may have changed (expired, answered elsewhere): show the server's copy.
      if (this.state.conversationId) void this.hydrate(this.state.conversationId, { quiet: true });
    }
    this.set({ runsFinished: this.state.runsFinished + 1 });
  }

  private keepUnsentText(text: string): void {
    this.lastSentText = text;
    if (!this.state.draft.trim()) this.setDraft(text);
  }

  private restoreText(text: string): void {
    this.lastSentText = text;
    if (!this.state.draft.trim()) {
      this.setDraft(text);
      this.set({ pendingUserMessage: null });
    } else {
      // Something new is being typed: the refused message stays visible above it instead.
      this.set({ pendingUserMessage: text });
    }
  }

  private async loadQuietly(conversationId: string): Promise<ConversationLoad | null> {
    try {
      return await this.deps.api.loadConversation(conversationId);
    } catch {
      return null;
    }
  }

  /** Lets go of the stream without stopping the run. */
  private dropConnection(): void {
    const connection = this.connection;
    this.connection = null;
    connection?.controller.abort();
  }

  // ---------------------------------------------------------------- other tabs, sign-out

  private post(message: TabMessage): void {
    try {
      this.channel?.postMessage(message);
    } catch {
      // The channel closed meanwhile: the other tabs find the run when they look again.
    }
  }

  private onTabMessage(data: unknown): void {
    const parsed = TabMessageSchema.safeParse(data);
    if (!parsed.success) return;
    const message = parsed.data;
    if (message.kind === 'signed-out') {
      this.signOut({ broadcast: false });
      return;
    }
    if (message.userId !== this.deps.userId || message.projectId !== this.deps.projectId) return;
    if (message.conversationId !== this.state.conversationId || this.loadedConversationId !== message.conversationId)
      return;
    if (this.connection?.runId === message.runId) return;
    this.attach(message.runId);
  }

  /**
   * Sign-out (here or in another tab): every key of the panel is removed, nothing is written any
   * more, the stream is let go (the run goes on) and the state is emptied.
   */
  signOut(opts: { broadcast?: boolean } = {}): void {
    if (opts.broadcast !== false) this.post({ kind: 'signed-out' });
    clearAssistantStorage([this.deps.storage?.local ?? null, this.deps.storage?.session ?? null]);
    this.local.seal();
    this.session.seal();
    this.unmount();
    this.liveView.replace(emptyView());
    this.state = { ...this.initialState(), signedOut: true };
    for (const listener of [...this.listeners]) listener();
  }

  // ---------------------------------------------------------------- view, announcements

  private replaceView(view: ConversationView): void {
    this.liveView.replace(view);
    this.renderNow();
  }

  private scheduleRender(): void {
    if (this.cancelFrame) return;
    if (!this.deps.scheduleFrame) {
      this.renderNow();
      return;
    }
    this.cancelFrame = this.deps.scheduleFrame(() => {
      this.cancelFrame = null;
      this.renderNow();
    });
  }

  private renderNow(): void {
    this.cancelFrame?.();
    this.cancelFrame = null;
    if (this.liveView.hasChanges) this.set({ view: this.liveView.snapshot() });
  }

  /** A run's budgets: the 80 % warning, once per budget and window. */
  private noteBudget(value: unknown): void {
    const key = this.keys.budgetWarned();
    const warning = budgetWarningFor(value, this.local.readList(key, z.string().max(200)));
    if (!warning) return;
    this.local.writeList(key, warning.warned);
    this.set({ budgetWarning: warning.text });
    this.announce(warning.text);
  }

  private announce(text: string): void {
    const trimmed = text.trim();
    if (!trimmed) return;
    this.announcementId += 1;
    this.set({
      announcements: [
        ...this.state.announcements.slice(-(ANNOUNCEMENTS_KEPT - 1)),
        { id: this.announcementId, text: trimmed },
      ],
    });
  }

  private newId(): string {
    return (this.deps.newId ?? defaultId)();
  }
}

export function createAgentStore(deps: AgentStoreDeps): AgentStore {
  return new AgentStore(deps);
}
