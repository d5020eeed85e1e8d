/**
 * One member's assistant data in a project, for its admins: who has any, the export (a page of
 * conversations at a time, each a JSONL line with its runs, stored events, approvals, feedback and
 * tool calls; every string masked like stored text: redaction.ts), and the deletion (in bounded
 * batches; a conversation with a RUNNING run is left until it ends). Spend counters stay: they hold
 * no content, and a budget is never given back by deleting data.
 */
import { log, type PrismaClient } from '../host';
import { loadStoredEvents } from './persistence';
import { type MaskOptions, maskDeep } from './redaction';

/** Conversations per export page (each line carries a whole conversation). */
const EXPORT_PAGE_CONVERSATIONS = 5;
/** Conversations deleted per statement. */
const DELETE_BATCH = 100;

/** The people with assistant conversations in the project (members or not any more), most first. */
export async function peopleWithAssistantData(prisma: PrismaClient, projectId: string) {
  const groups = await prisma.agentConversation.groupBy({
    by: ['userId'],
    where: { projectId },
    _count: { _all: true },
  });
  if (!groups.length) return [];
  const ids = groups.map((g) => g.userId);
  const [users, members] = await Promise.all([
    prisma.user.findMany({ where: { id: { in: ids } }, select: { id: true, name: true, email: true } }),
    prisma.projectMembership.findMany({ where: { projectId, userId: { in: ids } }, select: { userId: true } }),
  ]);
  const byId = new Map(users.map((u) => [u.id, u]));
  const current = new Set(members.map((m) => m.userId));
  return groups
    .map((g) => ({
      user: byId.get(g.userId) ?? { id: g.userId, name: '', email: '' },
      conversations: g._count._all,
      member: current.has(g.userId),
    }))
    .sort((a, b) => b.conversations - a.conversations || a.user.name.localeCompare(b.user.name));
}

/** The export's first line: whose data, from which project, when. */
export async function memberExportHeader(prisma: PrismaClient, projectId: string, userId: string) {
  const user = await prisma.user.findUnique({ where: { id: userId }, select: { id: true, name: true, email: true } });
  return {
    type: 'member' as const,
    format: 'in-app-agent.member-data',
    version: 1,
    projectId,
    user: user ?? { id: userId, name: '', email: '' },
    exportedAt: new Date().toISOString(),
  };
}

/**
 * A page of the member's conversations in the project (deleted ones too), oldest id first after
 * `cursor`: one line each with everything stored under it, masked with `mask`.
 */
export async function memberExportPage(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; cursor: string | null; mask: MaskOptions },
) {
  const conversations = await prisma.agentConversation.findMany({
    where: { projectId: input.projectId, userId: input.userId, ...(input.cursor ? { id: { gt: input.cursor } } : {}) },
    orderBy: { id: 'asc' },
    take: EXPORT_PAGE_CONVERSATIONS + 1,
    select: { id: true, title: true, createdAt: true, updatedAt: true, deletedAt: true },
  });
  const page = conversations.slice(0, EXPORT_PAGE_CONVERSATIONS);
  const lines = [];
  for (const c of page) {
    const runs = await prisma.agentRun.findMany({
      where: { conversationId: c.id },
      orderBy: { startedAt: 'asc' },
      select: {
        id: true,
        status: true,
        startedAt: true,
        finishedAt: true,
        modelId: true,
        inputTokens: true,
        outputTokens: true,
        costUsd: true,
        usageEstimated: true,
        errorCode: true,
        errorMessage: true,
        precedingRunId: true,
        resumedFromId: true,
      },
    });
    const [events, approvals, feedback, toolCalls] = await Promise.all([
      loadStoredEvents(prisma, c.id),
      prisma.agentPendingApproval.findMany({
        where: { conversationId: c.id },
        orderBy: { createdAt: 'asc' },
        select: {
          id: true,
          runId: true,
          kind: true,
          toolCallId: true,
          toolName: true,
          args: true,
          status: true,
          decidedArgs: true,
          feedback: true,
          createdAt: true,
          expiresAt: true,
          decidedAt: true,
        },
      }),
      prisma.agentFeedback.findMany({
        where: { conversationId: c.id },
        select: { messageId: true, value: true, comment: true, reasons: true, createdAt: true, updatedAt: true },
      }),
      runs.length
        ? prisma.toolCallAudit.findMany({
            where: { runId: { in: runs.map((r) => r.id) } },
            orderBy: { startedAt: 'asc' },
            select: {
              runId: true,
              toolCallId: true,
              tool: true,
              status: true,
              errorCode: true,
              argsPreview: true,
              resultPreview: true,
              durationMs: true,
              startedAt: true,
            },
          })
        : [],
    ]);
    lines.push(
      maskDeep(
        JSON.parse(
          JSON.stringify({ type: 'conversation', conversation: c, runs, events, approvals, feedback, toolCalls }),
        ) as Record<string, unknown>,
        input.mask,
      ),
    );
  }
  return { lines, nextCursor: conversations.length > page.length ? (page.at(-1)?.id ?? null) : null };
}

/**
 * Deletes the member's conversations in the project (with everything under them) and blanks the
 * audit previews of their tool calls, a batch at a time; conversations with a RUNNING run stay
 * (`running` counts them: delete again once they ended).
 */
export async function deleteMemberData(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; byUserId: string },
): Promise<{ deleted: number; running: number }> {
  let deleted = 0;
  for (;;) {
    const rows = await prisma.$queryRaw<Array<{ n: number }>>`
      WITH doomed AS (
        SELECT c."id" FROM "AgentConversation" c
        WHERE c."projectId" = ${input.projectId} AND c."userId" = ${input.userId}
          AND NOT EXISTS (SELECT 1 FROM "AgentRun" r WHERE r."conversationId" = c."id" AND r."status" = 'RUNNING')
        ORDER BY c."id"
        LIMIT ${DELETE_BATCH}::int
        FOR UPDATE OF c SKIP LOCKED
      ), previews AS (
        UPDATE "ToolCallAudit" SET "argsPreview" = '', "resultPreview" = ''
        WHERE "runId" IN (SELECT r."id" FROM "AgentRun" r WHERE r."conversationId" IN (SELECT "id" FROM doomed))
          AND ("argsPreview" <> '' OR "resultPreview" <> '')
      ), gone AS (
        DELETE FROM "AgentConversation" WHERE "id" IN (SELECT "id" FROM doomed) RETURNING 1
      )
      SELECT count(*)::int AS n FROM gone`;
    const n = Number(rows[0]?.n ?? 0);
    deleted += n;
    if (n < DELETE_BATCH) break;
  }
  const running = await prisma.agentConversation.count({
    where: { projectId: input.projectId, userId: input.userId },
  });
  // ops: who deleted whose assistant data (ids and counts only).
  log().info(
    {
      event: 'member_data.deleted',
      projectId: input.projectId,
      userId: input.userId,
      byUserId: input.byUserId,
      deleted,
      running,
    },
    "a member's assistant data was deleted",
  );
  return { deleted, running };
}
