/**
 * The authority boundary of the in-app agent: three routes, each deciding who may do what before
 * anything happens, then handing over to the run (run.ts) or its watchers (live.ts, fan-out.ts).
 *
 * - `POST /api/projects/:projectId/in-app-agent` starts a run (a user message, or AG-UI `resume`
 *   answers to pending approvals) and streams it as SSE. The run does not depend on this
 *   connection: closing it only stops watching.
 * - `GET .../in-app-agent/runs/:runId/events` follows a run from a position (`Last-Event-ID`
 *   header or `?after=`): exactly the events after it, then the live ones, then the terminal
 *   event; from a run that already ended, the rest from storage. Without a position: a snapshot
 *   of the conversation so far, then the run from its start.
 * - `POST .../in-app-agent/runs/:runId/cancel` stops a run, on whichever instance runs it.
 *
 * Identity comes from the session cookie, the role from the membership (404 for a project the
 * user is not in), run ids and history from the server; the body is validated with zod and
 * reduced to what a client may decide (`sanitize`).
 */
import 'server-only';
// The host, through the module's seam (host.ts): identity, access, database, settings and, for
// operations, the structured log, database-outage and draining refusals.
import {
  bindLogContext,
  DATABASE_RETRY_AFTER_SECONDS,
  describeError,
  DRAINING_RETRY_AFTER_SECONDS,
  env,
  getPrisma,
  type Env,
  getSessionUserId,
  hasProjectAccess,
  hasUnstorableText,
  isDraining,
  isIdentifier,
  isInfrastructureError,
  isSameOrigin,
  loadProjectMember,
  log,
  logRefusal,
  newId,
  noteDatabaseState,
  type PrismaClient,
  type ProjectMember,
  readBodyCapped,
  requestLog,
  requestLogContext,
  type Scope,
  stackFrames,
} from '../host';
import { eventsAfter } from '../compact';
import { CUSTOM_EVENTS, LIMITS } from '../constants';
import { AGENT_ERRORS, AgentRefusal, type RefusalCode } from '../error-codes';
import { attachmentIdOf } from '../attachments';
import {
  AgentRequestSchema,
  attachmentsOf,
  type MessagePart,
  MessagePartSchema,
  PageContextSchema,
  textOfParts,
  THREAD_ID_PATTERN,
  type AgentEvent,
  type AgentRequest,
  type ConversationView,
  type SanitizedRequest,
} from '../schema';
import { fanOut, type RemoteWatch } from './fan-out';
import { frameOf, liveRun, sseStream, type Watcher } from './live';
import { mcpGateway } from './mcp-gateway';
import { type AttachmentLimits, messageAttachmentParts } from './attachments';
import { modelAccepts, modelFor, ModelConfigError, type ModelHandle } from './model';
import { findRun, loadRunRows, replayConversation, requestCancel, titleFrom } from './persistence';
import { maskText } from './redaction';
import { startRun, stopRun, type RunTimings } from './run';
import { resolveMcpTarget, type RunOptions, runSettingsFrom, setRunOptions } from './run-deps';

export interface HandlerOptions extends RunOptions {
  /** How often a watcher of a run on another instance checks the run in the database (default 1 s). */
  watchPollMs?: number;
  /** Set-up timings of each run (the benchmark). */
  onRunTimings?: (t: RunTimings) => void;
}

export { resolveMcpTarget } from './run-deps';

type RouteContext = { params: Promise<Record<string, string | string[] | undefined>> };
export type Route = (req: Request, ctx: RouteContext) => Promise<Response>;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };
const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

function errorResponse(code: RefusalCode, message: string, retryAfterSeconds?: number): Response {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status: AGENT_ERRORS[code].status,
    headers: {
      ...JSON_HEADERS,
      ...(retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }),
    },
  });
}

/**
 * A user message's AG-UI content: a string is its text; an array keeps its text parts (joined a line
 * apart, trimmed, capped at LIMITS.maxUserMessageChars), its `reference` parts (an issue or member
 * picked in the composer, each validated, at most LIMITS.maxReferenceParts; checked against the
 * project when the run opens, `references.ts`) and the uploads its image and document parts name
 * (`attachments.ts`: ids only, each once; what they are is read from their rows), and drops every
 * other part. `parts` is null when there is neither text nor an attachment.
 */
function partsOfContent(content: unknown): { parts: MessagePart[] | null; attachmentIds: string[] } {
  const given = typeof content === 'string' ? [{ type: 'text', text: content }] : Array.isArray(content) ? content : [];
  const texts: string[] = [];
  const refs: MessagePart[] = [];
  const attachmentIds: string[] = [];
  for (const raw of given) {
    const id = attachmentIdOf(raw);
    if (id !== null) {
      if (!attachmentIds.includes(id)) attachmentIds.push(id);
      continue;
    }
    const part = ClientPartSchema.safeParse(raw);
    if (!part.success) continue;
    if (part.data.type === 'text') texts.push(part.data.text);
    else if (refs.length < LIMITS.maxReferenceParts) refs.push(part.data);
  }
  const text = texts.join('\n').trim().slice(0, LIMITS.maxUserMessageChars);
  const parts: MessagePart[] = text ? [{ type: 'text', text }, ...refs] : [];
  return { parts: parts.length || attachmentIds.length ? parts : null, attachmentIds };
}

/** The parts a request may carry as they are: text and references (attachments are read from their rows). */
const ClientPartSchema = MessagePartSchema.refine((p) => p.type === 'text' || p.type === 'reference');

/**
 * Keeps only what the client may decide: the new user message (the newest message, when it is the
 * user's), the conversation id, the page context (as untrusted data) and resume answers. Client
 * history, system/assistant/tool messages, client tools, state and run ids are dropped.
 */
export function sanitize(body: AgentRequest): SanitizedRequest {
  const newest = body.messages.at(-1);
  const message = newest?.role === 'user' ? partsOfContent(newest.content) : { parts: null, attachmentIds: [] };
  const page = PageContextSchema.safeParse(body.forwardedProps?.pageContext ?? {});
  const threadId = body.threadId?.trim();
  return {
    conversationId: threadId && threadId !== 'new' ? threadId : null,
    userMessage: message.parts,
    pageContext: page.success ? page.data : {},
    resume: body.resume?.length ? body.resume : null,
    version: body.forwardedProps?.version ?? null,
    attachmentIds: message.attachmentIds,
  };
}

/** The attachment limits of the settings. */
function attachmentLimits(settings: Env): AttachmentLimits {
  return {
    perMessage: settings.AGENT_ATTACHMENTS_PER_MESSAGE,
    perConversation: settings.AGENT_ATTACHMENT_BYTES_PER_CONVERSATION,
  };
}

/** The limits-store key of a user's assistant runs (AGENT_RATE_LIMIT_PER_MINUTE). */
export const runLimitKey = (userId: string) => `agent:run:${userId}`;
const RUN_LIMIT_WINDOW_SECONDS = 60;

const param = (v: string | string[] | undefined): string => (typeof v === 'string' ? v : '');

/** The signed-in user's id, or the refusal (a project id that cannot be an id names no project). */
async function signedIn(req: Request, projectId: string): Promise<string> {
  const userId = await getSessionUserId(req);
  if (!userId) throw new AgentRefusal('UNAUTHENTICATED', 'Sign in to use the assistant.');
  // A project id that cannot be an id (NUL, too long) names no project: never sent to the database.
  if (!isIdentifier(projectId)) throw new AgentRefusal('PROJECT_NOT_FOUND', 'Project not found.');
  bindLogContext(req, { projectId, userId }); // ops: the request's log lines name the project and user
  return userId;
}

/** The signed-in member of the project holding `scope`, or the refusal. */
export async function authorize(
  req: Request,
  projectId: string,
  scope: Scope,
): Promise<{ prisma: PrismaClient; member: ProjectMember }> {
  const userId = await signedIn(req, projectId);
  const prisma = await getPrisma();
  const member = await loadProjectMember(prisma, projectId, userId);
  if (!member) throw new AgentRefusal('PROJECT_NOT_FOUND', 'Project not found.');
  if (!hasProjectAccess({ role: member.role, isAdmin: member.user.isAdmin }, scope)) {
    throw new AgentRefusal('FORBIDDEN', 'Your role cannot use the assistant here.');
  }
  return { prisma, member };
}

/** A route answering every refusal with its code and status, an outage with 503, anything else with 500. */
export function guarded(route: Route): Route {
  return async (req, ctx) => {
    try {
      return await route(req, ctx);
    } catch (err) {
      if (err instanceof AgentRefusal) {
        logRefusal(req, err.status, err.code);
        return errorResponse(err.code, err.message, err.retryAfterSeconds);
      }
      // ops: the database is unreachable: 503 with Retry-After (retry shortly), never 500.
      if (isInfrastructureError(err)) {
        noteDatabaseState(false, err);
        logRefusal(req, 503, 'DATABASE_UNAVAILABLE', { error: describeError(err) });
        return errorResponse(
          'DATABASE_UNAVAILABLE',
          'The database is unavailable. Try again shortly.',
          DATABASE_RETRY_AFTER_SECONDS,
        );
      }
      const failure = { code: 'INTERNAL_ERROR', error: describeError(err), frames: stackFrames(err) };
      requestLog(req).error({ event: 'request.failed', ...failure }, 'request failed');
      return errorResponse('INTERNAL_ERROR', 'Something went wrong. Please try again.');
    }
  };
}

export interface AgentRoutes {
  /** POST: start a run (a user message, or resume answers). */
  start: Route;
  /** GET: follow a run from a position, or from a snapshot. */
  events: Route;
  /** POST: stop a run. */
  cancel: Route;
}

export function createAgentRoutes(opts: HandlerOptions = {}): AgentRoutes {
  // Runs this process takes over from a stopped instance are made with the same options.
  setRunOptions(opts);

  const start: Route = async (req, ctx) => {
    const receivedAt = performance.now();
    // ops: a draining instance (shutting down) starts no new run; the client retries elsewhere.
    if (isDraining()) {
      throw new AgentRefusal('DRAINING', 'This server is restarting. Try again in a moment.', {
        retryAfterSeconds: DRAINING_RETRY_AFTER_SECONDS,
      });
    }
    const settings = env();
    const projectId = param((await ctx.params).projectId);
    // Who asks is read by the statement that opens the run (membership and role, see startRun): no
    // statement before it.
    const userId = await signedIn(req, projectId);
    if (!isSameOrigin(req)) throw new AgentRefusal('CROSS_ORIGIN', 'Cross-origin request refused.');
    if (!(req.headers.get('content-type') ?? '').toLowerCase().includes('application/json')) {
      throw new AgentRefusal('UNSUPPORTED_MEDIA_TYPE', 'Send the request as application/json.');
    }
    const read = await readBodyCapped(req, LIMITS.maxBodyBytes);
    if (!read.ok && read.reason === 'too_large')
      throw new AgentRefusal('PAYLOAD_TOO_LARGE', 'The request is too large.');
    if (!read.ok) throw new AgentRefusal('INVALID_REQUEST', 'The request body could not be read.');
    let json: unknown;
    try {
      json = JSON.parse(read.text);
    } catch {
      throw new AgentRefusal('INVALID_REQUEST', 'The request body is not valid JSON.');
    }
    const parsed = AgentRequestSchema.safeParse(json);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new AgentRefusal(
        'INVALID_REQUEST',
        `Invalid request${first ? ` at ${first.path.join('.') || '(body)'}: ${first.message}` : ''}.`,
      );
    }
    const input = sanitize(parsed.data);
    if (input.conversationId !== null && !THREAD_ID_PATTERN.test(input.conversationId)) {
      throw new AgentRefusal(
        'INVALID_REQUEST',
        'threadId must be 8 to 100 letters, digits, "-" or "_" (a UUID works), or "new".',
      );
    }
    if (input.resume && !input.conversationId)
      throw new AgentRefusal('INVALID_REQUEST', 'A resume needs the conversation it answers (threadId).');
    if (input.resume && input.userMessage) {
      throw new AgentRefusal('RESUME_WITH_MESSAGE', 'Answer the pending approvals first, then send your message.');
    }
    if (input.version && (input.resume || !input.conversationId)) {
      throw new AgentRefusal(
        'INVALID_REQUEST',
        'A new version needs its conversation (threadId) and cannot answer approvals.',
      );
    }
    if (!input.resume && !input.userMessage && !input.version)
      throw new AgentRefusal('NO_USER_MESSAGE', 'Send a user message.');
    // Request parts that cannot be ids, and text the database cannot store, never reach it.
    if (input.resume?.some((r) => !isIdentifier(r.interruptId))) {
      throw new AgentRefusal('INTERRUPT_UNKNOWN', 'This approval request does not exist.');
    }
    if (hasUnstorableText([input.userMessage, input.resume])) {
      throw new AgentRefusal('INVALID_REQUEST', 'The request contains NUL or broken Unicode.');
    }
    if (input.attachmentIds.some((id) => !isIdentifier(id))) throw new AgentRefusal('ATTACHMENT_NOT_FOUND');

    let model: ModelHandle;
    try {
      model = opts.model?.() ?? modelFor(settings);
    } catch (err) {
      if (err instanceof ModelConfigError) throw new AgentRefusal('MODEL_UNAVAILABLE', err.message);
      throw err;
    }

    // A new version reads the turn it replaces before the run opens: only for a member.
    const prisma = input.version ? (await authorize(req, projectId, 'agent:use')).prisma : await getPrisma();
    const conversationId = input.conversationId ?? newId('cv_');
    // Attachments: read from their uploads' rows and checked (owner, limits, what the model reads)
    // before the run opens; the run binds them to the conversation once it has opened.
    if (input.attachmentIds.length && input.userMessage) {
      const attached = await messageAttachmentParts(prisma, {
        ids: input.attachmentIds,
        projectId,
        userId,
        conversationId: input.conversationId,
        accepts: model.accepts ?? modelAccepts(settings, model.info.provider),
        limits: attachmentLimits(settings),
      });
      input.userMessage = [...attached, ...input.userMessage];
    }
    const run = await startRun({
      prisma,
      projectId,
      userId,
      memberScope: 'agent:use',
      conversation: {
        id: conversationId,
        // Stored text: secrets masked (contacts too, when the project asks, once the run has opened).
        ...(input.userMessage
          ? {
              create: {
                title: titleFrom(
                  maskText(textOfParts(input.userMessage)) || (attachmentsOf(input.userMessage)[0]?.name ?? ''),
                ),
              },
            }
          : {}),
      },
      ...(input.version ? { version: input.version } : {}),
      userMessage: input.userMessage,
      ...(input.attachmentIds.length ? { attachmentIds: input.attachmentIds } : {}),
      resume: input.resume,
      pageContext: input.pageContext,
      model,
      gateway: mcpGateway(resolveMcpTarget(settings, opts.mcpUrl)),
      settings: runSettingsFrom(settings, opts),
      // Runs per user and minute, in the limits store shared by every instance: counted by the
      // statement that opens the run, so a run refused for any reason counts nothing.
      perMinute: {
        key: runLimitKey(userId),
        windowSeconds: RUN_LIMIT_WINDOW_SECONDS,
        limit: settings.AGENT_RATE_LIMIT_PER_MINUTE,
      },
      receivedAt,
      logContext: requestLogContext(req),
      onTimings: opts.onRunTimings,
    });
    let detach: () => void = () => undefined;
    const body = sseStream(
      (w) => (detach = run.attach(0, w)),
      () => detach(),
    );
    return new Response(body, {
      status: 200,
      headers: {
        ...SSE_HEADERS,
        'x-in-app-agent-run-id': run.runId,
        'x-in-app-agent-thread-id': run.info.conversationId,
      },
    });
  };

  /** The run, if the caller may see it: its conversation's owner, or a reviewer of the project. */
  async function visibleRun(req: Request, ctx: RouteContext, scope: 'watch' | 'stop') {
    const params = await ctx.params;
    const projectId = param(params.projectId);
    const runId = param(params.runId);
    const { prisma, member } = await authorize(req, projectId, 'agent:use');
    const run = /^run_[a-z0-9]{24}$/.test(runId) ? await findRun(prisma, runId) : null;
    const owner = run?.conversation.userId === member.user.id && run.conversation.deletedAt === null;
    const reviewer =
      scope === 'watch' && hasProjectAccess({ role: member.role, isAdmin: member.user.isAdmin }, 'agent:review');
    if (!run || run.conversation.projectId !== projectId || !(owner || reviewer)) {
      throw new AgentRefusal('RUN_NOT_FOUND', 'Run not found.');
    }
    return { prisma, run };
  }

  const events: Route = async (req, ctx) => {
    const { prisma, run } = await visibleRun(req, ctx, 'watch');
    const url = new URL(req.url);
    const raw = url.searchParams.get('after') ?? req.headers.get('last-event-id');
    let after: number | null = null;
    if (raw !== null && raw.trim() !== '') {
      if (!/^\d{1,15}$/.test(raw.trim()))
        throw new AgentRefusal('INVALID_REQUEST', 'The position (Last-Event-ID or after) must be a whole number.');
      after = Number(raw.trim());
    }
    const follower = new Follower(prisma, run.id, run.conversationId, opts.watchPollMs ?? 1_000);
    const body = sseStream(
      (w) => void follower.start(w, after),
      () => follower.stop(),
    );
    return new Response(body, {
      status: 200,
      headers: { ...SSE_HEADERS, 'x-in-app-agent-run-id': run.id, 'x-in-app-agent-thread-id': run.conversationId },
    });
  };

  const cancel: Route = async (req, ctx) => {
    if (!isSameOrigin(req)) throw new AgentRefusal('CROSS_ORIGIN', 'Cross-origin request refused.');
    const { prisma, run } = await visibleRun(req, ctx, 'stop');
    const local = liveRun(run.id);
    if (local) {
      stopRun(local);
      return new Response(JSON.stringify({ runId: run.id, status: 'stopping' }), {
        status: 202,
        headers: JSON_HEADERS,
      });
    }
    // Recorded on the run first: whoever runs it next ends it as cancelled (its own instance at its
    // next heartbeat, or an instance that takes it over because its own stopped: takeover.ts); then
    // its instance, when alive, is told at once.
    if (run.status === 'RUNNING' && (await requestCancel(prisma, run.id))) {
      await fanOut(env().DATABASE_URL)
        .cancel(run.id)
        .catch(() => false);
      return new Response(JSON.stringify({ runId: run.id, status: 'stopping' }), {
        status: 202,
        headers: JSON_HEADERS,
      });
    }
    return new Response(JSON.stringify({ runId: run.id, status: 'ended' }), { status: 200, headers: JSON_HEADERS });
  };

  return { start: guarded(start), events: guarded(events), cancel: guarded(cancel) };
}

/** The POST route of `/api/projects/:projectId/in-app-agent` (start a run). */
export function createAgentHandler(opts: HandlerOptions = {}): Route {
  return createAgentRoutes(opts).start;
}

/** The AG-UI messages of a view, for a MESSAGES_SNAPSHOT that stock AG-UI clients understand. */
function agUiMessages(view: ConversationView): unknown[] {
  return view.messages.map((m) =>
    m.role === 'user'
      ? { id: m.id, role: 'user', content: m.content }
      : m.role === 'tool'
        ? { id: m.id, role: 'tool', toolCallId: m.toolCallId, content: m.content }
        : {
            id: m.id,
            role: 'assistant',
            ...(m.content ? { content: m.content } : {}),
            ...(m.toolCalls.length
              ? {
                  toolCalls: m.toolCalls.map((t) => ({
                    id: t.id,
                    type: 'function',
                    function: { name: t.name, arguments: t.args },
                  })),
                }
              : {}),
          },
  );
}

const positionOf = (frame: string): number | null => {
  const m = /^id: (\d+)\n/.exec(frame);
  return m ? Number(m[1]) : null;
};

/** A terminal event's frame (quotes inside JSON strings are escaped, so text cannot look like one). */
const isTerminalFrame = (frame: string) => /^(?:id: \d+\n)?data: \{"type":"RUN_(?:FINISHED|ERROR)"/.test(frame);

/**
 * Follows one run for one watcher, from wherever it lives: this process's registry, another
 * instance (fan-out), or storage once it ended. When the run's instance stops, another instance
 * takes the run over (takeover.ts): the watcher is told the answer is resuming, then follows the
 * run on its new owner, from where it was (its positions go on increasing). A run that ends
 * without a terminal event here went on elsewhere: the watcher follows it there.
 */
class Follower {
  private watcher: Watcher | undefined;
  private position = 0;
  private stopped = false;
  private detach: () => void = () => undefined;
  private remote: RemoteWatch | undefined;
  private poll: NodeJS.Timeout | undefined;
  private done = false;
  private sawTerminal = false;
  /** The run's generation when this watcher last found its owner. */
  private generation = 0;
  /** The generation the watcher was told is resuming (once per takeover). */
  private resumingSaid = 0;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly runId: string,
    private readonly conversationId: string,
    private readonly pollMs: number,
  ) {}

  private send(frame: string): void {
    if (this.done) return;
    const pos = positionOf(frame);
    if (pos !== null) {
      if (pos <= this.position) return; // never twice
      this.position = pos;
    }
    if (isTerminalFrame(frame)) this.sawTerminal = true;
    this.watcher?.send(frame);
  }

  private finish(): void {
    if (this.done) return;
    this.done = true;
    this.cleanup();
    this.watcher?.end();
  }

  /** The run's stream ended here: after its terminal event, so does the watcher's; otherwise it went on elsewhere. */
  private ended(): void {
    if (this.done) return;
    if (this.sawTerminal || isDraining()) {
      this.finish();
      return;
    }
    this.cleanup();
    void this.follow().catch((err: unknown) => this.failed(err));
  }

  private cleanup(): void {
    this.detach();
    this.detach = () => undefined;
    this.remote?.close();
    this.remote = undefined;
    if (this.poll) clearTimeout(this.poll);
    this.poll = undefined;
  }

  stop(): void {
    this.stopped = true;
    this.done = true;
    this.cleanup();
  }

  async start(watcher: Watcher, after: number | null): Promise<void> {
    this.watcher = watcher;
    try {
      if (after === null) {
        // A snapshot of the conversation before this run, then the run from its start.
        const before = await replayConversation(this.prisma, this.conversationId, { excludeRunId: this.runId });
        this.snapshot(before);
        after = 0;
      }
      this.position = after;
      await this.follow();
    } catch (err) {
      this.failed(err);
    }
  }

  private failed(err: unknown): void {
    log().error(
      { event: 'follow.failed', runId: this.runId, error: describeError(err), frames: stackFrames(err) },
      'following a run failed',
    );
    this.send(
      frameOf({
        type: 'RUN_ERROR',
        code: 'INTERNAL_ERROR',
        message: 'Following the answer failed. Reload to see it.',
      }),
    );
    this.finish();
  }

  private snapshot(view: ConversationView): void {
    this.watcher?.send(frameOf({ type: 'MESSAGES_SNAPSHOT', messages: agUiMessages(view) }));
    this.watcher?.send(frameOf({ type: 'CUSTOM', name: CUSTOM_EVENTS.snapshot, value: { view } }));
  }

  /** Its instance stopped and another one is about to take it over: said once per takeover, never stored. */
  private resuming(generation: number): void {
    if (this.resumingSaid >= generation) return;
    this.resumingSaid = generation;
    this.send(frameOf({ type: 'CUSTOM', name: CUSTOM_EVENTS.resuming, value: {} }));
  }

  /**
   * The run's owner was found in `generation`. A later generation than the one this watcher last
   * found means a takeover it lived through: said before the new owner's events, also when the new
   * owner claimed the run before any look of this watcher saw its lease expired.
   */
  private found(generation: number): void {
    if (this.generation && generation > this.generation) this.resuming(generation);
    this.generation = generation;
  }

  /** Local, else remote, else storage. */
  private async follow(): Promise<void> {
    if (this.stopped || this.done) return;
    const local = liveRun(this.runId);
    if (local) {
      this.found(local.generation);
      this.detach = local.attach(this.position, { send: (f) => this.send(f), end: () => this.ended() });
      return;
    }
    const row = await findRun(this.prisma, this.runId);
    if (row) this.found(row.generation);
    if (row?.status !== 'RUNNING') return this.fromStorage();
    const fan = fanOut(env().DATABASE_URL);
    if (fan.kind !== 'none') {
      this.remote = await fan.watch(this.runId, this.position, {
        frame: (f) => this.send(f),
        end: () => this.ended(),
      });
      if (this.stopped) return this.remote.close();
      if (this.remote.acked) return this.watchRemote();
    }
    this.waitForEnd();
  }

  /** What the database says of a run nobody streams to this watcher right now. */
  private async check(): Promise<'ended' | 'moved' | 'same'> {
    const row = await findRun(this.prisma, this.runId).catch(() => undefined);
    if (!row) return 'same';
    if (row.status !== 'RUNNING') {
      this.found(row.generation);
      return 'ended';
    }
    if (row.generation !== this.generation) return 'moved';
    if (row.leaseExpiresAt && row.leaseExpiresAt.getTime() < Date.now()) this.resuming(row.generation + 1);
    return 'same';
  }

  /** While following another instance: if frames stop coming, the run may have ended, or moved. */
  private watchRemote(): void {
    let seen = this.position;
    const tick = async () => {
      if (this.done) return;
      if (this.position === seen) {
        const now = await this.check();
        if (this.done) return;
        if (now === 'ended') {
          this.cleanup();
          return this.fromStorage();
        }
        if (now === 'moved') {
          this.cleanup();
          return this.follow();
        }
      }
      seen = this.position;
      this.poll = setTimeout(() => void tick().catch((err: unknown) => this.failed(err)), this.pollMs);
    };
    this.poll = setTimeout(() => void tick().catch((err: unknown) => this.failed(err)), this.pollMs);
  }

  /**
   * RUNNING in the database, but nobody streams it here: wait until it ends or an instance runs it
   * (every third look, its owner is asked again: it may have just taken the run over).
   */
  private waitForEnd(): void {
    let looks = 0;
    const tick = async () => {
      if (this.done) return;
      if (liveRun(this.runId)) return this.follow();
      const now = await this.check();
      if (this.done) return;
      if (now === 'ended') return this.fromStorage();
      looks += 1;
      if (now === 'moved' || looks % 3 === 0) return this.follow();
      this.poll = setTimeout(() => void tick().catch((err: unknown) => this.failed(err)), this.pollMs);
    };
    this.poll = setTimeout(() => void tick().catch((err: unknown) => this.failed(err)), this.pollMs);
  }

  private async fromStorage(): Promise<void> {
    if (this.done) return;
    const rows = await loadRunRows(this.prisma, this.conversationId, this.runId);
    const rest = eventsAfter(rows, this.position, this.conversationId);
    if (rest === null) {
      // Rows without positions (written before they existed): the whole conversation instead.
      this.snapshot(await replayConversation(this.prisma, this.conversationId));
    } else {
      for (const { pos, event } of rest) this.send(frameOf(event as AgentEvent, pos));
    }
    this.finish();
  }
}
