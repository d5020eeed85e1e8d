/**
 * The tool-call audit trail: one `ToolCallAudit` row per `tools/call` (allowed, denied or failed),
 * and the query behind the project's audit page.
 */
import { z } from 'zod';
import type { PrismaClient, ToolCallStatus } from '@/generated/prisma/client';
import { newId } from '@/server/ids';

export const PREVIEW_CHARS = 500;

/** Compact JSON of a value, cut to `max` characters (an ellipsis marks the cut). */
export function preview(value: unknown, max = PREVIEW_CHARS): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  } catch {
    text = '[unserializable]';
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface AuditEntry {
  projectId: string;
  apiKeyId: string | null;
  userId: string | null;
  runId: string | null;
  toolCallId: string | null;
  tool: string;
  status: ToolCallStatus;
  errorCode: string | null;
  args: unknown;
  result: unknown;
  startedAt: Date;
  durationMs: number;
}

/** Writes one audit row. A failure to audit is logged (without payloads) and never breaks the call. */
export async function writeAudit(prisma: PrismaClient, e: AuditEntry): Promise<void> {
  try {
    await prisma.toolCallAudit.create({
      data: {
        id: newId('aud_'),
        projectId: e.projectId,
        apiKeyId: e.apiKeyId,
        userId: e.userId,
        runId: e.runId,
        toolCallId: e.toolCallId ? e.toolCallId.slice(0, 200) : null,
        tool: e.tool.slice(0, 100),
        status: e.status,
        errorCode: e.errorCode,
        argsPreview: preview(e.args),
        resultPreview: preview(e.result),
        durationMs: Math.max(0, Math.round(e.durationMs)),
        startedAt: e.startedAt,
      },
    });
  } catch (err) {
    console.error(`[mcp] audit write failed for tool ${e.tool}: ${(err as Error).name}`);
  }
}

export const AUDIT_STATUSES = ['OK', 'ERROR', 'DENIED'] as const;

export const AuditListInput = z
  .object({
    tool: z.string().trim().min(1).max(100).optional(),
    status: z.enum(AUDIT_STATUSES).optional(),
    runId: z.string().trim().min(1).max(100).optional(),
    /** Id of the last row of the previous page. */
    cursor: z.string().min(1).max(100).optional(),
    limit: z.number().int().min(1).max(100).default(50),
  })
  .strict();
export type AuditListFilters = z.input<typeof AuditListInput>;

export interface AuditRow {
  id: string;
  tool: string;
  status: ToolCallStatus;
  errorCode: string | null;
  keyKind: 'PROJECT' | 'IN_APP_AGENT' | null;
  keyName: string | null;
  userId: string | null;
  userName: string | null;
  runId: string | null;
  toolCallId: string | null;
  argsPreview: string;
  resultPreview: string;
  durationMs: number;
  startedAt: Date;
}

/** The project's audit trail, newest first, with optional filters and keyset pagination. */
export async function listAudit(
  prisma: PrismaClient,
  projectId: string,
  filters: AuditListFilters = {},
): Promise<{ items: AuditRow[]; nextCursor: string | null }> {
  const f = AuditListInput.parse(filters);
  let cursorRow: { id: string; startedAt: Date } | null = null;
  if (f.cursor) {
    cursorRow = await prisma.toolCallAudit.findFirst({ where: { id: f.cursor, projectId }, select: { id: true, startedAt: true } });
  }
  const rows = await prisma.toolCallAudit.findMany({
    where: {
      projectId,
      ...(f.tool ? { tool: f.tool } : {}),
      ...(f.status ? { status: f.status } : {}),
      ...(f.runId ? { runId: f.runId } : {}),
      ...(cursorRow
        ? {
            OR: [
              { startedAt: { lt: cursorRow.startedAt } },
              { startedAt: cursorRow.startedAt, id: { lt: cursorRow.id } },
            ],
          }
        : {}),
    },
    orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
    take: f.limit + 1,
    include: { apiKey: { select: { kind: true, name: true } } },
  });
  const page = rows.slice(0, f.limit);
  const userIds = [...new Set(page.map((r) => r.userId).filter((x): x is string => !!x))];
  const users = userIds.length
    ? await prisma.user.findMany({ where: { id: { in: userIds } }, select: { id: true, name: true } })
    : [];
  const names = new Map(users.map((u) => [u.id, u.name]));
  return {
    items: page.map((r) => ({
      id: r.id,
      tool: r.tool,
      status: r.status,
      errorCode: r.errorCode,
      keyKind: r.apiKey?.kind ?? null,
      keyName: r.apiKey?.name ?? null,
      userId: r.userId,
      userName: r.userId ? (names.get(r.userId) ?? null) : null,
      runId: r.runId,
      toolCallId: r.toolCallId,
      argsPreview: r.argsPreview,
      resultPreview: r.resultPreview,
      durationMs: r.durationMs,
      startedAt: r.startedAt,
    })),
    nextCursor: rows.length > f.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}
