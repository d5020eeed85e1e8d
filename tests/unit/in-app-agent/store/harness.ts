// Drives the panel's store without a browser: a scripted agent server behind an injected fetch
// (SSE streams the test feeds event by event, with positions computed as the server does), a
// manual clock, in-memory storages and an in-memory tab channel.
import { eventWeight } from '@/features/in-app-agent/compact';
import {
  createAgentStore,
  type AgentStore,
  type AgentStoreDeps,
  type Clock,
  type ConversationLoad,
  type PageLoad,
} from '@/features/in-app-agent/components/agent-store';
import type { StorageLike } from '@/features/in-app-agent/components/storage';
import type { ChannelLike } from '@/features/in-app-agent/components/tab-channel';
import type { AgentEvent, ConversationView } from '@/features/in-app-agent/schema';

export const PROJECT = 'p_test';
export const START = Date.parse('2030-01-01T00:00:00Z');

/** Lets pending promises, stream reads and microtasks settle. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 25; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

export class ManualClock implements Clock {
  private time = START;
  private sequence = 0;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(callback: () => void, ms: number): number {
    const id = ++this.sequence;
    this.timers.set(id, { at: this.time + Math.max(0, ms), callback });
    return id;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward, running due timers in order (and letting their work settle). */
  async advance(ms: number): Promise<void> {
    const target = this.time + ms;
    for (;;) {
      let next: [number, { at: number; callback: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= target && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = next[1].at;
      next[1].callback();
      await settle();
    }
    this.time = target;
    await settle();
  }
}

export class MemoryStorage implements StorageLike {
  private readonly map = new Map<string, string>();
  get length(): number {
    return this.map.size;
  }
  key(index: number): string | null {
    return [...this.map.keys()][index] ?? null;
  }
  getItem(key: string): string | null {
    return this.map.get(key) ?? null;
  }
  setItem(key: string, value: string): void {
    this.map.set(key, String(value));
  }
  removeItem(key: string): void {
    this.map.delete(key);
  }
  keys(): string[] {
    return [...this.map.keys()];
  }
}

/** Tabs of one browser: what one end posts, every other open end receives (asynchronously). */
export class TabBus {
  private readonly ends = new Set<{ receive: (data: unknown) => void }>();
  open(): ChannelLike {
    let onMessage: (data: unknown) => void = () => undefined;
    const end = { receive: (data: unknown) => onMessage(structuredClone(data)) };
    this.ends.add(end);
    return {
      postMessage: (message) => {
        for (const other of this.ends) if (other !== end) queueMicrotask(() => other.receive(message));
      },
      listen: (handler) => {
        onMessage = handler;
      },
      close: () => {
        this.ends.delete(end);
      },
    };
  }
  get openEnds(): number {
    return this.ends.size;
  }
}

/** One SSE response body the test writes to: events get positions like the server's run log. */
export class ScriptedStream {
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private readonly encoder = new TextEncoder();
  private closed = false;
  position: number;
  readonly body: ReadableStream<Uint8Array>;

  constructor(startPosition = 0) {
    this.position = startPosition;
    this.body = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.controller = controller;
      },
    });
  }

  /** Sends events in one network chunk, each with its position (`id:`). */
  emit(...events: AgentEvent[]): number {
    let text = '';
    for (const event of events) {
      this.position += eventWeight(event);
      text += `id: ${this.position}\ndata: ${JSON.stringify(event)}\n\n`;
    }
    this.raw(text);
    return this.position;
  }

  /** Sends an event at an explicit position (a replayed frame). */
  emitAt(position: number, event: AgentEvent): void {
    this.raw(`id: ${position}\ndata: ${JSON.stringify(event)}\n\n`);
  }

  /** Sends an event without a position (snapshots). */
  emitUnpositioned(event: AgentEvent): void {
    this.raw(`data: ${JSON.stringify(event)}\n\n`);
  }

  raw(text: string): void {
    if (!this.closed) this.controller.enqueue(this.encoder.encode(text));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.controller.close();
  }

  /** The connection breaks. */
  fail(): void {
    if (this.closed) return;
    this.closed = true;
    this.controller.error(new TypeError('network connection lost'));
  }
}

export interface RecordedRequest {
  method: string;
  url: string;
  body: Record<string, unknown> | null;
}

type Responder = (request: RecordedRequest) => Response | Promise<Response>;

export function streamResponse(stream: ScriptedStream, runId: string, threadId: string): Response {
  return new Response(stream.body, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream',
      'x-in-app-agent-run-id': runId,
      'x-in-app-agent-thread-id': threadId,
    },
  });
}

export function errorResponse(status: number, code: string, message = code): Response {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json' },
  });
}

function networkError(): never {
  throw new TypeError('fetch failed');
}

/**
 * The agent routes, scripted: each request takes the next responder queued for its route (start,
 * follow, cancel); without one it fails like a broken network.
 */
export class FakeAgentServer {
  readonly requests: RecordedRequest[] = [];
  private readonly responders = { start: [] as Responder[], follow: [] as Responder[], cancel: [] as Responder[] };
  /** Conversations `conversations.get` knows (its newest page, and the run before which older ones start). */
  readonly conversations = new Map<
    string,
    { view: ConversationView; liveRunId: string | null; olderBefore?: string | null }
  >();
  /** Pages `conversations.older` answers, by `${conversationId} ${before}`. */
  readonly olderPages = new Map<string, { view: ConversationView; olderBefore: string | null }>();
  /** What `conversations.selectVersion` answers, by run id (absent: VERSION_NOT_SELECTABLE). */
  readonly versionPages = new Map<string, { view: ConversationView; olderBefore: string | null }>();
  /** Calls of `older` and `selectVersion`, in order (`older <before>`, `select <runId>`). */
  readonly pageCalls: string[] = [];
  readonly feedback: unknown[] = [];

  onStart(responder: Responder): void {
    this.responders.start.push(responder);
  }
  onFollow(responder: Responder): void {
    this.responders.follow.push(responder);
  }
  onCancel(responder: Responder): void {
    this.responders.cancel.push(responder);
  }

  of(kind: 'start' | 'follow' | 'cancel'): RecordedRequest[] {
    return this.requests.filter((r) => routeOf(r) === kind);
  }

  readonly fetch = async (url: string, init?: RequestInit): Promise<Response> => {
    const request: RecordedRequest = {
      method: init?.method ?? 'GET',
      url,
      body: typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : null,
    };
    this.requests.push(request);
    const responder = this.responders[routeOf(request)].shift();
    if (!responder) networkError();
    const response = await responder(request);
    // Like a real fetch: aborting the request ends its body with an error.
    const body = response.body;
    if (body && init?.signal) {
      const reader = body.getReader();
      const signal = init.signal;
      const forwarded = new ReadableStream<Uint8Array>({
        start(controller) {
          const abort = () => controller.error(new DOMException('aborted', 'AbortError'));
          if (signal.aborted) abort();
          signal.addEventListener('abort', abort, { once: true });
        },
        async pull(controller) {
          try {
            const { done, value } = await reader.read();
            if (done) controller.close();
            else controller.enqueue(value);
          } catch (err) {
            controller.error(err);
          }
        },
        cancel: () => reader.cancel(),
      });
      return new Response(forwarded, { status: response.status, headers: response.headers });
    }
    return response;
  };

  readonly api = {
    loadConversation: async (conversationId: string): Promise<ConversationLoad> => {
      const found = this.conversations.get(conversationId);
      if (!found) return { ok: false, notFound: true, message: 'Conversation not found.' };
      return {
        ok: true,
        view: structuredClone(found.view),
        feedback: {},
        liveRunId: found.liveRunId,
        olderBefore: found.olderBefore ?? null,
      };
    },
    loadOlder: async (conversationId: string, before: string): Promise<PageLoad> => {
      this.pageCalls.push(`older ${before}`);
      const page = this.olderPages.get(`${conversationId} ${before}`);
      if (!page) return { ok: false, notFound: false, message: 'Could not load earlier messages.' };
      return { ok: true, view: structuredClone(page.view), olderBefore: page.olderBefore };
    },
    selectVersion: async (_conversationId: string, runId: string): Promise<PageLoad> => {
      this.pageCalls.push(`select ${runId}`);
      const page = this.versionPages.get(runId);
      if (!page) return { ok: false, notFound: false, message: 'That version cannot be shown now.' };
      return { ok: true, view: structuredClone(page.view), olderBefore: page.olderBefore };
    },
    submitFeedback: async (input: unknown) => {
      this.feedback.push(input);
    },
    modelInfo: async () => ({ provider: 'demo', modelId: 'demo', label: 'Demo model', demo: true }),
  };
}

function routeOf(request: RecordedRequest): 'start' | 'follow' | 'cancel' {
  if (request.url.includes('/runs/') && request.url.includes('/cancel')) return 'cancel';
  if (request.url.includes('/runs/') && request.url.includes('/events')) return 'follow';
  return 'start';
}

export interface Harness {
  store: AgentStore;
  server: FakeAgentServer;
  clock: ManualClock;
  local: MemoryStorage;
  session: MemoryStorage;
  bus: TabBus;
}

/** A store wired to fakes; tabs of one browser share `local`, `bus` and `server`. */
export function makeStore(
  overrides: Partial<AgentStoreDeps> & {
    server?: FakeAgentServer;
    clock?: ManualClock;
    local?: MemoryStorage;
    session?: MemoryStorage;
    bus?: TabBus;
  } = {},
): Harness {
  const server = overrides.server ?? new FakeAgentServer();
  const clock = overrides.clock ?? new ManualClock();
  const local = overrides.local ?? new MemoryStorage();
  const session = overrides.session ?? new MemoryStorage();
  const bus = overrides.bus ?? new TabBus();
  let counter = 0;
  const store = createAgentStore({
    projectId: PROJECT,
    userId: 'user-a',
    api: server.api,
    fetch: server.fetch,
    storage: { local, session },
    clock,
    openChannel: () => bus.open(),
    random: () => 1,
    newId: () => `id-${(counter += 1).toString().padStart(4, '0')}-test`,
    ...overrides,
  });
  return { store, server, clock, local, session, bus };
}

// ------------------------------------------------------------------------------------------------
// Event builders
// ------------------------------------------------------------------------------------------------

export function userTurn(
  threadId: string,
  runId: string,
  messageId: string,
  text: string,
  parentRunId?: string,
): AgentEvent[] {
  return [
    { type: 'RUN_STARTED', threadId, runId, ...(parentRunId ? { parentRunId } : {}) },
    { type: 'TEXT_MESSAGE_START', messageId, role: 'user' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text },
    { type: 'TEXT_MESSAGE_END', messageId },
  ];
}

export function finished(threadId: string, runId: string): AgentEvent {
  return { type: 'RUN_FINISHED', threadId, runId, outcome: { type: 'success' } };
}

function approvalInterrupt(id: string, toolCallId: string, args: Record<string, unknown>, expiresAt: string) {
  return {
    id,
    reason: 'tool_approval',
    toolCallId,
    expiresAt,
    metadata: {
      toolName: 'close_issue',
      args,
      argsFingerprint: `fp-${id}`,
      approvalReason: 'destructive',
      why: 'Closes an issue.',
      destructive: true,
      inputSchema: {
        type: 'object',
        properties: { number: { type: 'integer' } },
        required: ['number'],
        additionalProperties: false,
      },
    },
  };
}

/** An answer that ends asking approval for two calls (like "close issues 1 and 2"). */
export function interruptedTurn(threadId: string, runId: string, expiresAt: string): AgentEvent[] {
  return [
    ...userTurn(threadId, runId, `u-${runId}`, 'close issues 1 and 2'),
    { type: 'TOOL_CALL_START', toolCallId: 'call_1', toolCallName: 'close_issue', parentMessageId: `a-${runId}` },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'call_1', delta: '{"number":1}' },
    { type: 'TOOL_CALL_END', toolCallId: 'call_1' },
    { type: 'TOOL_CALL_START', toolCallId: 'call_2', toolCallName: 'close_issue', parentMessageId: `a-${runId}` },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'call_2', delta: '{"number":2}' },
    { type: 'TOOL_CALL_END', toolCallId: 'call_2' },
    {
      type: 'RUN_FINISHED',
      threadId,
      runId,
      outcome: {
        type: 'interrupt',
        interrupts: [
          approvalInterrupt('int_1', 'call_1', { number: 1 }, expiresAt),
          approvalInterrupt('int_2', 'call_2', { number: 2 }, expiresAt),
        ],
      },
    },
  ];
}

export function assistantText(view: ConversationView): string[] {
  return view.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
}
