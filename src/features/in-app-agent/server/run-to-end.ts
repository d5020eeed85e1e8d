/**
 * Steps 2-5 of a run's life, the same for a run's first generation (run.ts) and for a run another
 * instance took over (takeover.ts): prepare, stream, end with exactly one terminal event, record
 * the end. What differs between the two is how the run begins (`RunBeginning`): the first one sends
 * the user's message (or settles the answered interrupts); a takeover goes on from the run's last
 * stored step. Everything after that is here once.
 *
 * Writes are fenced by the run's generation (persistence.ts): once another instance took the run
 * over, this one writes nothing more, hands its watchers over (they follow the run where it goes
 * on) and leaves without a terminal event. The terminal event is sent to watchers only once the
 * run's end is stored, so no watcher sees an end the database does not have.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  childLog,
  describeError,
  env,
  type LogContext,
  type PrismaClient,
  type ProjectMember,
  retryWhileUnavailable,
  revokeKey,
  stackFrames,
} from '../host';
import { CUSTOM_EVENTS, LIMITS } from '../constants';
import type { AgentErrorCode } from '../error-codes';
import { foldEvents } from '../fold';
import type { AgentEvent, ConversationView, ModelInfo, PageContext, TokenUsage } from '../schema';
import { type BudgetState, budgetsAfterRun } from '../budgets';
import { listRunTools, runAgent, type ListedTools, type RunContext, type RunResult } from './agent';
import { fanOut } from './fan-out';
import { persistPending } from './human-in-the-loop';
import { endSpan, type RunTrace, traceIdOf } from './instrumentation';
import { type LiveRun, releaseRun } from './live';
import type { McpGateway } from './mcp-gateway';
import type { ModelHandle } from './model';
import { rememberReads, RunRecorder, type RunEnd } from './persistence';
import type { RunToolPolicy } from './policy';
import { type MaskOptions, maskStoredEvent } from './redaction';
import { ReferenceWatcher, RunReferences } from './references';
import type { Taint } from './tools';
import type { Usage } from './usage';

/** Settings of a run (from the environment and the handler's options). */
export interface RunSettings {
  maxSteps: number;
  maxRetries: number;
  contextTokens: number;
  staleSeconds: number;
  /** Runs of one user RUNNING at once, across instances (AGENT_MAX_CONCURRENT_RUNS_PER_USER). */
  maxConcurrentRuns: number;
  approvalTtlSeconds: number;
  keyTtlSeconds: number;
  idleTimeoutMs: number;
  /** The run's lease (AGENT_RUN_LEASE_SECONDS): renewed by its heartbeat, taken over once expired. */
  leaseSeconds?: number;
  flushIntervalMs?: number;
  heartbeatMs?: number;
  /** Tools that need approval on top of the approval map (tightens only). */
  requireApproval?: ReadonlySet<string>;
  /** The model's prices in US dollars per million tokens, when configured. */
  prices?: { input: number; output: number };
}

/** When each set-up step ended, in ms after the request arrived (steps 2 overlap each other). */
export interface RunTimings {
  /** The run row (conversation, run and its MCP key) written: the request is accepted. */
  opened: number;
  historyLoaded: number;
  toolsListed: number;
  /** The agent asks the model. */
  agentStarted: number;
}

/** What the agent goes on from, once the run's first events are out. */
export interface AgentStart {
  /** The stored conversation before this run, and what of this run is stored (a takeover). */
  history: ConversationView;
  /** What the conversation read before the history window (the data-flow guard's memory). */
  readSoFar: Taint;
  /** Model steps already stored (a takeover), and their usage. */
  stepsDone: number;
  usageBefore: Usage;
  /** Calls of the last stored step without a result: settled before the model goes on. */
  openCalls?: RunContext['openCalls'];
  /** What the cut-off model call had streamed (its usage is counted, estimated). */
  lostOutputChars?: number;
  /** The answer's last step is stored: no model call is needed, only the end. */
  complete?: boolean;
  /** Stop was pressed while no instance ran it: the run ends cancelled. */
  cancelled?: boolean;
  /** The run ends with this error before the agent (RUN_TAKEOVER_LIMIT). */
  error?: { code: AgentErrorCode; message: string };
}

/** Sends the events a run begins with (after its first one) and says what the agent goes on from. */
export type RunBeginning = (io: {
  send: (e: AgentEvent) => void;
  mcp: { gateway: McpGateway; secret: string; keyId: string };
  keyId: string;
  mark: (step: 'historyLoaded') => void;
  /** The run's reference check (the user's `reference` parts are kept only for this project's issues and members). */
  references: RunReferences;
  log: ReturnType<typeof childLog>;
}) => Promise<AgentStart>;

/** What a run goes on with (steps 2-5). */
export interface OpenedRunContext {
  run: LiveRun;
  prisma: PrismaClient;
  ids: { runId: string; conversationId: string; projectId: string; userId: string };
  /** The run's generation: its writes are fenced by it. */
  generation: number;
  /** The run's block of row positions, and where this generation's rows start in it. */
  seqs: { seqFrom: number; seqTo: number };
  /** The run's MCP key (its secret only in memory). */
  key: { id: string; secret: string };
  trace: RunTrace;
  model: ModelHandle;
  gateway: McpGateway;
  settings: RunSettings;
  pageContext: PageContext;
  /** Who asks, as the statement that opened (or took over) the run read them. */
  member: ProjectMember;
  policy: RunToolPolicy;
  /** The project's assistant instructions (empty: none). */
  instructions: string;
  /** The project's budgets as the open statement read them (null: none, or not read: a takeover). */
  budgets: BudgetState[] | null;
  /** How the run's stored rows are masked (the project's data policy). */
  mask: MaskOptions;
  /** Sent at once, before anything that waits: RUN_STARTED, or a takeover's resumed event. */
  firstEvent: AgentEvent;
  /** Recorded (not sent) before it: the RUN_STARTED of a run taken over before it was stored. */
  recordFirst?: AgentEvent;
  begin: RunBeginning;
  /** For the log line: the run answers interrupts, or was taken over. */
  logFields: Record<string, unknown>;
  /** The request that started the run (not a takeover's): the run's log lines name it too. */
  request?: LogContext;
  /** The answers this run settles, one `approval.decided` log line each. */
  decisionLog?: Array<Record<string, unknown>>;
  mark: (step: Exclude<keyof RunTimings, 'opened'>) => void;
}

/**
 * A run's usage as RUN_FINISHED carries it and the run row stores it, with its cost when priced;
 * `estimated` when part of it is (a stopped answer, or one that failed mid-answer: server/usage.ts).
 */
function usageOf(info: ModelInfo, usage: Usage, prices?: { input: number; output: number }): TokenUsage {
  const cost =
    prices && (usage.inputTokens !== undefined || usage.outputTokens !== undefined)
      ? ((usage.inputTokens ?? 0) * prices.input + (usage.outputTokens ?? 0) * prices.output) / 1_000_000
      : undefined;
  return {
    provider: info.provider,
    model: info.modelId,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    ...(cost === undefined ? {} : { costUsd: Math.round(cost * 1e8) / 1e8 }),
    ...(usage.estimated ? { estimated: true } : {}),
  };
}

/** Two usages together (earlier generations' stored steps and this one's). */
function addUsage(a: Usage, b: Usage): Usage {
  const sum = (x?: number, y?: number) => (x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0));
  const inputTokens = sum(a.inputTokens, b.inputTokens);
  const outputTokens = sum(a.outputTokens, b.outputTokens);
  return {
    ...(inputTokens === undefined ? {} : { inputTokens }),
    ...(outputTokens === undefined ? {} : { outputTokens }),
    ...(a.estimated || b.estimated ? { estimated: true as const } : {}),
  };
}

function modelEvent(info: ModelInfo): AgentEvent {
  return { type: 'CUSTOM', name: CUSTOM_EVENTS.model, value: info };
}

const isTerminal = (e: AgentEvent) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR';

/** Steps 2-5: runs to exactly one terminal event, records it and leaves the registry. Never throws. */
export async function runToEnd(ctx: OpenedRunContext): Promise<void> {
  const { run, prisma, ids, trace, settings, member, policy, mark } = ctx;
  const { runId, conversationId } = ids;
  const signal = run.controller.signal;
  const recorder = new RunRecorder(prisma, conversationId, runId, ctx.seqs, {
    flushIntervalMs: settings.flushIntervalMs,
    heartbeatMs: settings.heartbeatMs,
    leaseSeconds: settings.leaseSeconds,
    generation: ctx.generation,
    onLost: (why) => run.stop(why === 'taken' ? 'taken' : 'lost'),
    onCancelRequested: () => run.stop('user'),
    // Stored rows are masked (secrets; contacts when the project asks); the live stream and the
    // model's history of this run are not.
    storedForm: (event) => maskStoredEvent(event, ctx.mask),
  });
  // This run's events until the agent starts: the agent's history is what the beginning read
  // plus these. Nothing is collected afterwards.
  let collected: AgentEvent[] | null = [];
  let terminalSent = false;
  /** The terminal event, held until the run's end is stored. */
  let releaseTerminal: (() => void) | undefined;
  // The issues, members and links the run's messages name, checked with the run's permissions.
  const references = new RunReferences(prisma, ids.projectId, { role: member.role, isAdmin: member.user.isAdmin });
  const send = (event: AgentEvent) => {
    if (terminalSent) return;
    collected?.push(event);
    if (isTerminal(event)) {
      terminalSent = true;
      const held = run.hold(event);
      releaseTerminal = held.release;
      recorder.record(event, held.pos);
      return;
    }
    recorder.record(event, run.emit(event));
    watcher.observe(event);
  };
  const watcher = new ReferenceWatcher(references, send, { runId, conversationId });
  const finished = (outcome: Extract<AgentEvent, { type: 'RUN_FINISHED' }>['outcome'], usage?: TokenUsage) =>
    send({
      type: 'RUN_FINISHED',
      threadId: conversationId,
      runId,
      outcome,
      ...(usage ? { usage: [usage] } : {}),
    });

  let end: RunEnd = { status: 'FAILED', code: 'INTERNAL_ERROR', message: 'The run ended unexpectedly.' };
  let result: RunResult | undefined;
  /** The usage the run ends with: earlier generations' stored steps and this one's. */
  let usage: Usage | undefined;
  if (ctx.recordFirst) recorder.record(ctx.recordFirst, 1);
  send(ctx.firstEvent);
  recorder.start();
  // ops: one log line when the run starts and one when it ends, with its ids (never its content).
  const startedAt = Date.now();
  const runLog = childLog({ ...ctx.request, ...ids, traceId: traceIdOf(trace.span) });
  runLog.info(
    { event: 'run.started', ...ctx.logFields, generation: ctx.generation, model: ctx.model.info.modelId },
    'run started',
  );
  for (const d of ctx.decisionLog ?? []) runLog.info({ event: 'approval.decided', ...d }, 'approval decided');
  /** Why the run stopped without ending here: another instance goes on with it. */
  const goesOnElsewhere = () => signal.reason === 'taken' || signal.reason === 'released';
  try {
    // Two turns of the event loop first: in the first the watchers' streams flush the first event
    // (they write on `setImmediate`, queued after this), in the second pending I/O is served; only
    // then the set-up's work, which runs on this thread (the agent's construction, and every
    // query on the embedded database).
    for (let turn = 0; turn < 2; turn++) await nextTurn();
    // 2. Prepare: the key was stored with the run; its tools are listed for it (cached per grant)
    // while the beginning reads what it needs.
    recorder.keepKeyAlive(ctx.key.id, settings.keyTtlSeconds);
    const mcp = { gateway: ctx.gateway, secret: ctx.key.secret, keyId: ctx.key.id };
    const listing: Promise<ListedTools> = listRunTools(mcp, policy, signal).then((l) => {
      mark('toolsListed');
      return l;
    });
    listing.catch(() => undefined); // awaited (and reported) by the agent
    send(modelEvent(ctx.model.info));

    // 3. Stream: how the run begins, then the agent.
    const start = await ctx.begin({ send, mcp, keyId: ctx.key.id, mark, references, log: runLog });
    const history: ConversationView = foldEvents(collected, start.history);
    collected = null;
    let steps = start.stepsDone;
    let stepsUsage: Usage = start.usageBefore;
    if (start.error || start.cancelled || start.complete || goesOnElsewhere()) {
      result = start.error
        ? { kind: 'error', ...start.error, usage: {} }
        : start.cancelled || signal.aborted
          ? { kind: 'cancelled', usage: {} }
          : { kind: 'success', usage: {} };
    } else {
      result = await runAgent({
        prisma,
        projectId: ids.projectId,
        projectName: member.projectName,
        user: { id: ids.userId, name: member.user.name },
        role: member.role,
        policy,
        instructions: ctx.instructions,
        history,
        readSoFar: start.readSoFar,
        pageContext: ctx.pageContext,
        model: ctx.model,
        mcp,
        listing,
        signal,
        emit: send,
        maxSteps: Math.max(1, settings.maxSteps - start.stepsDone),
        maxRetries: settings.maxRetries,
        contextTokens: settings.contextTokens,
        trace,
        idleTimeoutMs: settings.idleTimeoutMs,
        onModelStart: () => mark('agentStarted'),
        ...(start.openCalls?.length ? { openCalls: start.openCalls } : {}),
        ...(start.lostOutputChars ? { lostOutputChars: start.lostOutputChars } : {}),
        // After each model step, before its tools: the checkpoint another instance goes on from.
        // The final step (no tool calls) has no tools to run: its rows go with the run's end, in
        // that one statement (recorder.finish), a few milliseconds later.
        onStep: async (step, caughtUp) => {
          steps += 1;
          stepsUsage = addUsage(stepsUsage, step.usage);
          if (step.final) return;
          if (!caughtUp) {
            runLog.warn({ event: 'run.checkpoint_skipped', step: steps }, 'a step was not stored as a checkpoint');
            return;
          }
          await recorder.checkpoint({ pos: run.lastPosition, steps, usage: stepsUsage, final: step.final });
        },
      });
    }
    usage = addUsage(start.usageBefore, result.usage);

    if (!goesOnElsewhere()) {
      const newlyRead = {
        privateData: Boolean(result.read?.privateData && !start.readSoFar.privateData),
        untrustedContent: Boolean(result.read?.untrustedContent && !start.readSoFar.untrustedContent),
      };
      await rememberReads(prisma, conversationId, newlyRead).catch((err: unknown) =>
        runLog.error({ event: 'run.reads_not_remembered', error: describeError(err) }, 'could not remember reads'),
      );
    }
    // 4. The terminal event, after the answer's references are checked and the budgets as they
    // stand with this run's usage (the panel warns at 80 %).
    if (!goesOnElsewhere()) await watcher.settle();
    const tokenUsage = usageOf(ctx.model.info, usage, settings.prices);
    if (ctx.budgets && !goesOnElsewhere() && signal.reason !== 'lost') {
      send({
        type: 'CUSTOM',
        name: CUSTOM_EVENTS.budget,
        value: { budgets: budgetsAfterRun(ctx.budgets, tokenUsage) },
      });
    }
    if (goesOnElsewhere()) {
      // Nothing more from here: another instance goes on with the run.
    } else if (signal.reason === 'lost') {
      end = { status: 'FAILED', code: 'RUN_STALE', message: 'The run stopped responding and was closed.' };
    } else if (result.kind === 'success') {
      finished({ type: 'success' }, tokenUsage);
      end = { status: 'COMPLETED', outcome: { type: 'success' } };
    } else if (result.kind === 'interrupt') {
      const interrupts = await persistPending(prisma, {
        runId,
        conversationId,
        userId: ids.userId,
        pending: result.pending,
        ttlSeconds: settings.approvalTtlSeconds,
        projectId: ids.projectId,
        subject: { role: member.role, isAdmin: member.user.isAdmin },
      });
      const outcome = { type: 'interrupt' as const, interrupts };
      finished(outcome, tokenUsage);
      end = { status: 'INTERRUPTED', outcome };
    } else if (result.kind === 'cancelled') {
      // What the model streamed until Stop was paid for: the usage says so (partly estimated).
      finished({ type: 'cancelled' }, tokenUsage);
      end = { status: 'ABORTED' };
    } else {
      send({ type: 'RUN_ERROR', code: result.code, message: result.message });
      end = { status: 'FAILED', code: result.code, message: result.message };
    }
  } catch (err) {
    runLog.error({ event: 'run.failed', error: describeError(err), frames: stackFrames(err) }, 'run failed'); // ops
    if (goesOnElsewhere() || signal.reason === 'lost') {
      // Handled below.
    } else if (signal.aborted) {
      finished({ type: 'cancelled' });
      end = { status: 'ABORTED' };
    } else {
      send({ type: 'RUN_ERROR', code: 'INTERNAL_ERROR', message: 'Something went wrong. Please try again.' });
      end = { status: 'FAILED', code: 'INTERNAL_ERROR', message: (err as Error).message };
    }
  } finally {
    await closeRun({ ctx, recorder, end, usage, runLog, startedAt, releaseTerminal, terminalSent });
  }
}

/**
 * 5. Records the end and revokes the key (one statement), then sends the held terminal event, ends
 * the trace and leaves the registry (watchers end once the end is stored, so a client that reads
 * the conversation next finds it whole). A run another instance goes on with records nothing and
 * hands its watchers over instead.
 */
async function closeRun(input: {
  ctx: OpenedRunContext;
  recorder: RunRecorder;
  end: RunEnd;
  usage: Usage | undefined;
  runLog: ReturnType<typeof childLog>;
  startedAt: number;
  releaseTerminal: (() => void) | undefined;
  terminalSent: boolean;
}): Promise<void> {
  const { ctx, recorder, runLog } = input;
  const { run, prisma, trace } = ctx;
  const signal = run.controller.signal;
  const end = input.end;
  let handedOver = signal.reason === 'taken' || signal.reason === 'released';
  if (signal.reason === 'released') {
    // The drain's end: the lease is let go at once, so another instance takes the run over now.
    const released = await recorder.release().catch((err: unknown) => {
      runLog.error({ event: 'run.release_failed', error: describeError(err) }, 'could not release the run');
      return false;
    });
    if (released)
      await fanOut(env().DATABASE_URL)
        .released()
        .catch(() => undefined);
  } else if (!handedOver) {
    if (signal.reason === 'lost' && !input.terminalSent) {
      // Closed elsewhere: the stored end is the sweep's RUN_STALE; watchers get the same.
      run.emit({ type: 'RUN_ERROR', code: 'RUN_STALE', message: 'The run stopped responding and was closed.' });
    }
    let stored = false;
    try {
      stored = await recorder.finish(
        end,
        input.usage ? usageOf(ctx.model.info, input.usage, ctx.settings.prices) : undefined,
      );
    } catch (err) {
      // The end could not be stored: the run stays RUNNING, its lease runs out and another
      // instance ends it; the watchers follow it there.
      runLog.error({ event: 'run.record_failed', error: describeError(err) }, 'could not record the run end'); // ops
      handedOver = true;
    }
    if (stored) input.releaseTerminal?.();
    else if (recorder.isTaken) handedOver = true;
    if (!stored && !handedOver) {
      // ops: retried while the database is briefly unavailable, so the key is revoked once it is back.
      const revoke = (id: string) =>
        retryWhileUnavailable(() => revokeKey(prisma, id), {
          budgetMs: LIMITS.writeRetryBudgetMs,
          onRetry: (err, attempt) =>
            runLog.warn(
              { event: 'run.key_revoke_retried', attempt, error: describeError(err) },
              'revoking the run key is retried: the database is unavailable',
            ),
        });
      await revoke(ctx.key.id).catch((err: unknown) =>
        runLog.error({ event: 'run.key_revoke_failed', error: describeError(err) }, 'could not revoke the run key'),
      );
    }
  }
  // ops: the run's end, as recorded (or that another instance goes on with it).
  runLog.info(
    handedOver
      ? {
          event: 'run.handed_over',
          reason: String(signal.reason ?? 'failed'),
          durationMs: Date.now() - input.startedAt,
        }
      : {
          event: 'run.finished',
          status: end.status,
          ...(end.status === 'FAILED' ? { code: end.code } : {}),
          ...(end.status === 'ABORTED' ? { reason: String(signal.reason ?? 'user') } : {}),
          durationMs: Date.now() - input.startedAt,
          inputTokens: input.usage?.inputTokens ?? null,
          outputTokens: input.usage?.outputTokens ?? null,
          ...(input.usage?.estimated ? { usageEstimated: true } : {}),
        },
    handedOver ? 'run handed over' : `run ${end.status.toLowerCase()}`,
  );
  trace.span.setAttributes({
    'run.status': handedOver ? 'HANDED_OVER' : end.status,
    'gen_ai.usage.input_tokens': input.usage?.inputTokens ?? 0,
    'gen_ai.usage.output_tokens': input.usage?.outputTokens ?? 0,
  });
  endSpan(trace.span, !handedOver && end.status === 'FAILED' ? { code: end.code, message: end.message } : undefined);
  if (handedOver) run.handOver();
  releaseRun(run);
}
