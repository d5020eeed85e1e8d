/**
 * Experiments: every case of a dataset run against a candidate (model, instructions, tool policy)
 * through the assistant's own runtime (`runAgent`), on the instance that started it, a bounded
 * number of cases at a time, with Stop, progress and the results stored as each case ends.
 *
 * Isolation: an experiment never changes the project.
 * - Read tools run for real, through the product's MCP server, with a short-lived key bound to the
 *   case's user: the same RBAC as their own runs (their current role), audited under the
 *   experiment's id.
 * - Writing and outward tools are never sent: the call is recorded and answered with the original
 *   run's recorded result when the original made the same call (same tool, equal arguments), else
 *   with a neutral "not executed in an experiment" result.
 * - A call the candidate's policy holds for approval is decided as the original's matching call
 *   was (approved or rejected); without one it is recorded as pending and the case ends there, as
 *   the real run would.
 * - Nothing is written to the project's or the conversations' tables: the case's history is given
 *   to the runtime as a view, and its events are folded in memory.
 */
import { createHash } from 'node:crypto';
import {
  childLog,
  describeError,
  env,
  hasProjectAccess,
  loadProjectMember,
  log,
  newId,
  type PrismaClient,
  processWide,
  revokeKey,
  TOOL_CALL_META_KEY,
} from '../host';
import { foldEvents, emptyView } from '../fold';
import type { AgentEvent, ConversationView } from '../schema';
import {
  EVAL_LIMITS,
  EvalCaseDataSchema,
  EvalExpectationsSchema,
  type EvalCandidate,
  type EvalCandidateCall,
  type EvalCaseData,
  type EvalCaseResult,
  type EvalToolCall,
} from '../eval/schema';
import { answerDiff, checkExpectations, sameArgs, toolCallDiff } from '../eval/diff';
import { runAgent, systemPrompt } from './agent';
import { judgeAnswer, judgePrompt } from './eval-judge';
import {
  casesToRun,
  closeLostExperiments,
  countCases,
  EvalRefusal,
  finishExperiment,
  heartbeat,
  insertExperiment,
  insertExperimentKey,
  recordResult,
  requestStop,
  stopWasRequested,
} from './eval-store';
import { McpGateway } from './mcp-gateway';
import { createModel, ModelConfigError, type ModelHandle, selectProvider } from './model';
import { type RunToolPolicy, runToolPolicy } from './policy';
import { type RunDeps, runDeps } from './run-deps';
import { loadAssistantSettings } from './settings-store';
import { toolInfo } from './tools';

/** How often a running experiment says it is alive; one silent for `LOST_AFTER_SECONDS` is closed. */
const HEARTBEAT_MS = 15_000;
const LOST_AFTER_SECONDS = 120;

/**
 * The product's system prompt version: a hash of the prompt's fixed text (its rules, with a fixed
 * project, user and page), so a build whose rules changed has another version.
 */
export const SYSTEM_PROMPT_VERSION: string = createHash('sha256')
  .update(
    systemPrompt({
      projectName: 'P',
      user: { id: 'u', name: 'U' },
      role: 'MEMBER',
      pageContext: {},
      instructions: '',
    }),
  )
  .digest('hex')
  .slice(0, 12);

/** The result a writing or outward call gets when the original made no matching call. */
export const NOT_EXECUTED_RESULT = {
  notExecuted: true,
  message:
    'Not executed in an experiment: this tool changes the project or sends data outside it, and the original answer made no matching call.',
} as const;

/** Whether a tool changes something or reaches outside the product (never run in an experiment). */
function writesOrSends(name: string): boolean {
  const info = toolInfo(name);
  return !info?.readOnly || info.tags.communicatesOutside;
}

/** The candidate's model, with the provider's endpoint and credentials from the configuration. */
function candidateModel(candidate: EvalCandidate, deps: Pick<RunDeps, 'model'>): ModelHandle {
  if (!candidate.model?.provider && !candidate.model?.modelId) return deps.model();
  const settings = env();
  const provider = candidate.model.provider ?? selectProvider(settings);
  const modelId = candidate.model.modelId;
  if (provider === 'demo' && modelId)
    throw new EvalRefusal('CANDIDATE_INVALID', 'The offline demo model has no model ids to choose from.');
  try {
    return createModel({
      ...settings,
      AGENT_MODEL_PROVIDER: provider,
      ...(modelId && provider === 'bedrock' ? { BEDROCK_MODEL_ID: modelId } : {}),
      ...(modelId && provider === 'openai-compatible' ? { OPENAI_COMPATIBLE_MODEL: modelId } : {}),
    });
  } catch (err) {
    if (err instanceof ModelConfigError)
      throw new EvalRefusal('CANDIDATE_INVALID', `The candidate's model: ${err.message}`);
    throw err;
  }
}

/** Prices the candidate is costed at: its own, else the configured ones when it keeps the configured model. */
function pricesOf(candidate: EvalCandidate, deps: Pick<RunDeps, 'settings'>) {
  if (candidate.prices) return candidate.prices;
  return candidate.model?.provider || candidate.model?.modelId ? undefined : deps.settings.prices;
}

const round8 = (n: number) => Math.round(n * 1e8) / 1e8;

// ------------------------------------------------------------------------------------------------
// Estimate
// ------------------------------------------------------------------------------------------------

/** What running the dataset would take, from each case's prompt and its original answer. */
export function estimateCost(
  cases: ReadonlyArray<{ data: unknown }>,
  candidate: EvalCandidate,
  deps: Pick<RunDeps, 'settings'> = runDeps(),
): { cases: number; inputTokens: number; outputTokens: number; costUsd: number | null } {
  const promptChars = systemPrompt({
    projectName: 'Project',
    user: { id: 'u', name: 'User' },
    role: 'MEMBER',
    pageContext: {},
    instructions: candidate.instructions ?? '',
  }).length;
  let inputTokens = 0;
  let outputTokens = 0;
  for (const c of cases) {
    const data = EvalCaseDataSchema.safeParse(c.data);
    if (!data.success) continue;
    const d = data.data;
    // One model call per tool step plus the answer, each sent the prompt and what came before.
    const steps = 1 + d.original.toolCalls.length;
    const history = JSON.stringify(d.history).length + d.userMessage.text.length;
    const results = d.original.toolCalls.reduce((n, t) => n + JSON.stringify(t.result ?? null).length, 0);
    inputTokens += Math.ceil(((promptChars + history) * steps + results * (steps - 1)) / 4);
    const answerTokens = d.original.usage?.outputTokens ?? Math.ceil(d.original.answer.length / 4) + 40 * steps;
    outputTokens += answerTokens;
    // The judge reads the rubric, the question and both answers, and writes a short verdict.
    if (candidate.judge) {
      inputTokens += Math.ceil(
        (candidate.judge.rubric.length + d.userMessage.text.length + 2 * d.original.answer.length + 400) / 4,
      );
      outputTokens += 60;
    }
  }
  const prices = pricesOf(candidate, deps);
  return {
    cases: cases.length,
    inputTokens,
    outputTokens,
    costUsd: prices ? round8((inputTokens * prices.input + outputTokens * prices.output) / 1_000_000) : null,
  };
}

// ------------------------------------------------------------------------------------------------
// One case
// ------------------------------------------------------------------------------------------------

/** The original's calls a candidate call may be answered from (each at most once). */
class OriginalCalls {
  private readonly used = new Set<string>();
  constructor(private readonly calls: readonly EvalToolCall[]) {}

  /** The first unused original call of `name` with equal arguments (and the decision asked for). */
  take(name: string, args: Record<string, unknown>, decided?: boolean): EvalToolCall | undefined {
    const found = this.calls.find(
      (c) =>
        !this.used.has(c.id) &&
        c.name === name &&
        sameArgs(c.args, args) &&
        (decided === undefined || (decided ? c.decision === 'approved' || c.decision === 'rejected' : true)),
    );
    if (found) this.used.add(found.id);
    return found;
  }
}

/** What happened to each of a case's tool calls, by call id and (for approvals) by tool and arguments. */
class CallLedger {
  readonly modes = new Map<
    string,
    { mode: EvalCandidateCall['mode']; result?: unknown; approval?: 'approved' | 'rejected' }
  >();
  readonly approvals: Array<{
    name: string;
    args: Record<string, unknown>;
    decision: 'approved' | 'rejected';
    result: unknown;
  }> = [];
}

/**
 * The run's policy, with a held call decided as the original's matching call was: it then goes on
 * (and is answered from the original by the gateway, never run when it was rejected).
 */
function decidedFromOriginal(policy: RunToolPolicy, originals: OriginalCalls, ledger: CallLedger): RunToolPolicy {
  return {
    ...policy,
    approval: (name, taint, args) => {
      const decision = policy.approval(name, taint, args);
      if (!decision.required) return decision;
      const original = originals.take(name, args ?? {}, true);
      if (!original) return decision;
      ledger.approvals.push({
        name,
        args: args ?? {},
        decision: original.decision as 'approved' | 'rejected',
        result: original.result,
      });
      return { required: false, reason: decision.reason, why: '' };
    },
  };
}

/**
 * The product's MCP server as an experiment sees it: listing and reads go to the real server with
 * the case's key; writing and outward calls, and calls whose approval the original rejected, are
 * answered from the original run (or neutrally) and never sent.
 */
class ExperimentGateway extends McpGateway {
  constructor(
    private readonly real: McpGateway,
    private readonly originals: OriginalCalls,
    private readonly ledger: CallLedger,
  ) {
    super({
      dispatch: () => Promise.reject(new Error('An experiment sends nothing to the MCP server but reads.')),
    });
  }

  override listTools(secret: string, scopeKey: string, signal?: AbortSignal) {
    return this.real.listTools(secret, scopeKey, signal);
  }

  override async callTool(
    secret: string,
    call: { name: string; args: Record<string, unknown>; meta?: Record<string, unknown> },
    signal?: AbortSignal,
  ): Promise<unknown> {
    const id = String(call.meta?.[TOOL_CALL_META_KEY] ?? newId('call_'));
    const decided = this.ledger.approvals.findIndex((a) => a.name === call.name && sameArgs(a.args, call.args));
    if (decided >= 0) {
      // Held, and decided as the original's matching call was: an approved read runs for real;
      // anything else gets the original's recorded outcome (a rejected call never runs).
      const [a] = this.ledger.approvals.splice(decided, 1);
      if (a!.decision === 'approved' && !writesOrSends(call.name))
        return this.read(id, secret, call, signal, 'approved');
      const result = a!.result ?? NOT_EXECUTED_RESULT;
      this.ledger.modes.set(id, {
        mode: a!.result === undefined ? 'not_executed' : 'replayed',
        result,
        approval: a!.decision,
      });
      return result;
    }
    if (!writesOrSends(call.name)) return this.read(id, secret, call, signal);
    const original = this.originals.take(call.name, call.args);
    const result = original?.result ?? NOT_EXECUTED_RESULT;
    this.ledger.modes.set(id, {
      mode: original && original.result !== undefined ? 'replayed' : 'not_executed',
      result,
    });
    return result;
  }

  private async read(
    id: string,
    secret: string,
    call: { name: string; args: Record<string, unknown>; meta?: Record<string, unknown> },
    signal?: AbortSignal,
    approval?: 'approved',
  ) {
    // No override is ever sent: the MCP server would refuse a change even if one got here.
    const result = await this.real.callTool(
      secret,
      { name: call.name, args: call.args, meta: { [TOOL_CALL_META_KEY]: id } },
      signal,
    );
    this.ledger.modes.set(id, { mode: 'ran', result, ...(approval ? { approval } : {}) });
    return result;
  }
}

/** What a case runs with, the same for every case of an experiment. */
interface ExperimentContext {
  prisma: PrismaClient;
  projectId: string;
  experimentId: string;
  datasetId: string;
  candidate: EvalCandidate;
  model: ModelHandle;
  instructions: string;
  policy: { version: number; policy: NonNullable<EvalCandidate['toolPolicy']> };
  /** The judge and its rubric, when the candidate has one. */
  judge?: { rubric: string; model: ModelHandle };
  deps: RunDeps;
  signal: AbortSignal;
}

function errorResult(
  caseId: string,
  data: EvalCaseData | null,
  code: string,
  message: string,
  latencyMs: number,
): EvalCaseResult {
  return {
    caseId,
    outcome: 'error',
    error: { code, message },
    passed: false,
    answer: '',
    originalAnswer: data?.original.answer ?? '',
    toolCalls: [],
    pending: [],
    toolDiff: toolCallDiff(data?.original.toolCalls ?? [], []),
    expectations: [],
    answerDiff: answerDiff(data?.original.answer ?? '', ''),
    usage: {},
    latencyMs,
  };
}

/** One case through the runtime, isolated; never throws. Null when the experiment was stopped. */
async function runCase(
  ctx: ExperimentContext,
  row: { id: string; userId: string; conversationId: string | null; data: unknown; expectations: unknown },
): Promise<EvalCaseResult | null> {
  const t0 = Date.now();
  const parsed = EvalCaseDataSchema.safeParse(row.data);
  if (!parsed.success) return errorResult(row.id, null, 'CASE_UNREADABLE', 'The case could not be read.', 0);
  const data = parsed.data;
  const expectations = EvalExpectationsSchema.safeParse(row.expectations);
  const member = await loadProjectMember(ctx.prisma, ctx.projectId, row.userId);
  if (!member)
    return errorResult(
      row.id,
      data,
      'CASE_USER_NOT_MEMBER',
      "The case's user is no longer a member of the project.",
      0,
    );
  const subject = { role: member.role, isAdmin: member.user.isAdmin };
  if (!hasProjectAccess(subject, 'agent:use'))
    return errorResult(row.id, data, 'FORBIDDEN', "The case's user may no longer use the assistant.", 0);

  const originals = new OriginalCalls(data.original.toolCalls);
  const ledger = new CallLedger();
  const policy = decidedFromOriginal(
    runToolPolicy(subject, { requireApproval: ctx.deps.settings.requireApproval, project: ctx.policy }),
    originals,
    ledger,
  );
  const gateway = new ExperimentGateway(ctx.deps.gateway, originals, ledger);
  const key = await insertExperimentKey(ctx.prisma, {
    projectId: ctx.projectId,
    userId: row.userId,
    experimentId: ctx.experimentId,
    ttlSeconds: ctx.deps.settings.keyTtlSeconds,
  });
  const events: AgentEvent[] = [];
  const userMessageId = newId('msg_');
  const history: ConversationView = {
    ...emptyView(row.conversationId),
    messages: [
      ...data.history,
      {
        id: userMessageId,
        role: 'user',
        content: data.userMessage.text,
        runId: 'experiment',
        ...(data.userMessage.parts ? { parts: data.userMessage.parts } : {}),
      },
    ],
    decisions: data.decisions,
  };
  let result: Awaited<ReturnType<typeof runAgent>>;
  try {
    result = await runAgent({
      prisma: ctx.prisma,
      projectId: ctx.projectId,
      projectName: member.projectName,
      user: { id: row.userId, name: member.user.name },
      role: member.role,
      policy,
      instructions: ctx.instructions,
      history,
      pageContext: data.pageContext,
      model: ctx.model,
      // No key id: the runtime mints no override, so no change could run even if one were sent.
      mcp: { gateway, secret: key.secret },
      signal: ctx.signal,
      emit: (e) => events.push(e),
      maxSteps: ctx.deps.settings.maxSteps,
      maxRetries: ctx.deps.settings.maxRetries,
      contextTokens: ctx.deps.settings.contextTokens,
      idleTimeoutMs: ctx.deps.settings.idleTimeoutMs,
    });
  } finally {
    await revokeKey(ctx.prisma, key.id).catch((err: unknown) =>
      log().warn(
        { event: 'eval.key_not_revoked', experimentId: ctx.experimentId, keyId: key.id, error: describeError(err) },
        'experiment key not revoked (it expires)',
      ),
    );
  }
  if (result.kind === 'cancelled') return null;
  const latencyMs = Date.now() - t0;

  const view = foldEvents(events, emptyView());
  const answer = view.messages
    .flatMap((m) => (m.role === 'assistant' && m.content.trim() ? [m.content] : []))
    .join('\n\n');
  const pendingIds = new Set(result.kind === 'interrupt' ? result.pending.map((p) => p.toolCallId) : []);
  const toolCalls: EvalCandidateCall[] = view.messages.flatMap((m) =>
    m.role === 'assistant'
      ? m.toolCalls.map((tc): EvalCandidateCall => {
          const args = (() => {
            try {
              const v = JSON.parse(tc.args || '{}') as unknown;
              return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
            } catch {
              return {};
            }
          })();
          const recorded = ledger.modes.get(tc.id);
          const held = pendingIds.has(tc.id);
          const approval = held ? ('pending' as const) : recorded?.approval;
          return {
            id: tc.id,
            name: tc.name,
            args,
            // Local tools (navigate, search_docs) run in the assistant itself and only read.
            mode: held ? 'pending' : (recorded?.mode ?? (toolInfo(tc.name) ? 'ran' : 'refused')),
            ...(approval ? { approval } : {}),
            ...(tc.result !== undefined ? { result: parseResult(tc.result) } : {}),
          };
        })
      : [],
  );
  const pending =
    result.kind === 'interrupt'
      ? result.pending.map((p) => ({ kind: p.kind, toolName: p.toolName, args: p.args as Record<string, unknown> }))
      : [];
  const calls = toolCalls.map((c) => ({ name: c.name, args: c.args }));
  const checked = checkExpectations(expectations.success ? expectations.data : [], { text: answer, calls });
  const prices = pricesOf(ctx.candidate, ctx.deps);
  const usage = {
    ...(result.usage.inputTokens !== undefined ? { inputTokens: result.usage.inputTokens } : {}),
    ...(result.usage.outputTokens !== undefined ? { outputTokens: result.usage.outputTokens } : {}),
    ...(prices && (result.usage.inputTokens !== undefined || result.usage.outputTokens !== undefined)
      ? {
          costUsd: round8(
            ((result.usage.inputTokens ?? 0) * prices.input + (result.usage.outputTokens ?? 0) * prices.output) /
              1_000_000,
          ),
        }
      : {}),
  };
  const base = {
    caseId: row.id,
    answer,
    originalAnswer: data.original.answer,
    toolCalls,
    pending,
    toolDiff: toolCallDiff(data.original.toolCalls, calls),
    expectations: checked,
    answerDiff: answerDiff(data.original.answer, answer),
    usage,
    latencyMs,
  };
  if (result.kind === 'error')
    return { ...base, outcome: 'error', error: { code: result.code, message: result.message }, passed: false };
  const judge = ctx.judge
    ? await judgeAnswer(
        ctx.judge.model,
        judgePrompt(ctx.judge.rubric, {
          question: data.userMessage.text,
          originalAnswer: data.original.answer,
          answer,
          toolCalls: calls,
        }),
        ctx.signal,
        ctx.deps.settings.maxRetries,
      )
    : undefined;
  if (ctx.signal.aborted) return null;
  return {
    ...base,
    outcome: result.kind === 'interrupt' ? 'pending' : 'completed',
    passed: checked.every((e) => e.passed),
    ...(judge ? { judge } : {}),
  };
}

function parseResult(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return { text: s };
  }
}

// ------------------------------------------------------------------------------------------------
// Experiments
// ------------------------------------------------------------------------------------------------

/** The experiments this process runs (Stop aborts them here): entries leave when they end. */
const running = processWide('__inAppAgentExperiments', () => new Map<string, AbortController>());
const OWNER = processWide('__inAppAgentExperimentOwner', () => ({ id: newId('inst_') }));

export interface StartedExperiment {
  experimentId: string;
  /** Settles when the experiment has ended (stored); never rejects. */
  done: Promise<'COMPLETED' | 'STOPPED' | 'FAILED'>;
}

/**
 * Starts an experiment of the dataset: checks the candidate, records the experiment (refused
 * EXPERIMENT_RUNNING while another of the dataset runs), and runs its cases in the background on
 * this instance.
 */
export async function startExperiment(
  prisma: PrismaClient,
  input: { projectId: string; datasetId: string; candidate: EvalCandidate; userId: string | null },
  deps: RunDeps = runDeps(),
): Promise<StartedExperiment> {
  const { candidate } = input;
  if (candidate.systemPromptVersion && candidate.systemPromptVersion !== SYSTEM_PROMPT_VERSION)
    throw new EvalRefusal(
      'SYSTEM_PROMPT_VERSION_MISMATCH',
      `This build's system prompt is version ${SYSTEM_PROMPT_VERSION}, not ${candidate.systemPromptVersion}: run the candidate with the build that has it.`,
    );
  const model = candidateModel(candidate, deps);
  const judge = candidate.judge
    ? {
        rubric: candidate.judge.rubric,
        model: candidateModel(
          { name: 'judge', ...(candidate.judge.modelId ? { model: { modelId: candidate.judge.modelId } } : {}) },
          deps,
        ),
      }
    : undefined;
  await closeLostExperiments(prisma, input.projectId, LOST_AFTER_SECONDS);
  const total = await countCases(prisma, input.datasetId);
  if (!total) throw new EvalRefusal('DATASET_EMPTY', 'The dataset has no cases yet.');
  const settings = await loadAssistantSettings(prisma, input.projectId);
  const experimentId = newId('exp_');
  await insertExperiment(prisma, {
    id: experimentId,
    datasetId: input.datasetId,
    projectId: input.projectId,
    candidate,
    systemPromptVersion: SYSTEM_PROMPT_VERSION,
    total,
    owner: OWNER.id,
    userId: input.userId,
  });
  const controller = new AbortController();
  running.set(experimentId, controller);
  const ctx: ExperimentContext = {
    prisma,
    projectId: input.projectId,
    experimentId,
    datasetId: input.datasetId,
    candidate,
    model,
    instructions: candidate.instructions ?? settings.instructions.text,
    // A candidate's own policy has no version of the project's (-1 marks it in logs).
    policy: candidate.toolPolicy
      ? { version: -1, policy: candidate.toolPolicy }
      : { version: settings.policy.version, policy: settings.policy.policy },
    ...(judge ? { judge } : {}),
    deps,
    signal: controller.signal,
  };
  const done = runAll(ctx).finally(() => running.delete(experimentId));
  return { experimentId, done };
}

async function runAll(ctx: ExperimentContext): Promise<'COMPLETED' | 'STOPPED' | 'FAILED'> {
  const { prisma, experimentId } = ctx;
  const logger = childLog({ experimentId, projectId: ctx.projectId });
  const beat = setInterval(() => {
    heartbeat(prisma, experimentId).catch(() => undefined);
  }, HEARTBEAT_MS);
  beat.unref();
  let status: 'COMPLETED' | 'STOPPED' | 'FAILED' = 'COMPLETED';
  let errorCode: string | undefined;
  try {
    const cases = await casesToRun(prisma, ctx.datasetId);
    logger.info({ event: 'eval.started', cases: cases.length }, 'experiment started');
    let next = 0;
    let stopped = false;
    const worker = async () => {
      while (!stopped) {
        const i = next++;
        if (i >= cases.length) return;
        if (ctx.signal.aborted || (await stopWasRequested(prisma, experimentId))) {
          stopped = true;
          return;
        }
        const c = cases[i]!;
        let result: EvalCaseResult | null;
        try {
          result = await runCase(ctx, c);
        } catch (err) {
          // A case that could not be run is reported with it; the experiment goes on.
          logger.warn({ event: 'eval.case_failed', caseId: c.id, error: describeError(err) }, 'case failed');
          result = errorResult(c.id, null, 'CASE_FAILED', (err as Error).message || 'The case could not be run.', 0);
        }
        if (!result) {
          stopped = true;
          return;
        }
        await recordResult(prisma, experimentId, result);
      }
    };
    const n = Math.min(ctx.candidate.concurrency ?? EVAL_LIMITS.defaultConcurrency, EVAL_LIMITS.maxConcurrency);
    await Promise.all(Array.from({ length: n }, worker));
    if (stopped) status = 'STOPPED';
  } catch (err) {
    status = 'FAILED';
    errorCode = 'EXPERIMENT_FAILED';
    logger.error({ event: 'eval.failed', error: describeError(err) }, 'experiment failed');
  } finally {
    clearInterval(beat);
  }
  await finishExperiment(prisma, experimentId, { status, ...(errorCode ? { errorCode } : {}) }).catch((err: unknown) =>
    logger.error({ event: 'eval.end_not_recorded', error: describeError(err) }, 'experiment end not recorded'),
  );
  logger.info({ event: 'eval.ended', status }, 'experiment ended');
  return status;
}

/** Stop: recorded for every instance, and the cases running here are aborted at once. */
export async function stopExperiment(prisma: PrismaClient, projectId: string, experimentId: string): Promise<boolean> {
  const stopped = await requestStop(prisma, projectId, experimentId);
  if (stopped) running.get(experimentId)?.abort();
  return stopped;
}

/** Closes the project's experiments whose instance went away (read paths call it). */
export function closeLost(prisma: PrismaClient, projectId: string): Promise<void> {
  return closeLostExperiments(prisma, projectId, LOST_AFTER_SECONDS);
}

/** Experiments running in this process (diagnostics, tests: must be empty when idle). */
export function runningExperiments(): number {
  return running.size;
}
