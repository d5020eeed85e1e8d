/**
 * Pending approvals: persist them as AG-UI interrupts, validate and consume resume answers once,
 * and execute approved calls through the MCP server with a single-use signed override.
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
  type Scope,
  TOOL_CALL_META_KEY,
} from '../host';
import { INTERRUPT_REASON_TOOL_APPROVAL, type AgentErrorCode } from '../constants';
import {
  APPROVAL_RESPONSE_JSON_SCHEMA,
  ApprovalResponseSchema,
  type ApprovalDecidedValue,
  type ConversationView,
  type ResumeEntry,
  type ToolApprovalInterrupt,
} from '../schema';
import type { PendingCall } from './agent';
import type { McpGateway } from './mcp-gateway';
import { isLocalTool, LOCAL_TOOL_INPUTS } from './tools';

export class ResumeError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const SUMMARIES: Record<string, (a: Record<string, unknown>) => string> = {
  create_issue: (a) => `Create an issue titled “${String(a.title ?? '')}”`,
  update_issue: (a) => `Update issue #${String(a.number ?? '?')}`,
  add_comment: (a) => `Comment on issue #${String(a.number ?? '?')}`,
  assign_issue: (a) => `Assign issue #${String(a.number ?? '?')}`,
  close_issue: (a) => `Close issue #${String(a.number ?? '?')}`,
  delete_issue: (a) => `Delete issue #${String(a.number ?? '?')} permanently`,
  notify_webhook: () => "Send a message to the project's webhook",
};

function summarize(toolName: string, args: Record<string, unknown>): string {
  return SUMMARIES[toolName]?.(args) ?? `Run ${toolName}`;
}

/** Stores the step's held calls and returns one AG-UI interrupt per call. */
export async function persistPending(
  prisma: PrismaClient,
  input: { runId: string; conversationId: string; userId: string; pending: PendingCall[]; ttlSeconds: number },
): Promise<ToolApprovalInterrupt[]> {
  const expiresAt = new Date(Date.now() + input.ttlSeconds * 1000);
  const rows = input.pending.map((p) => ({
    id: newId('apr_'),
    runId: input.runId,
    conversationId: input.conversationId,
    userId: input.userId,
    toolCallId: p.toolCallId,
    toolName: p.toolName,
    args: p.args as Prisma.InputJsonValue,
    argsFingerprint: fingerprintArgs(p.args),
    reason: p.decision.reason,
    expiresAt,
  }));
  await prisma.agentPendingApproval.createMany({ data: rows });
  return rows.map((r, i) => {
    const p = input.pending[i]!;
    return {
      id: r.id,
      reason: INTERRUPT_REASON_TOOL_APPROVAL,
      message: summarize(p.toolName, p.args),
      toolCallId: p.toolCallId,
      responseSchema: APPROVAL_RESPONSE_JSON_SCHEMA as unknown as Record<string, unknown>,
      expiresAt: expiresAt.toISOString(),
      metadata: {
        toolName: p.toolName,
        args: p.args,
        argsFingerprint: r.argsFingerprint,
        approvalReason: p.decision.reason,
        why: p.decision.why,
        destructive: p.decision.reason === 'destructive',
        ...(p.inputSchema ? { inputSchema: p.inputSchema } : {}),
      },
    };
  });
}

export interface Decision {
  approvalId: string;
  /** The interrupted run this call belongs to. */
  runId: string;
  toolCallId: string;
  toolName: string;
  approved: boolean;
  args: Record<string, unknown>;
  argsFingerprint: string;
  edited: boolean;
  /** A local tool (navigate, search_docs): runs in the server, not through the MCP endpoint. */
  local: boolean;
  feedback?: string;
}

/** What a tool's approved arguments are validated against, and the scope it needs (null: none beyond agent:use). */
function toolContract(
  name: string,
): { input: { safeParse(v: unknown): { success: boolean; data?: unknown } }; scope: Scope | null } | null {
  if (isLocalTool(name)) return { input: LOCAL_TOOL_INPUTS[name], scope: null };
  const tool = MCP_TOOL_METADATA.find((t) => t.name === name);
  return tool ? { input: tool.inputSchema, scope: tool.scope } : null;
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
    subject: AccessSubject;
    entries: ResumeEntry[];
    resumingRunId?: string;
  },
): Promise<Decision[]> {
  const ids = input.entries.map((e) => e.interruptId);
  if (new Set(ids).size !== ids.length)
    throw new ResumeError('INTERRUPT_ANSWER_DUPLICATE', 400, 'Each approval can be answered only once.');
  const found = await prisma.agentPendingApproval.findMany({ where: { id: { in: ids } } });
  const rows = found.filter((r) => r.userId === input.userId && r.conversationId === input.conversationId);
  if (rows.length !== ids.length)
    throw new ResumeError('INTERRUPT_UNKNOWN', 404, 'This approval request does not exist.');
  for (const r of rows)
    if (r.status !== 'PENDING')
      throw new ResumeError('INTERRUPT_ALREADY_DECIDED', 409, 'This request was already answered.');
  const now = Date.now();
  if (rows.some((r) => r.expiresAt.getTime() <= now)) {
    await prisma.agentPendingApproval.updateMany({
      where: { id: { in: ids }, status: 'PENDING' },
      data: { status: 'EXPIRED', decidedAt: new Date() },
    });
    throw new ResumeError('INTERRUPT_EXPIRED', 410, 'This approval request expired. Ask again to retry.');
  }
  // Every pending call of the batch (same run) must be answered.
  const runIds = [...new Set(rows.map((r) => r.runId))];
  const batch = await prisma.agentPendingApproval.findMany({
    where: { runId: { in: runIds }, status: 'PENDING' },
    select: { id: true },
  });
  const answered = new Set(ids);
  if (batch.some((b) => !answered.has(b.id))) {
    throw new ResumeError('INTERRUPT_ANSWER_MISSING', 400, 'Answer every pending request of this batch in one go.');
  }

  const decisions: Decision[] = [];
  for (const entry of input.entries) {
    const row = rows.find((r) => r.id === entry.interruptId)!;
    const storedArgs = row.args as Record<string, unknown>;
    let approved = false;
    let feedback: string | undefined;
    let args = storedArgs;
    let edited = false;
    if (entry.status === 'resolved') {
      const parsed = ApprovalResponseSchema.safeParse(entry.payload);
      if (!parsed.success)
        throw new ResumeError('INVALID_REQUEST', 400, 'Each answer needs {approved, args?, feedback?}.');
      approved = parsed.data.approved;
      feedback = parsed.data.feedback?.trim() || undefined;
      if (parsed.data.argsFingerprint && parsed.data.argsFingerprint !== row.argsFingerprint) {
        throw new ResumeError(
          'INTERRUPT_FINGERPRINT_MISMATCH',
          409,
          'The request changed since you saw it. Reload and try again.',
        );
      }
      if (approved && parsed.data.args) {
        const check = toolContract(row.toolName)?.input.safeParse(parsed.data.args);
        if (!check?.success) {
          throw new ResumeError(
            'INTERRUPT_INVALID_ARGS',
            400,
            `The edited arguments are not valid for ${row.toolName}.`,
          );
        }
        args = check.data as Record<string, unknown>;
        edited = fingerprintArgs(args) !== row.argsFingerprint;
      }
    }
    if (approved) {
      // Approval never widens permissions: the role must still grant the tool.
      const contract = toolContract(row.toolName);
      if (!contract || (contract.scope !== null && !hasProjectAccess(input.subject, contract.scope))) {
        throw new ResumeError('FORBIDDEN', 403, 'Your role does not allow this action.');
      }
    }
    decisions.push({
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
    });
  }

  await prisma.$transaction(async (tx) => {
    const decidedAt = new Date();
    for (const d of decisions) {
      const res = await tx.agentPendingApproval.updateMany({
        where: { id: d.approvalId, status: 'PENDING', expiresAt: { gt: decidedAt } },
        data: {
          status: d.approved ? 'APPROVED' : 'REJECTED',
          decidedArgs: d.edited ? (d.args as Prisma.InputJsonValue) : Prisma.DbNull,
          feedback: d.feedback ?? null,
          decidedAt,
        },
      });
      if (res.count !== 1)
        throw new ResumeError('INTERRUPT_ALREADY_DECIDED', 409, 'This request was already answered.');
    }
    if (input.resumingRunId && decisions[0]) {
      await tx.agentRun.update({ where: { id: input.resumingRunId }, data: { resumedFromId: decisions[0].runId } });
    }
  });
  return decisions;
}

export async function markConsumed(prisma: PrismaClient, approvalId: string): Promise<void> {
  await prisma.agentPendingApproval.updateMany({
    where: { id: approvalId, status: 'APPROVED' },
    data: { status: 'CONSUMED' },
  });
}

/** Executes one approved call through the product's MCP server with a single-use override. */
export async function executeApproved(input: {
  gateway: McpGateway;
  secret: string;
  keyId: string;
  decision: Decision;
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

/** A tool call whose approval never got its result, closed with a synthetic one. */
export interface AbandonedCall {
  toolCallId: string;
  toolName: string;
  /** The decision event to stream first, when replay does not already hold one. */
  decided?: ApprovalDecidedValue;
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
      runId: true,
      toolCallId: true,
      toolName: true,
      status: true,
      args: true,
      decidedArgs: true,
      feedback: true,
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
    const known = view.decisions[r.toolCallId];
    // The decision event goes out only when replay does not already hold one.
    const close = (decided: ApprovalDecidedValue, result: Record<string, unknown>) =>
      out.push({ toolCallId: r.toolCallId, toolName: r.toolName, ...(known ? {} : { decided }), result });
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
