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
// The host, through the module's seam (host.ts).
import {
  agentKeyMaterial,
  childLog,
  describeError,
  type HitLimitInput,
  type LogContext,
  newId,
  type PrismaClient,
  revokeKey,
  type Scope,
} from '../host';
import { CUSTOM_EVENTS, LIMITS } from '../constants';
import { AgentRefusal } from '../error-codes';
import { emptyView } from '../fold';
import {
  type AgentEvent,
  attachmentsOf,
  type ConversationView,
  hasMoreThanText,
  type MessagePart,
  type PageContext,
  type ResumeEntry,
  textOfParts,
} from '../schema';
import { capResult } from './agent';
import { bindMessageAttachments } from './attachments';
import { budgetCheck } from './budgets';
import { dataPolicyRead, maskConversationTitle } from './data-policy';
import { closeAbandoned, consumeResume, decisionOutcome, settleInterrupt, type Decision } from './human-in-the-loop';
import { endSpan, RunTrace, traceIdOf, tracer } from './instrumentation';
import { LiveRun, ownerId, registerRun } from './live';
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
  selectedPath,
  userMessageOfRun,
  type OpenedRun,
} from './persistence';
import { runToolPolicy } from './policy';
import type { MaskOptions } from './redaction';
import type { RunReferences } from './references';
import { decodeRunSettings, type ProjectRunSettings, runSettingsRead } from './settings-store';
import { type RunBeginning, type RunSettings, type RunTimings, runToEnd } from './run-to-end';

export type { RunTimings } from './run-to-end';

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
  /** The user message's parts (text, images, files, references), or null for a resume. */
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
  /** What the request's log lines say of it (its id, project, user): the run's lines say it too. */
  logContext?: LogContext;
  /** Set-up timings, for the benchmark. */
  onTimings?: (t: RunTimings) => void;
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
  const userMessageId = newId('msg_');
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
    // This instance holds the run's lease; what it was asked is stored for another one to go on.
    lease: { owner: ownerId(), seconds: input.settings.leaseSeconds ?? LIMITS.leaseSeconds },
    input: { userMessage: input.resume ? null : userMessage, userMessageId, pageContext: input.pageContext },
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
    childLog({ ...input.logContext, projectId: input.projectId, runId: opened.runId }).error(
      { event: 'run.settings_unreadable', code: 'SETTINGS_UNREADABLE' },
      'the project tool permissions could not be read',
    );
    endSpan(span, { code: 'SETTINGS_UNREADABLE', message: (err as Error).message });
    throw err;
  }
  // A refusal after the run opened (its attachments, its answers): the run goes, nothing of it stays.
  const refuseOpened = async (err: unknown) => {
    await discardRun(prisma, opened.runId).catch(() => undefined);
    endSpan(span, {
      code: err instanceof AgentRefusal ? err.code : 'INTERNAL_ERROR',
      message: (err as Error).message,
    });
    return err;
  };
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
      throw await refuseOpened(err);
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
      throw await refuseOpened(err);
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
    prisma,
    ids: {
      runId: opened.runId,
      conversationId: opened.conversationId,
      projectId: input.projectId,
      userId: input.userId,
    },
    generation: 1,
    seqs: opened,
    key: { id: runKey.row.id, secret: runKey.secret },
    trace,
    model: input.model,
    gateway: input.gateway,
    settings: input.settings,
    pageContext: input.pageContext,
    member,
    policy,
    instructions: settings.instructions?.text ?? '',
    budgets: budget.state(),
    mask: dataPolicy.maskOptions(),
    firstEvent: {
      type: 'RUN_STARTED',
      threadId: opened.conversationId,
      runId: opened.runId,
      ...(decisions[0] ? { parentRunId: decisions[0].runId } : {}),
    },
    begin: firstBeginning({
      prisma,
      opened,
      projectId: input.projectId,
      decisions,
      userMessage,
      userMessageId,
      trace,
      contextTokens: input.settings.contextTokens,
      maskTitle: opened.created && dataPolicy.maskOptions().contacts ? dataPolicy.maskOptions() : null,
    }),
    logFields: { resumed: decisions.length > 0 },
    ...(input.logContext ? { request: input.logContext } : {}),
    decisionLog: decisions.map((d) => ({
      toolCallId: d.toolCallId,
      tool: d.toolName,
      kind: d.kind,
      decision: decisionOutcome(d),
      ...(d.kind === 'tool_approval' && d.alwaysInConversation
        ? { alwaysInConversation: true, policyVersion: policy.version }
        : {}),
    })),
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
 * How a run's first generation begins: it reads the history the model can be sent (bounded by the
 * context budget) and what the conversation read before it (the data-flow guard remembers past
 * the window), then sends the answered interrupts' results (a resume), or closes approvals left
 * unanswered and sends the user's message. A conversation this run created has no history.
 */
function firstBeginning(input: {
  prisma: PrismaClient;
  opened: OpenedRun;
  projectId: string;
  decisions: Decision[];
  userMessage: MessagePart[] | null;
  userMessageId: string;
  trace: RunTrace;
  contextTokens: number;
  /** Mask the title of the conversation this run created (the project masks contacts). */
  maskTitle: MaskOptions | null;
}): RunBeginning {
  const { prisma, opened, decisions } = input;
  const { runId, conversationId } = opened;
  return async ({ send, mcp, keyId, mark, references, log }) => {
    if (input.maskTitle) {
      void maskConversationTitle(prisma, conversationId, input.maskTitle).catch((err: unknown) =>
        log.error({ event: 'run.title_not_masked', error: describeError(err) }, 'could not mask the title'),
      );
    }
    const [stored, readSoFar] = opened.created
      ? [emptyView(conversationId), { privateData: false, untrustedContent: false }]
      : await Promise.all([
          historyWindow(prisma, conversationId, { excludeRunId: runId, budgetChars: input.contextTokens * 6 }),
          conversationReads(prisma, conversationId),
        ]);
    mark('historyLoaded');
    if (decisions.length) {
      for (const d of decisions)
        await settleInterrupt(d, { send, trace: input.trace, prisma, projectId: input.projectId, mcp, keyId });
    } else {
      await sendUserMessage(send, {
        prisma,
        conversationId,
        stored,
        parts: input.userMessage ?? [],
        messageId: input.userMessageId,
        references,
      });
    }
    return { history: stored, readSoFar, stepsDone: 0, usageBefore: {} };
  };
}

/**
 * A new turn's start: approvals the user moved on from are closed (each call gets its result),
 * then the user's message is sent (its parts, when they say more than its text).
 */
export async function sendUserMessage(
  send: (e: AgentEvent) => void,
  input: {
    prisma: PrismaClient;
    conversationId: string;
    stored: ConversationView;
    parts: MessagePart[];
    messageId: string;
    /** The run's reference check: the issues and members the message names, kept when they are this project's. */
    references: RunReferences;
  },
): Promise<void> {
  for (const a of await closeAbandoned(input.prisma, input.conversationId, input.stored)) {
    if (a.decided) send({ type: 'CUSTOM', ...a.decided });
    send({
      type: 'TOOL_CALL_RESULT',
      messageId: newId('msg_'),
      toolCallId: a.toolCallId,
      content: capResult(a.result),
      role: 'tool',
    });
  }
  const { messageId } = input;
  const parts = await input.references.checkParts(input.parts);
  const text = textOfParts(parts);
  send({ type: 'TEXT_MESSAGE_START', messageId, role: 'user' });
  if (hasMoreThanText(parts)) {
    send({ type: 'CUSTOM', name: CUSTOM_EVENTS.messageParts, value: { messageId, parts } });
  }
  if (text) send({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: text });
  send({ type: 'TEXT_MESSAGE_END', messageId });
}
