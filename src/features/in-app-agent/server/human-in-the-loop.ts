/**
 * Interrupts a run waits on (tool approvals, questions to the user): persist them as AG-UI
 * interrupts, validate and consume resume answers once, and settle each answer in the resumed run
 * (an approved call runs through the MCP server with a single-use signed override; a rejection is
 * the tool's result; a question's answer, decline or expiry is the `ask_user` call's result).
 * What is common to every interrupt kind (the rows, the batch, single consumption) is here once;
 * what a kind decides and how its answer becomes the tool's result is its entry in `SERVER_KINDS`
 * (the kinds themselves: `interrupt-kinds.ts`).
 */
import {
  type AccessSubject,
  fingerprintArgs,
  hasProjectAccess,
  MCP_TOOL_METADATA,
  mintOverride,
  newId,
  OVERRIDE_META_KEY,
  Prisma,
  type PrismaClient,
  TOOL_CALL_META_KEY,
} from '../host';
import { CUSTOM_EVENTS } from '../constants';
import {
  type AnswerContent,
  answerProblems,
  AskUserInputSchema,
  describeProblems,
  type QuestionAnswer,
  type QuestionAnsweredValue,
  questionResponseSchema,
  questionResult,
} from '../elicitation';
import { AgentRefusal } from '../error-codes';
import { INTERRUPT_KINDS, type InterruptAnswer, type InterruptKind, interruptKindOf } from '../interrupt-kinds';
import type {
  AgentEvent,
  ApprovalDecidedValue,
  ApprovalPreview,
  ApprovalResponse,
  ConversationView,
  Interrupt,
  ResumeEntry,
} from '../schema';
import { capResult, type PendingCall } from './agent';
import type { RunTrace } from './instrumentation';
import type { McpGateway } from './mcp-gateway';
import {
  changedObjects,
  declarationOf,
  isLocalTool,
  LOCAL_TOOL_DECLARATIONS,
  summarizeCall,
} from '../tool-declarations';
import { runLocalTool } from './tools';
import type { RunToolPolicy } from './policy';

const issueNumberOf = (args: Record<string, unknown>) =>
  typeof args.number === 'number' && Number.isSafeInteger(args.number) && args.number > 0 ? args.number : null;

/**
 * What each held call would change, as the card shows it beside the proposal (by tool call id):
 * for tools declared with `preview: 'issue'`, the issue as it is now (one query for the batch) and,
 * for an assignment, the member it would go to. Read with the run's permissions (a role that may not
 * read issues gets none), so history and review show what the user was shown.
 */
async function approvalPreviews(
  prisma: PrismaClient,
  projectId: string,
  subject: AccessSubject,
  pending: readonly PendingCall[],
): Promise<Map<string, ApprovalPreview>> {
  const out = new Map<string, ApprovalPreview>();
  const held = pending.filter(
    (p): p is Extract<PendingCall, { kind: 'tool_approval' }> =>
      p.kind === 'tool_approval' && declarationOf(p.toolName)?.preview === 'issue' && issueNumberOf(p.args) !== null,
  );
  if (!held.length || !hasProjectAccess(subject, 'issues:read')) return out;
  const numbers = [...new Set(held.map((p) => issueNumberOf(p.args)!))];
  const refs = held.flatMap((p) =>
    p.toolName === 'assign_issue' && typeof p.args.assignee === 'string' ? [p.args.assignee] : [],
  );
  const [issues, members] = await Promise.all([
    prisma.issue.findMany({
      where: { projectId, number: { in: numbers } },
      select: {
        number: true,
        title: true,
        status: true,
        priority: true,
        assignee: { select: { id: true, name: true } },
        labels: { select: { label: { select: { name: true } } } },
      },
    }),
    refs.length && hasProjectAccess(subject, 'members:read')
      ? prisma.projectMembership.findMany({
          where: {
            projectId,
            OR: [{ userId: { in: refs } }, { user: { email: { in: refs.map((r) => r.toLowerCase()) } } }],
          },
          select: { user: { select: { id: true, name: true, email: true } } },
        })
      : Promise.resolve([]),
  ]);
  for (const p of held) {
    const number = issueNumberOf(p.args)!;
    const issue = issues.find((i) => i.number === number);
    if (!issue) {
      out.set(p.toolCallId, { kind: 'issue-missing', number });
      continue;
    }
    const ref = p.args.assignee;
    const member =
      typeof ref === 'string'
        ? members.find((m) => m.user.id === ref || m.user.email === ref.toLowerCase())?.user
        : undefined;
    out.set(p.toolCallId, {
      kind: 'issue',
      issue: {
        number: issue.number,
        title: issue.title,
        status: issue.status,
        priority: issue.priority,
        assignee: issue.assignee,
        labels: issue.labels.map((l) => l.label.name).sort((a, b) => a.localeCompare(b)),
      },
      ...(p.toolName !== 'assign_issue'
        ? {}
        : ref === null
          ? { proposedAssignee: null }
          : member
            ? { proposedAssignee: { id: member.id, name: member.name } }
            : {}),
    });
  }
  return out;
}

/**
 * Stores the step's held calls (approvals and questions) and returns one AG-UI interrupt per call
 * (an approval with what it would change).
 */
export async function persistPending(
  prisma: PrismaClient,
  input: {
    runId: string;
    conversationId: string;
    userId: string;
    pending: PendingCall[];
    ttlSeconds: number;
    /** The run's project and who asks (their role reads the previews). */
    projectId: string;
    subject: AccessSubject;
  },
): Promise<Interrupt[]> {
  const previews = await approvalPreviews(prisma, input.projectId, input.subject, input.pending);
  const expiresAt = new Date(Date.now() + input.ttlSeconds * 1000);
  const held = input.pending.map((p) => ({
    p,
    row: {
      id: newId('apr_'),
      runId: input.runId,
      conversationId: input.conversationId,
      userId: input.userId,
      toolCallId: p.toolCallId,
      toolName: p.toolName,
      args: p.args as Prisma.InputJsonValue,
      argsFingerprint: fingerprintArgs(p.args),
      reason: kindOf(p.kind).rowReason(p),
      kind: p.kind,
      expiresAt,
    },
  }));
  await prisma.agentPendingApproval.createMany({ data: held.map((h) => h.row) });
  return held.map(({ p, row }) => kindOf(p.kind).interrupt(p, row, previews.get(p.toolCallId)));
}

/** A pending row as the kinds build their interrupt from it. */
type HeldRow = { id: string; argsFingerprint: string; expiresAt: Date };

/** The interrupt of a held tool call (`tool_approval`). */
function approvalInterrupt(
  p: Extract<PendingCall, { kind: 'tool_approval' }>,
  row: HeldRow,
  preview?: ApprovalPreview,
): Interrupt {
  return {
    id: row.id,
    reason: INTERRUPT_KINDS.tool_approval.reason,
    message: summarizeCall(p.toolName, p.args),
    toolCallId: p.toolCallId,
    responseSchema: INTERRUPT_KINDS.tool_approval.answerJsonSchema,
    expiresAt: row.expiresAt.toISOString(),
    metadata: {
      toolName: p.toolName,
      args: p.args,
      argsFingerprint: row.argsFingerprint,
      approvalReason: p.decision.reason,
      why: p.decision.why,
      destructive: p.decision.reason === 'destructive',
      ...(p.inputSchema ? { inputSchema: p.inputSchema } : {}),
      ...(preview ? { preview } : {}),
      ...(p.decision.alwaysAllowable ? { canAlwaysAllow: true } : {}),
    },
  };
}

/** The interrupt of a question (`user_question`): its message, and its form as the answer's `content`. */
function questionInterrupt(p: Extract<PendingCall, { kind: 'user_question' }>, row: HeldRow): Interrupt {
  return {
    id: row.id,
    reason: INTERRUPT_KINDS.user_question.reason,
    message: p.args.message,
    toolCallId: p.toolCallId,
    responseSchema: questionResponseSchema(p.args.requestedSchema),
    expiresAt: row.expiresAt.toISOString(),
    metadata: { requestedSchema: p.args.requestedSchema },
  };
}

/** What every answered interrupt names: its row, its run and its tool call. */
interface DecisionBase {
  approvalId: string;
  /** The interrupted run this call belongs to. */
  runId: string;
  toolCallId: string;
  toolName: string;
}

/** An answered tool approval. */
interface ApprovalDecision extends DecisionBase {
  kind: 'tool_approval';
  approved: boolean;
  args: Record<string, unknown>;
  argsFingerprint: string;
  edited: boolean;
  /** A local tool (navigate, search_docs): runs in the server, not through the MCP endpoint. */
  local: boolean;
  feedback?: string;
  /** Approved with "always allow in this conversation": later calls of the tool run without asking. */
  alwaysInConversation?: boolean;
}

/** An answered question (`ask_user`): accepted with the form's content, or declined. */
interface QuestionDecision extends DecisionBase {
  kind: 'user_question';
  action: 'accept' | 'decline';
  content?: AnswerContent;
}

/** An answer, decided by its interrupt kind. */
export type Decision = ApprovalDecision | QuestionDecision;

/** How an answer is logged (`approval.decided`): approved, rejected, answered or declined. */
export function decisionOutcome(d: Decision): 'approved' | 'rejected' | 'answered' | 'declined' {
  if (d.kind === 'user_question') return d.action === 'accept' ? 'answered' : 'declined';
  return d.approved ? 'approved' : 'rejected';
}

type PendingRow = Awaited<ReturnType<PrismaClient['agentPendingApproval']['findMany']>>[number];

/** What settling an answer in the resumed run needs. */
export interface SettleContext {
  send: (e: AgentEvent) => void;
  trace: RunTrace;
  prisma: PrismaClient;
  projectId: string;
  mcp: { gateway: McpGateway; secret: string };
  keyId: string;
}

/** The server side of an interrupt kind. */
interface ServerInterruptKind<Answer, D extends Decision, P extends PendingCall> {
  /** The row's `reason` column for a held call (why it waits). */
  rowReason(p: P): string;
  /** The AG-UI interrupt of a held call. */
  interrupt(p: P, row: HeldRow, preview?: ApprovalPreview): Interrupt;
  /** Said when an answer does not match the kind's schema. */
  answerHint: string;
  /** The decision an answer makes (null: the user cancelled it), or the refusal (thrown). */
  decide(row: PendingRow, answer: Answer | null, policy: ResumePolicy): D;
  /** How the decision is stored on its row (one conditional update, with the others of the batch). */
  record(d: D): Prisma.AgentPendingApprovalUpdateManyMutationInput;
  /** Streams the decision and the tool's result in the resumed run. */
  settle(d: D, ctx: SettleContext): Promise<void>;
}

/** What deciding an answer asks of the resuming run's policy (the user's role and the project's permissions now). */
type ResumePolicy = Pick<RunToolPolicy, 'mayRun' | 'canAlwaysAllow' | 'version'>;

/** How long an approved call may take (it is not stopped by Stop, see settleApproval). */
const APPROVED_CALL_TIMEOUT_MS = 60_000;

/** Runs `fn` with a signal that aborts after `ms`; the timer ends with the call. */
async function withTimeout<T>(ms: number, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), ms);
  try {
    return await fn(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A tool approval answered: approved (with validated, re-fingerprinted arguments when edited, and
 * only while the role still grants the tool: approval never widens permissions) or rejected.
 */
function decideApproval(row: PendingRow, answer: ApprovalResponse | null, policy: ResumePolicy): ApprovalDecision {
  let args = row.args as Record<string, unknown>;
  let edited = false;
  const approved = answer?.approved === true;
  const feedback = answer?.feedback?.trim() || undefined;
  if (answer?.argsFingerprint && answer.argsFingerprint !== row.argsFingerprint) {
    throw new AgentRefusal(
      'INTERRUPT_FINGERPRINT_MISMATCH',
      'The request changed since you saw it. Reload and try again.',
    );
  }
  if (approved && answer?.args) {
    const check = toolInput(row.toolName)?.safeParse(answer.args);
    if (!check?.success) {
      throw new AgentRefusal('INTERRUPT_INVALID_ARGS', `The edited arguments are not valid for ${row.toolName}.`);
    }
    args = check.data as Record<string, unknown>;
    edited = fingerprintArgs(args) !== row.argsFingerprint;
  }
  if (approved && (!toolInput(row.toolName) || !policy.mayRun(row.toolName))) {
    throw new AgentRefusal('FORBIDDEN', 'Your role does not allow this action.');
  }
  // "Always allow in this conversation" only where the policy lets this tool ask (never for tools
  // that always ask); a rejection allows nothing.
  const always = approved && answer?.alwaysInConversation === true;
  if (always && !policy.canAlwaysAllow(row.toolName)) throw new AgentRefusal('ALWAYS_ALLOW_REFUSED');
  return {
    kind: 'tool_approval',
    approvalId: row.id,
    runId: row.runId,
    toolCallId: row.toolCallId,
    toolName: row.toolName,
    approved,
    args,
    argsFingerprint: fingerprintArgs(args),
    edited,
    local: isLocalTool(row.toolName),
    ...(feedback ? { feedback } : {}),
    ...(always ? { alwaysInConversation: true } : {}),
  };
}

/** Streams one decided approval: its decision, then the approved call's result or the rejection. */
async function settleApproval(d: ApprovalDecision, ctx: SettleContext): Promise<void> {
  ctx.send({
    type: 'CUSTOM',
    name: CUSTOM_EVENTS.approvalDecided,
    value: {
      toolCallId: d.toolCallId,
      decision: d.approved ? 'approved' : 'rejected',
      ...(d.edited ? { edited: true } : {}),
      ...(d.approved ? { args: d.args } : {}),
      ...(d.feedback ? { feedback: d.feedback } : {}),
      ...(d.alwaysInConversation ? { alwaysInConversation: true } : {}),
    },
  });
  let content: unknown;
  if (d.approved) {
    const endTool = ctx.trace.tool(d.toolName, d.toolCallId, { 'tool.approved': true });
    const res =
      d.local && isLocalTool(d.toolName)
        ? await runLocalTool(d.toolName, d.args, { prisma: ctx.prisma, projectId: ctx.projectId, emit: ctx.send })
        : // Not cut short by Stop: an approved change either happens or not, and its real outcome is
          // what the run records (a bounded wait instead, so a hung tool cannot hold the run).
          await withTimeout(APPROVED_CALL_TIMEOUT_MS, (signal) =>
            executeApproved({
              gateway: ctx.mcp.gateway,
              secret: ctx.mcp.secret,
              keyId: ctx.keyId,
              decision: d,
              signal,
            }),
          );
    await markConsumed(ctx.prisma, d.approvalId);
    content = d.edited && res && typeof res === 'object' ? { ...(res as object), executedWithEditedArgs: d.args } : res;
    endTool((res as { isError?: boolean })?.isError ? 'tool error' : undefined);
  } else {
    content = {
      rejected: true,
      message: 'The user rejected this call; it was not executed.',
      ...(d.feedback ? { feedback: d.feedback } : {}),
    };
  }
  ctx.send({
    type: 'TOOL_CALL_RESULT',
    messageId: newId('msg_'),
    toolCallId: d.toolCallId,
    content: capResult(content),
    role: 'tool',
  });
  const objects = d.approved ? changedObjects(d.toolName, d.args, content) : [];
  if (objects.length) {
    ctx.send({ type: 'CUSTOM', name: CUSTOM_EVENTS.changed, value: { toolCallId: d.toolCallId, objects } });
  }
}

/**
 * A question answered: declined (or cancelled), or accepted with content that fits the question's
 * form (types, required fields, choices, lengths, ranges, formats: `elicitation.ts`); an answer
 * that does not fit is refused (INTERRUPT_INVALID_ANSWER) with what is wrong, per field.
 */
function decideQuestion(row: PendingRow, answer: QuestionAnswer | null): QuestionDecision {
  const request = AskUserInputSchema.safeParse(row.args);
  if (!request.success) throw new AgentRefusal('INTERRUPT_UNKNOWN', 'This question can no longer be answered.');
  const base = { kind: 'user_question' as const, approvalId: row.id, runId: row.runId, toolCallId: row.toolCallId };
  if (answer?.action !== 'accept') return { ...base, toolName: row.toolName, action: 'decline' };
  const content = answer.content ?? {};
  const problems = answerProblems(request.data.requestedSchema, content);
  if (problems.length) {
    throw new AgentRefusal(
      'INTERRUPT_INVALID_ANSWER',
      `The answer does not fit the question. ${describeProblems(request.data.requestedSchema, problems)}`,
    );
  }
  return { ...base, toolName: row.toolName, action: 'accept', content };
}

/** Streams one answered question: the answer event, then the answer as the `ask_user` call's result. */
async function settleQuestion(d: QuestionDecision, ctx: SettleContext): Promise<void> {
  const answered: QuestionAnsweredValue = {
    toolCallId: d.toolCallId,
    action: d.action,
    ...(d.action === 'accept' ? { content: d.content ?? {} } : {}),
  };
  ctx.send({ type: 'CUSTOM', name: CUSTOM_EVENTS.questionAnswered, value: answered });
  ctx.send({
    type: 'TOOL_CALL_RESULT',
    messageId: newId('msg_'),
    toolCallId: d.toolCallId,
    content: capResult(questionResult(answered)),
    role: 'tool',
  });
  if (d.action === 'accept') await markConsumed(ctx.prisma, d.approvalId);
}

type AnyServerKind = ServerInterruptKind<unknown, Decision, PendingCall>;

/** The server side of every interrupt kind (`interrupt-kinds.ts`): a kind without one does not build. */
const SERVER_KINDS: {
  [K in InterruptKind]: ServerInterruptKind<
    InterruptAnswer[K],
    Extract<Decision, { kind: K }>,
    Extract<PendingCall, { kind: K }>
  >;
} = {
  tool_approval: {
    rowReason: (p) => p.decision.reason,
    interrupt: approvalInterrupt,
    answerHint: 'Each answer needs {approved, args?, feedback?}.',
    decide: decideApproval,
    record: (d) => ({
      status: d.approved ? 'APPROVED' : 'REJECTED',
      decidedArgs: d.edited ? (d.args as Prisma.InputJsonValue) : Prisma.DbNull,
      feedback: d.feedback ?? null,
    }),
    settle: settleApproval,
  },
  // A question's row: APPROVED when answered (the content in `answer`, CONSUMED once the run has it
  // as the call's result), REJECTED when declined, EXPIRED when nobody answered.
  user_question: {
    rowReason: () => 'question',
    interrupt: questionInterrupt,
    answerHint: 'Each answer needs {action: "accept" | "decline", content?}.',
    decide: decideQuestion,
    record: (d) => ({
      status: d.action === 'accept' ? 'APPROVED' : 'REJECTED',
      answer: d.action === 'accept' ? ((d.content ?? {}) as Prisma.InputJsonValue) : Prisma.DbNull,
    }),
    settle: settleQuestion,
  },
};

/** The server side of `kind`, for code that handles every kind alike. */
function kindOf(kind: InterruptKind): AnyServerKind {
  return SERVER_KINDS[kind] as unknown as AnyServerKind;
}

/** Streams one answered interrupt in the resumed run, as its kind settles it. */
export function settleInterrupt(d: Decision, ctx: SettleContext): Promise<void> {
  return kindOf(d.kind).settle(d, ctx);
}

/** What a tool's approved arguments are validated against (null: a tool the module does not know). */
function toolInput(name: string): { safeParse(v: unknown): { success: boolean; data?: unknown } } | null {
  if (isLocalTool(name)) return LOCAL_TOOL_DECLARATIONS[name].input;
  return MCP_TOOL_METADATA.find((t) => t.name === name)?.inputSchema ?? null;
}

/**
 * Validates a resume against the stored rows and consumes them in one transaction: same user, same
 * conversation, PENDING, not expired, every pending call of the batch answered exactly once, edited
 * args valid for the tool, the tool still within the user's role. Two concurrent resumes cannot
 * both pass: the claim is a conditional update whose row count must match.
 *
 * Another user's interrupt, or one of another conversation, is answered exactly like an id that
 * does not exist (INTERRUPT_UNKNOWN, 404), so a guessed id reveals nothing.
 *
 * `argsFingerprint` in an answer is optional: a stored row's args never change, and the server
 * executes exactly those (or the validated edited ones), so the fingerprint adds nothing to the
 * server's guarantee. A client that sends it (the panel does) gets a refusal when it does not
 * match the row (INTERRUPT_FINGERPRINT_MISMATCH): the card it showed was not this request.
 *
 * `resumingRunId`: the new run, recorded as resumed from the interrupted one in the same
 * transaction.
 */
export async function consumeResume(
  prisma: PrismaClient,
  input: {
    conversationId: string;
    userId: string;
    /** The resuming run's tool policy (the user's role and the project's tool permissions now). */
    policy: ResumePolicy;
    entries: ResumeEntry[];
    resumingRunId?: string;
  },
): Promise<Decision[]> {
  const ids = input.entries.map((e) => e.interruptId);
  if (new Set(ids).size !== ids.length)
    throw new AgentRefusal('INTERRUPT_ANSWER_DUPLICATE', 'Each approval can be answered only once.');
  const found = await prisma.agentPendingApproval.findMany({ where: { id: { in: ids } } });
  const rows = found.filter((r) => r.userId === input.userId && r.conversationId === input.conversationId);
  if (rows.length !== ids.length) throw new AgentRefusal('INTERRUPT_UNKNOWN', 'This approval request does not exist.');
  for (const r of rows) {
    // Expired by the housekeeping at its expiry: it says so, like one found lapsed here.
    if (r.status === 'EXPIRED' && r.expiresAt.getTime() <= Date.now())
      throw new AgentRefusal('INTERRUPT_EXPIRED', 'This approval request expired. Ask again to retry.');
    if (r.status !== 'PENDING')
      throw new AgentRefusal('INTERRUPT_ALREADY_DECIDED', 'This request was already answered.');
  }
  const now = Date.now();
  if (rows.some((r) => r.expiresAt.getTime() <= now)) {
    await prisma.agentPendingApproval.updateMany({
      where: { id: { in: ids }, status: 'PENDING' },
      data: { status: 'EXPIRED', decidedAt: new Date() },
    });
    throw new AgentRefusal('INTERRUPT_EXPIRED', 'This approval request expired. Ask again to retry.');
  }
  // Every pending call of the batch (same run) must be answered.
  const runIds = [...new Set(rows.map((r) => r.runId))];
  const batch = await prisma.agentPendingApproval.findMany({
    where: { runId: { in: runIds }, status: 'PENDING' },
    select: { id: true },
  });
  const answered = new Set(ids);
  if (batch.some((b) => !answered.has(b.id))) {
    throw new AgentRefusal('INTERRUPT_ANSWER_MISSING', 'Answer every pending request of this batch in one go.');
  }

  const decisions: Decision[] = [];
  for (const entry of input.entries) {
    const row = rows.find((r) => r.id === entry.interruptId)!;
    const kind = interruptKindOf(row.kind);
    if (!kind) throw new AgentRefusal('INTERRUPT_UNKNOWN', 'This request is of a kind this server cannot answer.');
    let answer: unknown = null;
    if (entry.status === 'resolved') {
      const parsed = INTERRUPT_KINDS[kind].answer.safeParse(entry.payload);
      if (!parsed.success) throw new AgentRefusal('INVALID_REQUEST', kindOf(kind).answerHint);
      answer = parsed.data;
    }
    decisions.push(kindOf(kind).decide(row, answer, input.policy));
  }

  await prisma.$transaction(async (tx) => {
    const decidedAt = new Date();
    for (const d of decisions) {
      const res = await tx.agentPendingApproval.updateMany({
        where: { id: d.approvalId, status: 'PENDING', expiresAt: { gt: decidedAt } },
        data: { ...kindOf(d.kind).record(d), decidedAt },
      });
      if (res.count !== 1) throw new AgentRefusal('INTERRUPT_ALREADY_DECIDED', 'This request was already answered.');
    }
    if (input.resumingRunId && decisions[0]) {
      await tx.agentRun.update({ where: { id: input.resumingRunId }, data: { resumedFromId: decisions[0].runId } });
    }
    // "Always allow in this conversation", kept with the tool-permission version it was given
    // under (a new version ends it) and the approval that gave it (the audit page lists both).
    const allows = decisions.filter(
      (d): d is ApprovalDecision => d.kind === 'tool_approval' && d.alwaysInConversation === true,
    );
    if (allows.length) {
      await tx.agentConversationAllow.createMany({
        data: allows.map((d) => ({
          id: newId('alw_'),
          conversationId: input.conversationId,
          userId: input.userId,
          toolName: d.toolName,
          policyVersion: input.policy.version,
          approvalId: d.approvalId,
        })),
      });
    }
  });
  return decisions;
}

/**
 * The answers a resume gave, read back from the interrupted run's rows (a run taken over before it
 * settled them): each is settled again, and an approved call that already ran returns its stored
 * result (the ledger of the product's tools).
 */
export async function decisionsOf(prisma: PrismaClient, interruptedRunId: string): Promise<Decision[]> {
  const rows = await prisma.agentPendingApproval.findMany({
    where: { runId: interruptedRunId, status: { in: ['APPROVED', 'REJECTED', 'CONSUMED'] } },
    orderBy: { createdAt: 'asc' },
  });
  const decisions: Decision[] = [];
  for (const r of rows) {
    const kind = interruptKindOf(r.kind);
    if (!kind) continue;
    const base = { approvalId: r.id, runId: r.runId, toolCallId: r.toolCallId, toolName: r.toolName };
    if (kind === 'user_question') {
      decisions.push(
        r.status === 'REJECTED'
          ? { kind, ...base, action: 'decline' }
          : { kind, ...base, action: 'accept', content: (r.answer ?? {}) as AnswerContent },
      );
      continue;
    }
    const args = (r.decidedArgs ?? r.args) as Record<string, unknown>;
    decisions.push({
      kind,
      approvalId: r.id,
      runId: r.runId,
      toolCallId: r.toolCallId,
      toolName: r.toolName,
      approved: r.status !== 'REJECTED',
      args,
      argsFingerprint: fingerprintArgs(args),
      edited: r.decidedArgs !== null,
      local: isLocalTool(r.toolName),
      ...(r.feedback ? { feedback: r.feedback } : {}),
    });
  }
  return decisions;
}

async function markConsumed(prisma: PrismaClient, approvalId: string): Promise<void> {
  await prisma.agentPendingApproval.updateMany({
    where: { id: approvalId, status: 'APPROVED' },
    data: { status: 'CONSUMED' },
  });
}

/** Executes one approved call through the product's MCP server with a single-use override. */
async function executeApproved(input: {
  gateway: McpGateway;
  secret: string;
  keyId: string;
  decision: ApprovalDecision;
  signal: AbortSignal;
}): Promise<unknown> {
  const token = mintOverride({
    tool: input.decision.toolName,
    argsFingerprint: input.decision.argsFingerprint,
    keyId: input.keyId,
  });
  try {
    return await input.gateway.callTool(
      input.secret,
      {
        name: input.decision.toolName,
        args: input.decision.args,
        meta: { [OVERRIDE_META_KEY]: token, [TOOL_CALL_META_KEY]: input.decision.toolCallId },
      },
      input.signal,
    );
  } catch (err) {
    return { isError: true, error: (err as Error).message || 'Tool failed.' };
  }
}

/** A tool call whose approval (or question) never got its result, closed with a synthetic one. */
export interface AbandonedCall {
  toolCallId: string;
  toolName: string;
  /**
   * The decision event to stream first (`approval-decided`, or `question-answered` for a question),
   * when replay does not already hold one.
   */
  decided?:
    | { name: typeof CUSTOM_EVENTS.approvalDecided; value: ApprovalDecidedValue }
    | { name: typeof CUSTOM_EVENTS.questionAnswered; value: QuestionAnsweredValue };
  /** The synthetic tool result. */
  result: Record<string, unknown>;
}

/**
 * Every approval whose tool call is in the conversation but has no result yet gets one, so each
 * tool call has exactly one result and the model sees a consistent history:
 * - PENDING or EXPIRED (the user moved on without answering): closed as expired, not executed;
 * - REJECTED (the process stopped after the decision): the rejection, with the user's feedback;
 * - APPROVED or CONSUMED (the process stopped between the decision and the result): the audit log
 *   says whether the call ran; without an audit row the outcome is reported as unknown. The run's
 *   key is revoked and the override was single-use, so it can never run later.
 * A question (`ask_user`) is closed the same way with what its row holds: not answered (expired),
 * declined, or the stored answer.
 * Rows whose call never streamed (nothing to attach a result to) are closed in the database when
 * the conversation has a call to close anyway.
 */
export async function closeAbandoned(
  prisma: PrismaClient,
  conversationId: string,
  view: ConversationView,
): Promise<AbandonedCall[]> {
  const resolved = new Set<string>();
  const calls = new Set<string>();
  for (const m of view.messages) {
    if (m.role === 'tool') resolved.add(m.toolCallId);
    else if (m.role === 'assistant') for (const tc of m.toolCalls) calls.add(tc.id);
  }
  // Only a call without a result can be closed; when there is none (the usual case) the rows are
  // not read at all.
  if ([...calls].every((id) => resolved.has(id))) return [];
  const rows = await prisma.agentPendingApproval.findMany({
    where: { conversationId },
    orderBy: { createdAt: 'asc' },
    select: {
      id: true,
      kind: true,
      runId: true,
      toolCallId: true,
      toolName: true,
      status: true,
      args: true,
      decidedArgs: true,
      feedback: true,
      answer: true,
    },
  });
  const open = rows.filter((r) => !resolved.has(r.toolCallId));
  if (!open.length) return [];
  const now = new Date();
  const pendingIds = open.filter((r) => r.status === 'PENDING').map((r) => r.id);
  const approvedIds = open.filter((r) => r.status === 'APPROVED').map((r) => r.id);
  if (pendingIds.length)
    await prisma.agentPendingApproval.updateMany({
      where: { id: { in: pendingIds }, status: 'PENDING' },
      data: { status: 'EXPIRED', decidedAt: now },
    });
  if (approvedIds.length)
    await prisma.agentPendingApproval.updateMany({
      where: { id: { in: approvedIds }, status: 'APPROVED' },
      data: { status: 'CONSUMED' },
    });

  const out: AbandonedCall[] = [];
  for (const r of open) {
    if (!calls.has(r.toolCallId)) continue;
    if (interruptKindOf(r.kind) === 'user_question') {
      const answered: QuestionAnsweredValue =
        r.status === 'PENDING' || r.status === 'EXPIRED'
          ? { toolCallId: r.toolCallId, action: 'expired' }
          : r.status === 'REJECTED'
            ? { toolCallId: r.toolCallId, action: 'decline' }
            : { toolCallId: r.toolCallId, action: 'accept', content: (r.answer ?? {}) as AnswerContent };
      out.push({
        toolCallId: r.toolCallId,
        toolName: r.toolName,
        ...(view.answers?.[r.toolCallId] ? {} : { decided: { name: CUSTOM_EVENTS.questionAnswered, value: answered } }),
        result: questionResult(view.answers?.[r.toolCallId] ?? answered),
      });
      continue;
    }
    const known = view.decisions[r.toolCallId];
    // The decision event goes out only when replay does not already hold one.
    const close = (value: ApprovalDecidedValue, result: Record<string, unknown>) =>
      out.push({
        toolCallId: r.toolCallId,
        toolName: r.toolName,
        ...(known ? {} : { decided: { name: CUSTOM_EVENTS.approvalDecided, value } }),
        result,
      });
    if (r.status === 'PENDING' || r.status === 'EXPIRED') {
      close(
        { toolCallId: r.toolCallId, decision: 'expired' },
        { rejected: true, expired: true, message: 'The user did not approve this call; it was not executed.' },
      );
    } else if (r.status === 'REJECTED') {
      const feedback = r.feedback ? { feedback: r.feedback } : {};
      close(
        { toolCallId: r.toolCallId, decision: 'rejected', ...feedback },
        { rejected: true, message: 'The user rejected this call; it was not executed.', ...feedback },
      );
    } else {
      const args = (r.decidedArgs ?? r.args ?? {}) as Record<string, unknown>;
      // Any key can write an audit row with any tool-call id: only a row written by this
      // conversation's own run key counts — the run that asked (r.runId) or the run that resumed
      // it and executed the approved call — in the conversation's project.
      type AuditOutcome = { status: string; errorCode: string | null; resultPreview: string };
      const [audit] = await prisma.$queryRaw<AuditOutcome[]>`
        SELECT a."status", a."errorCode", a."resultPreview"
        FROM "ToolCallAudit" a
        JOIN "AgentRun" run ON run."id" = a."runId"
        JOIN "AgentConversation" c ON c."id" = run."conversationId" AND c."projectId" = a."projectId"
        WHERE a."toolCallId" = ${r.toolCallId} AND a."tool" = ${r.toolName} AND c."id" = ${conversationId}
          AND (run."id" = ${r.runId} OR run."resumedFromId" = ${r.runId})
        ORDER BY a."startedAt" DESC
        LIMIT 1`;
      const result: Record<string, unknown> = !audit
        ? {
            isError: true,
            outcomeUnknown: true,
            message:
              'The assistant stopped before this approved call was confirmed. It may or may not have run: check before trying again.',
          }
        : audit.status === 'OK'
          ? {
              executed: true,
              message: 'This approved call ran, but its result was lost when the assistant stopped.',
              resultPreview: audit.resultPreview,
            }
          : {
              isError: true,
              executed: false,
              message: 'This approved call failed.',
              error: audit.errorCode ?? audit.status,
            };
      close(
        { toolCallId: r.toolCallId, decision: 'approved', ...(r.decidedArgs ? { edited: true } : {}), args },
        result,
      );
    }
  }
  return out;
}
