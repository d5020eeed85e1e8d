/**
 * A run's life, in the order it happens. The route handler (handler.ts) has already decided who
 * the user is and what the request says; from there a run:
 *
 * 1. opens: one statement reads who asks (membership and role), decides the admission checks
 *    (admission.ts: 429 TOO_MANY_RUNS, RATE_LIMITED), checks (or creates) the conversation,
 *    reserves the run's row positions and inserts the RUNNING run with its MCP key (409 when
 *    another run holds the conversation, after closing a stale one); the run's tool policy is
 *    computed from the role (policy.ts); a resume consumes its answers; the run joins this
 *    process's registry and RUN_STARTED goes out at once;
 * 2. prepares, in the background: reads the history window and what the conversation read
 *    before, lists the product's tools for the key (cached per grant), closes abandoned approvals;
 * 3. streams: the answered interrupts are settled by their kind (an approved call runs with a
 *    single-use override) or the user's message is added, then the agent answers; every event gets
 *    its position, is sent to every watcher and recorded (compacted; written per message);
 * 4. finishes with exactly one terminal event: RUN_FINISHED (success, interrupt with the held
 *    calls stored as pending interrupts, or cancelled) or RUN_ERROR with a stable code;
 * 5. records the end and revokes the key (one statement), ends the trace and leaves the registry.
 *
 * The run does not belong to any connection: watchers (the request that started it, a reload, a
 * second tab, another instance) come and go; `stopRun` ends it from anywhere. A run whose row was
 * closed elsewhere (the stale sweep) notices at its next heartbeat and stops writing.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
// The host, through the module's seam (host.ts).
import {
  agentKeyMaterial,
  childLog,
  describeError,
  type HitLimitInput,
  newId,
  type PrismaClient,
  retryWhileUnavailable,
  type ProjectMember,
  revokeKey,
  type Scope,
  stackFrames,
} from '../host';
import { CUSTOM_EVENTS } from '../constants';
import { AgentRefusal } from '../error-codes';
import { emptyView, foldEvents } from '../fold';
import {
  type AgentEvent,
  attachmentsOf,
  type ConversationView,
  hasMoreThanText,
  type MessagePart,
  type ModelInfo,
  type PageContext,
  type ResumeEntry,
  textOfParts,
  type TokenUsage,
} from '../schema';
import { type BudgetState, budgetsAfterRun } from '../budgets';
import { capResult, listRunTools, runAgent, type ListedTools, type RunResult } from './agent';
import { bindMessageAttachments } from './attachments';
import { budgetCheck } from './budgets';
import { dataPolicyRead, maskConversationTitle } from './data-policy';
import {
  closeAbandoned,
  consumeResume,
  decisionOutcome,
  persistPending,
  settleInterrupt,
  type Decision,
} from './human-in-the-loop';
import { endSpan, RunTrace, traceIdOf, tracer } from './instrumentation';
import { LiveRun, registerRun, releaseRun } from './live';
import type { McpGateway } from './mcp-gateway';
import type { ModelHandle } from './model';
import {
  conversationReads,
  discardRun,
  expireOffPath,
  historyWindow,
  loadRunTree,
  openRunRow,
  recoverStaleRuns,
  rememberReads,
  RunRecorder,
  selectedPath,
  userMessageOfRun,
  type OpenedRun,
  type RunEnd,
} from './persistence';
import { type RunToolPolicy, runToolPolicy } from './policy';
import { ReferenceWatcher, RunReferences } from './references';
import { decodeRunSettings, type ProjectRunSettings, runSettingsRead } from './settings-store';
import { type MaskOptions, maskStoredEvent } from './redaction';
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
  flushIntervalMs?: number;
  heartbeatMs?: number;
  /** Tools that need approval on top of the approval map (tightens only). */
  requireApproval?: ReadonlySet<string>;
  /** The model's prices in US dollars per million tokens, when configured. */
  prices?: { input: number; output: number };
}

export interface StartRunInput {
  prisma: PrismaClient;
  projectId: string;
  /** The signed-in user (from the session); their membership is read by the statement that opens the run. */
  userId: string;
  /** The scope the user's role must hold in the project to open the run. */
  memberScope: Scope;
  /** The conversation, and the title to create it with when it may be new. */
  conversation: { id: string; create?: { title: string } };
  /**
   * A new version of a turn of the shown path (edit: with a new user message; regenerate: without
   * one, the turn's message is asked again): the run that starts that turn.
   */
  version?: { of: string };
  /** The user message's parts (text, images, files), or null for a resume. */
  userMessage: MessagePart[] | null;
  /** The uploads the message attaches (their parts are in `userMessage`): bound to the conversation once the run opens. */
  attachmentIds?: string[];
  resume: ResumeEntry[] | null;
  pageContext: PageContext;
  model: ModelHandle;
  gateway: McpGateway;
  settings: RunSettings;
  /** The runs-per-minute limit this run counts against (counted by the statement that opens it). */
  perMinute?: HitLimitInput;
  /** When the request arrived (performance.now()); set-up timings are measured from it. */
  receivedAt?: number;
  /** Set-up timings, for the benchmark. */
  onTimings?: (t: RunTimings) => void;
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

/**
 * Opens the run and starts it; resolves as soon as RUN_STARTED is out (the run goes on). A run that
 * may not open is refused with an `AgentRefusal` (its stable code, status and wording).
 */
export async function startRun(input: StartRunInput): Promise<LiveRun> {
  const t0 = input.receivedAt ?? performance.now();
  const { prisma } = input;
  const span = tracer().startSpan('in_app_agent.run', {
    attributes: {
      'project.id': input.projectId,
      'conversation.id': input.conversation.id,
      'user.id': input.userId,
      'model.provider': input.model.info.provider,
      'model.id': input.model.info.modelId,
    },
  });
  const trace = new RunTrace(span);
  // A new version of a turn follows the run that turn follows; a regeneration asks its message again.
  let version: { precedingRunId: string | null } | undefined;
  let userMessage = input.userMessage;
  if (input.version) {
    const nodes = await loadRunTree(prisma, input.conversation.id);
    const turn = nodes.find((n) => n.id === input.version!.of);
    if (!turn || turn.resumedFromId || !selectedPath(nodes).includes(turn.id)) {
      endSpan(span, { code: 'VERSION_NOT_FOUND', message: 'no such turn' });
      throw new AgentRefusal('VERSION_NOT_FOUND', 'That message is not part of this conversation any more. Reload it.');
    }
    version = { precedingRunId: turn.precedingRunId };
    const asked = await userMessageOfRun(prisma, turn.id);
    // An edit asks its new text with the turn's attachments (unless it attaches its own).
    if (userMessage && asked && !attachmentsOf(userMessage).length)
      userMessage = [...attachmentsOf(asked), ...userMessage];
    userMessage ??= asked;
    if (!userMessage) {
      endSpan(span, { code: 'VERSION_NOT_FOUND', message: 'turn without a message' });
      throw new AgentRefusal('VERSION_NOT_FOUND', 'That answer has no message to ask again.');
    }
  }
  const runId = newId('run_');
  // The run's MCP key is stored by the statement that opens the run; the secret stays in memory.
  const runKey = agentKeyMaterial(runId, input.settings.keyTtlSeconds);
  // Read by the open statement too: the project's budgets (a spent one refuses the run) and how its
  // stored text is masked.
  const budget = budgetCheck(input.projectId, input.userId);
  const dataPolicy = dataPolicyRead(input.projectId);
  const open = {
    runId,
    conversationId: input.conversation.id,
    projectId: input.projectId,
    userId: input.userId,
    memberScope: input.memberScope,
    modelId: input.model.info.modelId,
    traceId: traceIdOf(span),
    ...(input.conversation.create && !input.resume && !version ? { create: input.conversation.create } : {}),
    ...(version ? { version } : {}),
    running: { maxRunning: input.settings.maxConcurrentRuns, staleSeconds: input.settings.staleSeconds },
    key: runKey.row,
    ...(input.perMinute ? { perMinute: input.perMinute } : {}),
    // The project's tool permissions and instructions, read (and recorded on the run) by the same statement.
    reads: [runSettingsRead(input.projectId, input.conversation.id)],
    admission: [budget, dataPolicy],
  };

  // 1. Open: the run row (one statement), or why not.
  let opened: OpenedRun | null;
  try {
    try {
      opened = await openRunRow(prisma, open);
    } catch (err) {
      if (!(err instanceof AgentRefusal && err.code === 'RUN_IN_PROGRESS')) throw err;
      // Another run holds the conversation: if it stopped responding, close it and try once more.
      if ((await recoverStaleRuns(prisma, input.settings.staleSeconds, open.conversationId)) === 0) throw err;
      opened = await openRunRow(prisma, open);
    }
  } catch (err) {
    endSpan(span, {
      code: err instanceof AgentRefusal ? err.code : 'INTERNAL_ERROR',
      message: (err as Error).message,
    });
    throw err;
  }
  if (!opened) {
    endSpan(span, { code: 'CONVERSATION_NOT_FOUND', message: 'conversation not found' });
    throw new AgentRefusal('CONVERSATION_NOT_FOUND', 'Conversation not found.');
  }
  trace.setRunId(opened.runId);
  // Read by the open statement (`memberScope`): the role the run's tools and approvals go by, and
  // the project's settings (the newest tool permissions and instructions, this conversation's
  // "always allow" grants).
  const member = opened.member!;
  let settings: ProjectRunSettings;
  try {
    settings = decodeRunSettings(opened.row);
  } catch (err) {
    // Nothing of the run stays: not the run, its key, nor a conversation the open created for it.
    const created = opened.created ? { conversationId: opened.conversationId } : undefined;
    await discardRun(prisma, opened.runId, created).catch(() => undefined);
    await revokeKey(prisma, runKey.row.id).catch(() => undefined);
    childLog({ projectId: input.projectId, runId: opened.runId }).error(
      { event: 'run.settings_unreadable', code: 'SETTINGS_UNREADABLE' },
      'the project tool permissions could not be read',
    );
    endSpan(span, { code: 'SETTINGS_UNREADABLE', message: (err as Error).message });
    throw err;
  }
  let policy = runToolPolicy(
    { role: member.role, isAdmin: member.user.isAdmin },
    { requireApproval: input.settings.requireApproval, project: settings.policy, allowed: settings.allowed },
  );

  if (input.attachmentIds?.length) {
    try {
      await bindMessageAttachments(prisma, {
        ids: input.attachmentIds,
        projectId: input.projectId,
        userId: input.userId,
        conversationId: opened.conversationId,
      });
    } catch (err) {
      await discardRun(prisma, opened.runId).catch(() => undefined);
      endSpan(span, {
        code: err instanceof AgentRefusal ? err.code : 'INTERNAL_ERROR',
        message: (err as Error).message,
      });
      throw err;
    }
  }

  let decisions: Decision[] = [];
  if (input.resume) {
    try {
      decisions = await consumeResume(prisma, {
        conversationId: opened.conversationId,
        userId: input.userId,
        policy,
        entries: input.resume,
        resumingRunId: opened.runId,
      });
    } catch (err) {
      await discardRun(prisma, opened.runId).catch(() => undefined);
      endSpan(span, {
        code: err instanceof AgentRefusal ? err.code : 'INTERNAL_ERROR',
        message: (err as Error).message,
      });
      throw err;
    }
    // Answered "always allow in this conversation": later calls of these tools in this run go unasked too.
    policy = policy.allowing(
      decisions.filter((d) => d.kind === 'tool_approval' && d.alwaysInConversation).map((d) => d.toolName),
    );
  }

  if (version) {
    // The replaced turn's branch is no longer shown: its pending approvals can never be answered.
    await expireOffPath(prisma, opened.conversationId, [opened.runId]);
  }

  const run = new LiveRun({
    runId: opened.runId,
    conversationId: opened.conversationId,
    projectId: input.projectId,
    userId: input.userId,
  });
  registerRun(run);
  const timings: RunTimings = {
    opened: performance.now() - t0,
    historyLoaded: 0,
    toolsListed: 0,
    agentStarted: 0,
  };
  void runToEnd({
    run,
    opened,
    key: { id: runKey.row.id, secret: runKey.secret },
    decisions,
    trace,
    input: { ...input, userMessage },
    member,
    policy,
    instructions: settings.instructions?.text ?? '',
    budgets: budget.state(),
    mask: dataPolicy.maskOptions(),
    mark: (step) => {
      timings[step] = performance.now() - t0;
      if (step === 'agentStarted') input.onTimings?.(timings);
    },
  });
  return run;
}

/** Stops a run of this process (Stop from any tab; the run records its own end). */
export function stopRun(run: LiveRun): void {
  run.stop('user');
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

function modelEvent(info: ModelInfo): AgentEvent {
  return { type: 'CUSTOM', name: CUSTOM_EVENTS.model, value: info };
}

/** What an opened run goes on with (steps 2-5). */
interface OpenedRunContext {
  run: LiveRun;
  opened: OpenedRun;
  /** The run's MCP key (its secret only in memory). */
  key: { id: string; secret: string };
  /** The approvals this run answers (a resume), in the order they were answered. */
  decisions: Decision[];
  trace: RunTrace;
  input: StartRunInput;
  /** Who asks, as the open statement read them. */
  member: ProjectMember;
  policy: RunToolPolicy;
  /** The project's assistant instructions (empty: none). */
  instructions: string;
  /** The project's budgets as the open statement read them (null: none). */
  budgets: BudgetState[] | null;
  /** How the run's stored rows are masked (the project's data policy). */
  mask: MaskOptions;
  mark: (step: Exclude<keyof RunTimings, 'opened'>) => void;
}

/** Steps 2-5: runs to exactly one terminal event, records it and leaves the registry. Never throws. */
async function runToEnd(ctx: OpenedRunContext): Promise<void> {
  const { run, opened, key, decisions, trace, input, member, policy, instructions, budgets, mask, mark } = ctx;
  const { prisma, settings } = input;
  const { runId, conversationId } = opened;
  const signal = run.controller.signal;
  const recorder = new RunRecorder(prisma, conversationId, runId, opened, {
    flushIntervalMs: settings.flushIntervalMs,
    heartbeatMs: settings.heartbeatMs,
    onLost: () => run.stop('lost'),
    // Stored rows are masked (secrets; contacts when the project asks); the live stream and the
    // model's history of this run are not.
    storedForm: (event) => maskStoredEvent(event, mask),
  });
  // This run's events until the agent starts: the agent's history is the stored conversation
  // plus these. Nothing is collected afterwards.
  let collected: AgentEvent[] | null = [];
  let terminalSent = false;
  // The issues, members and links the run's messages name, checked with the run's permissions.
  const references = new RunReferences(prisma, input.projectId, { role: member.role, isAdmin: member.user.isAdmin });
  const watcher = new ReferenceWatcher(references, (e) => send(e), { runId, conversationId });
  const send = (event: AgentEvent) => {
    if (terminalSent) return;
    if (event.type === 'RUN_FINISHED' || event.type === 'RUN_ERROR') terminalSent = true;
    const pos = run.emit(event);
    recorder.record(event, pos);
    collected?.push(event);
    watcher.observe(event);
  };
  const finished = (outcome: Extract<AgentEvent, { type: 'RUN_FINISHED' }>['outcome'], usage?: unknown[]) =>
    send({
      type: 'RUN_FINISHED',
      threadId: conversationId,
      runId,
      outcome,
      ...(usage ? { usage: usage as never } : {}),
    });

  let end: RunEnd = { status: 'FAILED', code: 'INTERNAL_ERROR', message: 'The run ended unexpectedly.' };
  let result: RunResult | undefined;
  let keyId: string | undefined;
  send({
    type: 'RUN_STARTED',
    threadId: conversationId,
    runId,
    ...(decisions[0] ? { parentRunId: decisions[0].runId } : {}),
  });
  recorder.start();
  // ops: one log line when the run starts and one when it ends, with its ids (never its content).
  const startedAt = Date.now();
  const ids = { runId, conversationId, projectId: input.projectId, userId: input.userId };
  const runLog = childLog({ ...ids, traceId: traceIdOf(trace.span) });
  runLog.info({ event: 'run.started', resumed: decisions.length > 0, model: input.model.info.modelId }, 'run started');
  for (const d of decisions) {
    const call = { toolCallId: d.toolCallId, tool: d.toolName, kind: d.kind };
    const always =
      d.kind === 'tool_approval' && d.alwaysInConversation
        ? { alwaysInConversation: true, policyVersion: policy.version }
        : {};
    runLog.info({ event: 'approval.decided', ...call, decision: decisionOutcome(d), ...always }, 'approval decided');
  }
  try {
    // Two turns of the event loop first: in the first the watchers' streams flush RUN_STARTED
    // (they write on `setImmediate`, queued after this), in the second pending I/O is served; only
    // then the set-up's work, which runs on this thread (the agent's construction, and every
    // query on the embedded database).
    for (let turn = 0; turn < 2; turn++) await nextTurn();
    // 2. Prepare: the key was stored with the run; the history the model can be sent (bounded by
    // the context budget) and what the conversation read before it (the data-flow guard remembers
    // past the window). A conversation this run created has neither.
    keyId = key.id;
    recorder.keepKeyAlive(key.id, settings.keyTtlSeconds);
    if (opened.created && mask.contacts) {
      void maskConversationTitle(prisma, conversationId, mask).catch((err: unknown) =>
        runLog.error({ event: 'run.title_not_masked', error: describeError(err) }, 'could not mask the title'),
      );
    }
    const [stored, readSoFar] = opened.created
      ? [emptyView(conversationId), { privateData: false, untrustedContent: false }]
      : await Promise.all([
          historyWindow(prisma, conversationId, { excludeRunId: runId, budgetChars: settings.contextTokens * 6 }),
          conversationReads(prisma, conversationId),
        ]);
    mark('historyLoaded');
    const mcp = { gateway: input.gateway, secret: key.secret, keyId: key.id };
    const listing: Promise<ListedTools> = listRunTools(mcp, policy, signal).then((l) => {
      mark('toolsListed');
      return l;
    });
    listing.catch(() => undefined); // awaited (and reported) by the agent
    send(modelEvent(input.model.info));

    // 3. Stream: the decided approvals, or the user's message; then the agent.
    if (decisions.length) {
      for (const d of decisions)
        await settleInterrupt(d, { send, trace, prisma, projectId: input.projectId, mcp, keyId });
    } else {
      for (const a of await closeAbandoned(prisma, conversationId, stored)) {
        if (a.decided) send({ type: 'CUSTOM', ...a.decided });
        send({
          type: 'TOOL_CALL_RESULT',
          messageId: newId('msg_'),
          toolCallId: a.toolCallId,
          content: capResult(a.result),
          role: 'tool',
        });
      }
      const messageId = newId('msg_');
      const parts = await references.checkParts(input.userMessage ?? []);
      const text = textOfParts(parts);
      send({ type: 'TEXT_MESSAGE_START', messageId, role: 'user' });
      if (hasMoreThanText(parts)) {
        send({ type: 'CUSTOM', name: CUSTOM_EVENTS.messageParts, value: { messageId, parts } });
      }
      if (text) send({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text });
      send({ type: 'TEXT_MESSAGE_END', messageId });
    }
    const modelHistory: ConversationView = foldEvents(collected, stored);
    collected = null;
    result = await runAgent({
      prisma,
      projectId: input.projectId,
      projectName: member.projectName,
      user: { id: input.userId, name: member.user.name },
      role: member.role,
      policy,
      instructions,
      history: modelHistory,
      readSoFar,
      pageContext: input.pageContext,
      model: input.model,
      mcp,
      listing,
      signal,
      emit: send,
      maxSteps: settings.maxSteps,
      maxRetries: settings.maxRetries,
      contextTokens: settings.contextTokens,
      trace,
      idleTimeoutMs: settings.idleTimeoutMs,
      onModelStart: () => mark('agentStarted'),
    });

    const newlyRead = {
      privateData: Boolean(result.read?.privateData && !readSoFar.privateData),
      untrustedContent: Boolean(result.read?.untrustedContent && !readSoFar.untrustedContent),
    };
    await rememberReads(prisma, conversationId, newlyRead).catch((err: unknown) =>
      runLog.error({ event: 'run.reads_not_remembered', error: describeError(err) }, 'could not remember reads'),
    );
    // 4. The terminal event, after the answer's references are checked and the budgets as they
    // stand with this run's usage (the panel warns at 80 %).
    await watcher.settle();
    const usage = [usageOf(input.model.info, result.usage, settings.prices)];
    if (budgets && signal.reason !== 'lost') {
      send({ type: 'CUSTOM', name: CUSTOM_EVENTS.budget, value: { budgets: budgetsAfterRun(budgets, usage[0]) } });
    }
    if (signal.reason === 'lost') {
      end = { status: 'FAILED', code: 'RUN_STALE', message: 'The run stopped responding and was closed.' };
    } else if (result.kind === 'success') {
      finished({ type: 'success' }, usage);
      end = { status: 'COMPLETED', outcome: { type: 'success' } };
    } else if (result.kind === 'interrupt') {
      const interrupts = await persistPending(prisma, {
        runId,
        conversationId,
        userId: input.userId,
        pending: result.pending,
        ttlSeconds: settings.approvalTtlSeconds,
        projectId: input.projectId,
        subject: { role: member.role, isAdmin: member.user.isAdmin },
      });
      const outcome = { type: 'interrupt' as const, interrupts };
      finished(outcome, usage);
      end = { status: 'INTERRUPTED', outcome };
    } else if (result.kind === 'cancelled') {
      // What the model streamed until Stop was paid for: the usage says so (partly estimated).
      finished({ type: 'cancelled' }, usage);
      end = { status: 'ABORTED' };
    } else {
      send({ type: 'RUN_ERROR', code: result.code, message: result.message });
      end = { status: 'FAILED', code: result.code, message: result.message };
    }
  } catch (err) {
    runLog.error({ event: 'run.failed', error: describeError(err), frames: stackFrames(err) }, 'run failed'); // ops
    if (signal.aborted && signal.reason !== 'lost') {
      finished({ type: 'cancelled' });
      end = { status: 'ABORTED' };
    } else if (signal.reason !== 'lost') {
      send({ type: 'RUN_ERROR', code: 'INTERNAL_ERROR', message: 'Something went wrong. Please try again.' });
      end = { status: 'FAILED', code: 'INTERNAL_ERROR', message: (err as Error).message };
    }
  } finally {
    if (signal.reason === 'lost' && !terminalSent) {
      // Closed elsewhere: the stored end is the sweep's RUN_STALE; watchers get the same.
      terminalSent = true;
      run.emit({ type: 'RUN_ERROR', code: 'RUN_STALE', message: 'The run stopped responding and was closed.' });
    }
    // 5. Record the end and revoke the key (one statement), end the trace, leave the registry
    // (watchers end once the end is stored, so a client that reads the conversation next finds it
    // whole).
    let revoked = false;
    try {
      revoked = await recorder.finish(
        end,
        result ? usageOf(input.model.info, result.usage, settings.prices) : undefined,
      );
    } catch (err) {
      runLog.error({ event: 'run.record_failed', error: describeError(err) }, 'could not record the run end'); // ops
    }
    if (keyId && !revoked) {
      // ops: retried while the database is briefly unavailable, so the key is revoked once it is back.
      const revoke = (id: string) => retryWhileUnavailable(() => revokeKey(prisma, id), { budgetMs: 30_000 });
      await revoke(keyId).catch((err: unknown) =>
        runLog.error({ event: 'run.key_revoke_failed', error: describeError(err) }, 'could not revoke the run key'),
      );
    }
    // ops: the run's end, as recorded.
    runLog.info(
      {
        event: 'run.finished',
        status: end.status,
        ...(end.status === 'FAILED' ? { code: end.code } : {}),
        ...(end.status === 'ABORTED' ? { reason: String(signal.reason ?? 'user') } : {}),
        durationMs: Date.now() - startedAt,
        inputTokens: result?.usage.inputTokens ?? null,
        outputTokens: result?.usage.outputTokens ?? null,
        ...(result?.usage.estimated ? { usageEstimated: true } : {}),
      },
      `run ${end.status.toLowerCase()}`,
    );
    trace.span.setAttributes({
      'run.status': end.status,
      'gen_ai.usage.input_tokens': result?.usage.inputTokens ?? 0,
      'gen_ai.usage.output_tokens': result?.usage.outputTokens ?? 0,
    });
    endSpan(trace.span, end.status === 'FAILED' ? { code: end.code, message: end.message } : undefined);
    releaseRun(run);
  }
}
