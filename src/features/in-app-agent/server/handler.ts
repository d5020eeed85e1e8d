/**
 * The authority boundary of the in-app agent: authenticate, authorize, validate, sanitize, own the
 * run (ids, single RUNNING run, per-run MCP key), stream AG-UI events and persist them.
 */
import { setMaxListeners } from 'node:events';
import { EventEncoder } from '@ag-ui/encoder';
import { mintAgentKey, revokeKey } from '@/server/api-keys';
import { getSessionUser, isSameOrigin, type SessionUser } from '@/server/auth';
import { getDb, getPrisma, type PrismaClient } from '@/server/db';
import { env, type Env } from '@/server/env';
import { hasProjectAccess, type Role } from '@/server/rbac';
import { hasUnstorableText, isIdentifier } from '@/server/text';
import { CUSTOM_EVENTS, LIMITS, type AgentErrorCode } from '../constants';
import { foldEvent } from '../fold';
import { newId } from '@/server/ids';
import {
  AgentRequestSchema,
  PageContextSchema,
  type AgentEvent,
  type AgentRequest,
  type ConversationView,
  type ModelInfo,
  type SanitizedRequest,
} from '../schema';
import { handleMcpPost } from '@/features/mcp/server';
import { capResult, listRunTools, runAgent, type ListedTools, type RunResult } from './agent';
import { mcpGateway, type McpGateway } from './mcp-gateway';
import { closeAbandoned, consumeResume, executeApproved, markConsumed, persistPending, ResumeError, type Decision } from './human-in-the-loop';
import { configureTracing, endSpan, RunTrace, traceIdOf, tracer } from './instrumentation';
import { modelFor, ModelConfigError, type ModelHandle } from './model';
import {
  createConversation,
  createRun,
  findOwnConversation,
  recoverStaleRuns,
  replayWithSeq,
  RunConflictError,
  recoverAfterRestart,
  RunRecorder,
  startStaleSweep,
  titleFrom,
  type RunEnd,
} from './persistence';
import { isLocalTool, runLocalTool } from './tools';

export interface HandlerOptions {
  /** Builds the model for a run; defaults to the provider selected by the environment. */
  model?: () => ModelHandle;
  /** URL of the product's MCP endpoint, reached over HTTP; defaults to `resolveMcpTarget(env)`. */
  mcpUrl?: string;
  /** Tools that need approval on top of the approval map (tightens only; e.g. `navigate`). */
  requireApproval?: readonly string[];
  /** Persistence cadence (tests, bench). */
  flushIntervalMs?: number;
  heartbeatMs?: number;
  /** Model idle timeout (default LIMITS.modelIdleTimeoutMs). */
  modelIdleTimeoutMs?: number;
  /** Lifetime of the per-run MCP key, extended by the heartbeat (default LIMITS.runKeyTtlSeconds). */
  runKeyTtlSeconds?: number;
  /** Period of the stale-run sweep (default: half the stale window, at least 5 s). */
  staleSweepMs?: number;
}

/**
 * Where the run's key is sent. `AGENT_MCP_URL` set: that endpoint, over HTTP (an MCP server run
 * on its own). Unset: the product's MCP handler in this process, called with the same Request
 * object and authentication path as over HTTP, without a socket. Never derived from the request:
 * a crafted Host header cannot receive the key.
 */
export function resolveMcpTarget(e: Pick<Env, 'AGENT_MCP_URL'>, override?: string): { url: string } | { dispatch: typeof handleMcpPost } {
  const url = override ?? e.AGENT_MCP_URL;
  return url ? { url } : { dispatch: (req: Request) => handleMcpPost(req) };
}

type RouteContext = { params: Promise<{ projectId: string }> };

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

export function errorResponse(status: number, code: AgentErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ error: { code, message } }), { status, headers: { ...JSON_HEADERS, ...headers } });
}

class BodyError extends Error {
  constructor(
    readonly status: number,
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** Reads at most `limit` bytes; a larger body is refused before it is buffered. */
async function readCapped(req: Request, limit: number): Promise<string> {
  const declared = Number(req.headers.get('content-length') ?? '0');
  if (declared > limit) throw new BodyError(413, 'PAYLOAD_TOO_LARGE', 'The request is too large.');
  if (!req.body) return '';
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => undefined);
      throw new BodyError(413, 'PAYLOAD_TOO_LARGE', 'The request is too large.');
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function textOfContent(content: unknown): string | null {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.filter((p): p is { type: 'text'; text: string } => !!p && typeof p === 'object' && (p as { type?: unknown }).type === 'text' && typeof (p as { text?: unknown }).text === 'string');
    return parts.length ? parts.map((p) => p.text).join('\n') : null;
  }
  return null;
}

/**
 * Keeps only what the client may decide: the newest user message, the conversation id, the page
 * context (as untrusted data) and resume answers. Client history, system/assistant/tool messages,
 * client tools, state and run ids are dropped.
 */
export function sanitize(body: AgentRequest): SanitizedRequest {
  let userMessage: string | null = null;
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const m = body.messages[i]!;
    if (m.role !== 'user') continue;
    const text = textOfContent(m.content);
    if (text !== null) userMessage = text.trim().slice(0, LIMITS.maxUserMessageChars) || null;
    break;
  }
  const page = PageContextSchema.safeParse(body.forwardedProps?.pageContext ?? {});
  const threadId = body.threadId?.trim();
  return {
    conversationId: threadId && threadId !== 'new' ? threadId : null,
    userMessage,
    pageContext: page.success ? page.data : {},
    resume: body.resume?.length ? body.resume : null,
  };
}

// A sliding one-minute window per user, per process.
const windows = new Map<string, number[]>();
function rateLimited(userId: string, perMinute: number): number | null {
  const now = Date.now();
  const list = (windows.get(userId) ?? []).filter((t) => now - t < 60_000);
  if (list.length >= perMinute) {
    windows.set(userId, list);
    return Math.ceil((60_000 - (now - list[0]!)) / 1000);
  }
  list.push(now);
  windows.set(userId, list);
  return null;
}

/** The user's role in the project and the project's name (for the system prompt), in one query. */
async function projectRole(prisma: PrismaClient, user: SessionUser, projectId: string): Promise<{ role: Role; projectName: string } | null> {
  const m = await prisma.projectMembership.findUnique({
    where: { projectId_userId: { projectId, userId: user.id } },
    select: { role: true, project: { select: { name: true } } },
  });
  return m ? { role: m.role, projectName: m.project.name } : null;
}

export function createAgentHandler(opts: HandlerOptions = {}) {
  return async function POST(req: Request, routeCtx: RouteContext): Promise<Response> {
    try {
      return await handle(req, routeCtx, opts);
    } catch (err) {
      console.error('[in-app-agent] request failed', err);
      return errorResponse(500, 'INTERNAL_ERROR', 'Something went wrong. Please try again.');
    }
  };
}

async function handle(req: Request, routeCtx: RouteContext, opts: HandlerOptions): Promise<Response> {
  const e = env();
  const { projectId } = await routeCtx.params;
  const user = await getSessionUser(req);
  if (!user) return errorResponse(401, 'UNAUTHENTICATED', 'Sign in to use the assistant.');
  if (!isSameOrigin(req)) return errorResponse(403, 'CROSS_ORIGIN', 'Cross-origin request refused.');
  if (!(req.headers.get('content-type') ?? '').toLowerCase().includes('application/json')) {
    return errorResponse(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the request as application/json.');
  }
  let raw: string;
  try {
    raw = await readCapped(req, LIMITS.maxBodyBytes);
  } catch (err) {
    if (err instanceof BodyError) return errorResponse(err.status, err.code, err.message);
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return errorResponse(400, 'INVALID_REQUEST', 'The request body is not valid JSON.');
  }
  const parsed = AgentRequestSchema.safeParse(json);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    return errorResponse(400, 'INVALID_REQUEST', `Invalid request${first ? ` at ${first.path.join('.') || '(body)'}: ${first.message}` : ''}.`);
  }

  const prisma = await getPrisma();
  // A project id that cannot be an id (NUL, too long) names no project: never sent to the database.
  const membership = isIdentifier(projectId) ? await projectRole(prisma, user, projectId) : null;
  if (!membership) return errorResponse(404, 'PROJECT_NOT_FOUND', 'Project not found.');
  const { role, projectName } = membership;
  const subject = { role, isAdmin: user.isAdmin };
  if (!hasProjectAccess(subject, 'agent:use')) return errorResponse(403, 'FORBIDDEN', 'Your role cannot use the assistant here.');

  const retryAfter = rateLimited(user.id, e.AGENT_RATE_LIMIT_PER_MINUTE);
  if (retryAfter !== null) {
    return errorResponse(429, 'RATE_LIMITED', `Too many requests. Try again in ${retryAfter} s.`, { 'retry-after': String(retryAfter) });
  }

  const input = sanitize(parsed.data);
  // Request parts that cannot be ids, and text the database cannot store, never reach it.
  if (input.conversationId && !isIdentifier(input.conversationId)) {
    return errorResponse(404, 'CONVERSATION_NOT_FOUND', 'Conversation not found.');
  }
  if (input.resume?.some((r) => !isIdentifier(r.interruptId))) {
    return errorResponse(404, 'INTERRUPT_UNKNOWN', 'This approval request does not exist.');
  }
  if (hasUnstorableText([input.userMessage, input.resume])) {
    return errorResponse(400, 'INVALID_REQUEST', 'The request contains NUL or broken Unicode.');
  }
  let conversation = input.conversationId
    ? await findOwnConversation(prisma, { projectId, userId: user.id, conversationId: input.conversationId })
    : null;
  if (input.conversationId && !conversation) return errorResponse(404, 'CONVERSATION_NOT_FOUND', 'Conversation not found.');
  if (input.resume && !conversation) return errorResponse(400, 'INVALID_REQUEST', 'A resume needs the conversation it answers (threadId).');
  if (!input.resume && !input.userMessage) return errorResponse(400, 'NO_USER_MESSAGE', 'Send a user message.');

  let model: ModelHandle;
  try {
    model = opts.model?.() ?? modelFor(e);
  } catch (err) {
    if (err instanceof ModelConfigError) return errorResponse(503, 'MODEL_UNAVAILABLE', err.message);
    throw err;
  }

  startStaleSweep(getPrisma, e.AGENT_RUN_STALE_SECONDS, opts.staleSweepMs);
  await recoverAfterRestart(prisma, (await getDb()).kind === 'pglite');
  if (!conversation) conversation = await createConversation(prisma, { projectId, userId: user.id, title: titleFrom(input.userMessage ?? '') });

  await configureTracing(e);
  const span = tracer().startSpan('in_app_agent.run', {
    attributes: { 'project.id': projectId, 'conversation.id': conversation.id, 'user.id': user.id, 'model.provider': model.info.provider, 'model.id': model.info.modelId },
  });
  const runTrace = new RunTrace(span);

  let run;
  const runInput = { conversationId: conversation.id, userId: user.id, modelId: model.info.modelId, traceId: traceIdOf(span) };
  try {
    run = await createRun(prisma, runInput);
  } catch (err) {
    if (!(err instanceof RunConflictError)) throw err;
    // Another run holds the conversation: if it stopped responding, close it and try once more.
    try {
      if ((await recoverStaleRuns(prisma, e.AGENT_RUN_STALE_SECONDS, conversation.id)) === 0) throw err;
      run = await createRun(prisma, runInput);
    } catch (again) {
      endSpan(span, { code: 'RUN_IN_PROGRESS', message: 'run in progress' });
      if (again instanceof RunConflictError) return errorResponse(409, 'RUN_IN_PROGRESS', again.message);
      throw again;
    }
  }
  runTrace.setRunId(run.id);

  let decisions: Decision[] = [];
  if (input.resume) {
    try {
      decisions = await consumeResume(prisma, { conversationId: conversation.id, userId: user.id, subject, entries: input.resume, resumingRunId: run.id });
    } catch (err) {
      await prisma.agentRun.delete({ where: { id: run.id } }).catch(() => undefined);
      endSpan(span, { code: err instanceof ResumeError ? err.code : 'INTERNAL_ERROR', message: (err as Error).message });
      if (err instanceof ResumeError) return errorResponse(err.status, err.code, err.message);
      throw err;
    }
  }

  const gateway = mcpGateway(resolveMcpTarget(e, opts.mcpUrl));
  const abort = new AbortController();
  // The run's signal is shared by the model call and every MCP request of the run.
  setMaxListeners(0, abort.signal);
  req.signal?.addEventListener('abort', () => abort.abort(), { once: true });
  let wire: SseWriter | undefined;

  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      wire = new SseWriter(controller);
      void execute({
        prisma,
        wire,
        trace: runTrace,
        signal: abort.signal,
        runId: run.id,
        parentRunId: decisions[0]?.runId,
        conversationId: conversation.id,
        userMessage: input.userMessage,
        decisions,
        model,
        gateway,
        projectId,
        projectName,
        user,
        role,
        pageContext: input.pageContext,
        recorderOptions: { flushIntervalMs: opts.flushIntervalMs, heartbeatMs: opts.heartbeatMs },
        requireApproval: opts.requireApproval?.length ? new Set(opts.requireApproval) : undefined,
        idleTimeoutMs: opts.modelIdleTimeoutMs ?? e.AGENT_MODEL_IDLE_TIMEOUT_SECONDS * 1000,
        keyTtlSeconds: opts.runKeyTtlSeconds ?? LIMITS.runKeyTtlSeconds,
      }).finally(() => wire?.close());
    },
    cancel() {
      wire?.markClosed();
      abort.abort();
    },
  });

  return new Response(stream, {
    status: 200,
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      'x-in-app-agent-run-id': run.id,
      'x-in-app-agent-thread-id': conversation.id,
    },
  });
}

/**
 * Writes SSE frames, coalescing the events of one event-loop turn into one chunk: fewer writes and
 * syscalls under fast models, at most one turn of added latency.
 */
class SseWriter {
  private readonly encoder = new EventEncoder();
  private readonly bytes = new TextEncoder();
  private buf = '';
  private scheduled = false;
  private closed = false;

  constructor(private readonly controller: ReadableStreamDefaultController<Uint8Array>) {}

  write(ev: AgentEvent): void {
    if (this.closed) return;
    // The per-token events (the hot path) never carry optional nulls, which is all the encoder
    // would strip: they are framed directly, byte-identical to what the encoder writes.
    this.buf +=
      ev.type === 'TEXT_MESSAGE_CONTENT' || ev.type === 'TOOL_CALL_ARGS' ? `data: ${JSON.stringify(ev)}\n\n` : this.encoder.encodeSSE(ev as never);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed || !this.buf) return;
    try {
      this.controller.enqueue(this.bytes.encode(this.buf));
    } catch {
      this.closed = true;
    }
    this.buf = '';
  }

  markClosed(): void {
    this.closed = true;
  }

  close(): void {
    this.flush();
    if (this.closed) return;
    this.closed = true;
    try {
      this.controller.close();
    } catch {
      /* already closed */
    }
  }
}

interface ExecuteInput {
  prisma: PrismaClient;
  wire: SseWriter;
  trace: RunTrace;
  signal: AbortSignal;
  runId: string;
  /** The interrupted run a resume continues. */
  parentRunId?: string;
  conversationId: string;
  userMessage: string | null;
  decisions: Decision[];
  model: ModelHandle;
  gateway: McpGateway;
  projectId: string;
  projectName: string;
  user: SessionUser;
  role: Role;
  pageContext: SanitizedRequest['pageContext'];
  recorderOptions: { flushIntervalMs?: number; heartbeatMs?: number };
  requireApproval?: ReadonlySet<string>;
  idleTimeoutMs?: number;
  keyTtlSeconds: number;
}

function modelEvent(info: ModelInfo): AgentEvent {
  return { type: 'CUSTOM', name: CUSTOM_EVENTS.model, value: info };
}

/** Runs to exactly one terminal event; never throws. */
async function execute(x: ExecuteInput): Promise<void> {
  const e = env();
  let end: RunEnd = { status: 'FAILED', code: 'INTERNAL_ERROR', message: 'The run ended unexpectedly.' };
  let result: RunResult | undefined;
  let recorder: RunRecorder | undefined;
  let keyId: string | undefined;
  let listing: Promise<ListedTools> | undefined;
  // RUN_STARTED goes out at once; the rest of the set-up happens behind it.
  const started: AgentEvent = { type: 'RUN_STARTED', threadId: x.conversationId, runId: x.runId, ...(x.parentRunId ? { parentRunId: x.parentRunId } : {}) };
  x.wire.write(started);
  let history: ConversationView = { threadId: x.conversationId, messages: [], runs: [], decisions: {}, navigations: [] };
  // `history` is the replayed conversation plus this run's events up to the agent's start; the
  // agent reads it once, after which nothing needs it, so events stop being folded into it.
  let folding = true;
  const pending: AgentEvent[] = [started];
  const send = (ev: AgentEvent) => {
    if (!recorder) {
      pending.push(ev);
    } else {
      if (folding) foldEvent(history, ev);
      recorder.record(ev);
    }
    x.wire.write(ev);
  };
  try {
    const key = await mintAgentKey(x.prisma, { projectId: x.projectId, userId: x.user.id, runId: x.runId, ttlSeconds: x.keyTtlSeconds });
    keyId = key.key.id;
    const secret = key.secret;
    // Listing the MCP tools (once per scope set and process) overlaps the rest of the set-up.
    listing = listRunTools({ gateway: x.gateway, secret }, { role: x.role, isAdmin: x.user.isAdmin }, x.signal);
    listing.catch(() => undefined); // awaited (and reported) by the agent
    const replayed = await replayWithSeq(x.prisma, x.conversationId);
    history = replayed.view;
    recorder = new RunRecorder(x.prisma, x.conversationId, x.runId, replayed.lastSeq, x.recorderOptions);
    recorder.keepKeyAlive(key.key.id, x.keyTtlSeconds);
    recorder.start();
    for (const ev of pending) {
      foldEvent(history, ev);
      recorder.record(ev);
    }
    send(modelEvent(x.model.info));

    if (x.decisions.length) {
      for (const d of x.decisions) {
        send({
          type: 'CUSTOM',
          name: CUSTOM_EVENTS.approvalDecided,
          value: {
            toolCallId: d.toolCallId,
            decision: d.approved ? 'approved' : 'rejected',
            ...(d.edited ? { edited: true } : {}),
            ...(d.approved ? { args: d.args } : {}),
            ...(d.feedback ? { feedback: d.feedback } : {}),
          },
        });
        let content: unknown;
        if (d.approved) {
          const endTool = x.trace.tool(d.toolName, d.toolCallId, { 'tool.approved': true });
          const res =
            d.local && isLocalTool(d.toolName)
              ? await runLocalTool(d.toolName, d.args, { prisma: x.prisma, projectId: x.projectId, emit: send })
              : await executeApproved({ gateway: x.gateway, secret, keyId: key.key.id, decision: d, signal: x.signal });
          await markConsumed(x.prisma, d.approvalId);
          content = d.edited && res && typeof res === 'object' ? { ...(res as object), executedWithEditedArgs: d.args } : res;
          endTool((res as { isError?: boolean })?.isError ? 'tool error' : undefined);
        } else {
          content = { rejected: true, message: 'The user rejected this call; it was not executed.', ...(d.feedback ? { feedback: d.feedback } : {}) };
        }
        send({ type: 'TOOL_CALL_RESULT', messageId: newId('msg_'), toolCallId: d.toolCallId, content: capResult(content), role: 'tool' });
      }
    } else {
      for (const a of await closeAbandoned(x.prisma, x.conversationId, history)) {
        if (a.decided) send({ type: 'CUSTOM', name: CUSTOM_EVENTS.approvalDecided, value: a.decided });
        send({ type: 'TOOL_CALL_RESULT', messageId: newId('msg_'), toolCallId: a.toolCallId, content: capResult(a.result), role: 'tool' });
      }
      const messageId = newId('msg_');
      send({ type: 'TEXT_MESSAGE_START', messageId, role: 'user' });
      send({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: x.userMessage ?? '' });
      send({ type: 'TEXT_MESSAGE_END', messageId });
    }

    folding = false;
    result = await runAgent({
      prisma: x.prisma,
      projectId: x.projectId,
      projectName: x.projectName,
      user: { id: x.user.id, name: x.user.name },
      role: x.role,
      isAdmin: x.user.isAdmin,
      history,
      pageContext: x.pageContext,
      model: x.model,
      mcp: { gateway: x.gateway, secret },
      listing,
      signal: x.signal,
      emit: send,
      maxSteps: e.AGENT_MAX_STEPS,
      maxRetries: e.AGENT_MODEL_MAX_RETRIES,
      contextTokens: e.AGENT_CONTEXT_TOKENS,
      trace: x.trace,
      requireApproval: x.requireApproval,
      idleTimeoutMs: x.idleTimeoutMs,
    });

    const usage = [{ provider: x.model.info.provider, model: x.model.info.modelId, inputTokens: result.usage.inputTokens, outputTokens: result.usage.outputTokens }];
    switch (result.kind) {
      case 'success':
        send({ type: 'RUN_FINISHED', threadId: x.conversationId, runId: x.runId, outcome: { type: 'success' }, usage });
        end = { status: 'COMPLETED', outcome: { type: 'success' } };
        break;
      case 'interrupt': {
        const interrupts = await persistPending(x.prisma, {
          runId: x.runId,
          conversationId: x.conversationId,
          userId: x.user.id,
          pending: result.pending,
          ttlSeconds: e.AGENT_APPROVAL_TTL_SECONDS,
        });
        const outcome = { type: 'interrupt' as const, interrupts };
        send({ type: 'RUN_FINISHED', threadId: x.conversationId, runId: x.runId, outcome, usage });
        end = { status: 'INTERRUPTED', outcome };
        break;
      }
      case 'cancelled':
        send({ type: 'RUN_FINISHED', threadId: x.conversationId, runId: x.runId, outcome: { type: 'cancelled' } });
        end = { status: 'ABORTED' };
        break;
      case 'error':
        send({ type: 'RUN_ERROR', code: result.code, message: result.message });
        end = { status: 'FAILED', code: result.code, message: result.message };
        break;
    }
  } catch (err) {
    console.error('[in-app-agent] run failed', err);
    if (x.signal.aborted) {
      send({ type: 'RUN_FINISHED', threadId: x.conversationId, runId: x.runId, outcome: { type: 'cancelled' } });
      end = { status: 'ABORTED' };
    } else {
      send({ type: 'RUN_ERROR', code: 'INTERNAL_ERROR', message: 'Something went wrong. Please try again.' });
      end = { status: 'FAILED', code: 'INTERNAL_ERROR', message: (err as Error).message };
    }
  } finally {
    try {
      if (!recorder) {
        // Set-up failed before events could be recorded: record what was sent, then close.
        recorder = await RunRecorder.open(x.prisma, x.conversationId, x.runId, x.recorderOptions);
        for (const ev of pending) recorder.record(ev);
      }
      await recorder.finish(end, result?.usage);
    } catch (err) {
      console.error('[in-app-agent] could not close the run', err);
    }
    if (keyId) await revokeKey(x.prisma, keyId).catch((err: unknown) => console.error('[in-app-agent] could not revoke the run key', err));
    x.trace.span.setAttributes({ 'run.status': end.status, 'gen_ai.usage.input_tokens': result?.usage.inputTokens ?? 0, 'gen_ai.usage.output_tokens': result?.usage.outputTokens ?? 0 });
    endSpan(x.trace.span, end.status === 'FAILED' ? { code: end.code, message: end.message } : undefined);
  }
}
