/**
 * Pending approvals: persist them as AG-UI interrupts, validate and consume resume answers once,
 * and execute approved calls through the MCP server with a single-use signed override.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { MCP_TOOL_METADATA } from '@/features/mcp/registry';
import { fingerprintArgs, mintOverride, OVERRIDE_META_KEY, TOOL_CALL_META_KEY } from '@/features/mcp/override';
import { Prisma, type PrismaClient } from '@/generated/prisma/client';
import { newId } from '@/server/ids';
import { hasProjectAccess, type AccessSubject } from '@/server/rbac';
import { INTERRUPT_REASON_TOOL_APPROVAL, type AgentErrorCode } from '../constants';
import {
  APPROVAL_RESPONSE_JSON_SCHEMA,
  ApprovalResponseSchema,
  type ConversationView,
  type ResumeEntry,
  type ToolApprovalInterrupt,
} from '../schema';
import type { PendingCall } from './agent';

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

export function summarize(toolName: string, args: Record<string, unknown>): string {
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
  toolCallId: string;
  toolName: string;
  approved: boolean;
  args: Record<string, unknown>;
  argsFingerprint: string;
  edited: boolean;
  feedback?: string;
}

/**
 * Validates a resume against the stored rows and consumes them in one transaction: same user, same
 * conversation, PENDING, not expired, every pending call of the batch answered exactly once, edited
 * args valid for the tool, the tool still within the user's role. Two concurrent resumes cannot
 * both pass: the claim is a conditional update whose row count must match.
 */
export async function consumeResume(
  prisma: PrismaClient,
  input: { conversationId: string; userId: string; subject: AccessSubject; entries: ResumeEntry[] },
): Promise<Decision[]> {
  const ids = input.entries.map((e) => e.interruptId);
  if (new Set(ids).size !== ids.length) throw new ResumeError('INTERRUPT_ANSWER_DUPLICATE', 400, 'Each approval can be answered only once.');
  const rows = await prisma.agentPendingApproval.findMany({ where: { id: { in: ids } } });
  if (rows.length !== ids.length) throw new ResumeError('INTERRUPT_UNKNOWN', 404, 'This approval request does not exist.');
  for (const r of rows) {
    if (r.userId !== input.userId || r.conversationId !== input.conversationId) {
      throw new ResumeError('INTERRUPT_NOT_YOURS', 404, 'This approval request does not exist.');
    }
  }
  for (const r of rows) if (r.status !== 'PENDING') throw new ResumeError('INTERRUPT_ALREADY_DECIDED', 409, 'This request was already answered.');
  const now = Date.now();
  if (rows.some((r) => r.expiresAt.getTime() <= now)) {
    await prisma.agentPendingApproval.updateMany({ where: { id: { in: ids }, status: 'PENDING' }, data: { status: 'EXPIRED', decidedAt: new Date() } });
    throw new ResumeError('INTERRUPT_EXPIRED', 410, 'This approval request expired. Ask again to retry.');
  }
  // Every pending call of the batch (same run) must be answered.
  const runIds = [...new Set(rows.map((r) => r.runId))];
  const batch = await prisma.agentPendingApproval.findMany({ where: { runId: { in: runIds }, status: 'PENDING' }, select: { id: true } });
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
      if (!parsed.success) throw new ResumeError('INVALID_REQUEST', 400, 'Each answer needs {approved, args?, feedback?}.');
      approved = parsed.data.approved;
      feedback = parsed.data.feedback?.trim() || undefined;
      if (parsed.data.argsFingerprint && parsed.data.argsFingerprint !== row.argsFingerprint) {
        throw new ResumeError('INTERRUPT_FINGERPRINT_MISMATCH', 409, 'The request changed since you saw it. Reload and try again.');
      }
      if (approved && parsed.data.args) {
        const tool = MCP_TOOL_METADATA.find((t) => t.name === row.toolName);
        const check = tool?.inputSchema.safeParse(parsed.data.args);
        if (!check || !check.success) {
          throw new ResumeError('INTERRUPT_INVALID_ARGS', 400, `The edited arguments are not valid for ${row.toolName}.`);
        }
        args = check.data as Record<string, unknown>;
        edited = fingerprintArgs(args) !== row.argsFingerprint;
      }
    }
    if (approved) {
      // Approval never widens permissions: the role must still grant the tool.
      const tool = MCP_TOOL_METADATA.find((t) => t.name === row.toolName);
      if (!tool || !hasProjectAccess(input.subject, tool.scope)) {
        throw new ResumeError('FORBIDDEN', 403, 'Your role does not allow this action.');
      }
    }
    decisions.push({
      approvalId: row.id,
      toolCallId: row.toolCallId,
      toolName: row.toolName,
      approved,
      args,
      argsFingerprint: fingerprintArgs(args),
      edited,
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
      if (res.count !== 1) throw new ResumeError('INTERRUPT_ALREADY_DECIDED', 409, 'This request was already answered.');
    }
  });
  return decisions;
}

export async function markConsumed(prisma: PrismaClient, approvalId: string): Promise<void> {
  await prisma.agentPendingApproval.updateMany({ where: { id: approvalId, status: 'APPROVED' }, data: { status: 'CONSUMED' } });
}

/** Executes one approved call through the product's MCP server with a single-use override. */
export async function executeApproved(
  input: { mcpUrl: string; secret: string; keyId: string; decision: Decision; signal: AbortSignal },
): Promise<unknown> {
  const token = mintOverride({ tool: input.decision.toolName, argsFingerprint: input.decision.argsFingerprint, keyId: input.keyId });
  const client = new Client({ name: 'in-app-agent', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(input.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${input.secret}` } },
  });
  try {
    await client.connect(transport, { signal: input.signal });
    const res = await client.callTool(
      {
        name: input.decision.toolName,
        arguments: input.decision.args,
        _meta: { [OVERRIDE_META_KEY]: token, [TOOL_CALL_META_KEY]: input.decision.toolCallId },
      },
      undefined,
      { signal: input.signal },
    );
    const text = (res.content as Array<{ type: string; text?: string }> | undefined)?.filter((c) => c.type === 'text').map((c) => c.text ?? '').join('\n');
    if (res.isError) return { isError: true, error: text || 'Tool failed.' };
    return res.structuredContent ?? (text ? safeJson(text) : {});
  } catch (err) {
    return { isError: true, error: (err as Error).message || 'Tool failed.' };
  } finally {
    await client.close().catch(() => undefined);
  }
}

function safeJson(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch {
    return { text: s };
  }
}

/**
 * Approvals left unanswered (pending, or expired and never resolved) whose tool call has no
 * result yet: the user moved on. They are closed as expired so the history stays consistent.
 */
export async function closeAbandoned(
  prisma: PrismaClient,
  conversationId: string,
  view: ConversationView,
): Promise<Array<{ toolCallId: string; toolName: string }>> {
  const resolved = new Set(view.messages.filter((m) => m.role === 'tool').map((m) => (m as { toolCallId: string }).toolCallId));
  const rows = await prisma.agentPendingApproval.findMany({
    where: { conversationId, status: { in: ['PENDING', 'EXPIRED'] } },
    select: { id: true, toolCallId: true, toolName: true },
  });
  const open = rows.filter((r) => !resolved.has(r.toolCallId));
  if (open.length) {
    await prisma.agentPendingApproval.updateMany({
      where: { id: { in: open.map((r) => r.id) }, status: 'PENDING' },
      data: { status: 'EXPIRED', decidedAt: new Date() },
    });
  }
  return open.map((r) => ({ toolCallId: r.toolCallId, toolName: r.toolName }));
}
