/**
 * The assistant's conversation, feedback, review and usage queries: every database read and write
 * the tRPC router (`router.ts`) needs, as named functions. Runs, events and versions are in
 * `persistence.ts`; approvals in `human-in-the-loop.ts`. Functions return rows or `null`; the
 * router decides what a missing row means for the caller (NOT_FOUND).
 */
import { newId, Prisma, type PrismaClient } from '../host';
import { normalizeFeedbackReasons } from '../schema';
import { replayPage } from './persistence';

/** A position in a list ordered by (updatedAt desc, id desc). */
export interface ListCursor {
  at: Date;
  id: string;
}

function encodeCursor(d: Date, id: string): string {
  return Buffer.from(`${d.toISOString()}|${id}`).toString('base64url');
}

/** The cursor's position, or `null` for a cursor that is not one (the caller refuses it). */
export function decodeCursor(c: string): ListCursor | null {
  const [iso, id] = Buffer.from(c, 'base64url').toString('utf8').split('|');
  const at = new Date(iso ?? '');
  return !id || Number.isNaN(at.getTime()) ? null : { at, id };
}

/** Keyset pagination on (updatedAt desc, id desc). */
function afterCursor(c: ListCursor | null) {
  return c ? { OR: [{ updatedAt: { lt: c.at } }, { updatedAt: c.at, id: { lt: c.id } }] } : {};
}

/** A page of `take` rows from `take + 1` read, and the cursor of the next page when there is one. */
function keysetPage<T extends { updatedAt: Date; id: string }>(rows: T[], take: number) {
  const page = rows.slice(0, take);
  const last = page[page.length - 1];
  return { page, nextCursor: rows.length > take && last ? encodeCursor(last.updatedAt, last.id) : null };
}

/** A conversation of this user in this project (deleted ones only when asked), or null. */
export function findOwnConversation(
  prisma: PrismaClient,
  where: { projectId: string; userId: string; conversationId: string },
  includeDeleted = false,
) {
  return prisma.agentConversation.findFirst({
    where: {
      id: where.conversationId,
      projectId: where.projectId,
      userId: where.userId,
      ...(includeDeleted ? {} : { deletedAt: null }),
    },
  });
}

async function lastRunStatuses(prisma: PrismaClient, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const runs = await prisma.agentRun.findMany({
    where: { conversationId: { in: ids } },
    orderBy: { startedAt: 'desc' },
    distinct: ['conversationId'],
    select: { conversationId: true, status: true },
  });
  return new Map(runs.map((r) => [r.conversationId, r.status]));
}

/** A user's conversations in a project, newest first, a page at a time (title search optional). */
export async function listOwnConversations(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; search?: string; cursor: ListCursor | null; take: number },
) {
  const rows = await prisma.agentConversation.findMany({
    where: {
      projectId: input.projectId,
      userId: input.userId,
      deletedAt: null,
      ...(input.search?.trim() ? { title: { contains: input.search.trim(), mode: 'insensitive' as const } } : {}),
      ...afterCursor(input.cursor),
    },
    orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
    take: input.take + 1,
  });
  const { page, nextCursor } = keysetPage(rows, input.take);
  const statuses = await lastRunStatuses(
    prisma,
    page.map((r) => r.id),
  );
  return {
    items: page.map((r) => ({
      id: r.id,
      title: r.title,
      createdAt: r.createdAt,
      updatedAt: r.updatedAt,
      lastRunStatus: statuses.get(r.id) ?? null,
    })),
    nextCursor,
  };
}

export function renameConversation(prisma: PrismaClient, conversationId: string, title: string) {
  return prisma.agentConversation.update({
    where: { id: conversationId },
    data: { title },
    select: { id: true, title: true },
  });
}

/** Deletes (hides from its owner) or restores a conversation without moving it in the list. */
export async function setConversationDeleted(
  prisma: PrismaClient,
  conversation: { id: string; updatedAt: Date },
  deleted: boolean,
): Promise<void> {
  await prisma.agentConversation.update({
    where: { id: conversation.id },
    data: { deletedAt: deleted ? new Date() : null, updatedAt: conversation.updatedAt },
  });
}

/** A stored rating as the panel and the review show it (reasons this build does not know are left out). */
function feedbackView(r: { value: number; comment: string | null; reasons: string[] }) {
  return { value: (r.value < 0 ? -1 : 1) as 1 | -1, comment: r.comment, reasons: normalizeFeedbackReasons(r.reasons) };
}

/** This user's ratings in a conversation, by message id. */
export async function feedbackByMessage(prisma: PrismaClient, conversationId: string, userId: string) {
  const rows = await prisma.agentFeedback.findMany({ where: { conversationId, userId } });
  return Object.fromEntries(rows.map((r) => [r.messageId, feedbackView(r)]));
}

/** True when the message is an assistant message of the conversation (one indexed row, no replay). */
export async function isAssistantMessage(prisma: PrismaClient, conversationId: string, messageId: string) {
  const target = await prisma.agentEvent.findFirst({
    where: { conversationId, messageId, type: 'TEXT_MESSAGE' },
    select: { payload: true },
  });
  return (target?.payload as { role?: string } | undefined)?.role === 'assistant';
}

/** Saves a user's rating of a message; a new rating replaces the previous one. */
export async function saveFeedback(
  prisma: PrismaClient,
  input: {
    conversationId: string;
    messageId: string;
    userId: string;
    value: 1 | -1;
    comment: string | null;
    reasons: string[];
  },
) {
  const { conversationId, messageId, userId, value, comment, reasons } = input;
  const row = await prisma.agentFeedback.upsert({
    where: { messageId_userId: { messageId, userId } },
    update: { value, comment, reasons },
    create: { id: newId('fb_'), conversationId, messageId, userId, value, comment, reasons },
  });
  return { messageId: row.messageId, ...feedbackView(row) };
}

export type ReviewFilter = 'all' | 'negative' | 'failed' | 'approvals';

/** The project's conversations for review (deleted ones included, flagged), newest first. */
export async function listReviewConversations(
  prisma: PrismaClient,
  input: { projectId: string; filter: ReviewFilter; reason?: string; cursor: ListCursor | null; take: number },
) {
  const { filter } = input;
  // Deleted conversations stay reviewable (flagged `deleted`): deleting hides a conversation
  // from its owner's list, not from the project's review.
  const rows = await prisma.agentConversation.findMany({
    where: {
      projectId: input.projectId,
      ...(filter === 'negative' ? { feedback: { some: { value: -1 } } } : {}),
      ...(filter === 'failed' ? { runs: { some: { status: 'FAILED' } } } : {}),
      ...(filter === 'approvals' ? { approvals: { some: {} } } : {}),
      ...(input.reason ? { AND: [{ feedback: { some: { value: -1, reasons: { has: input.reason } } } }] } : {}),
      ...afterCursor(input.cursor),
    },
    orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
    take: input.take + 1,
    include: {
      user: { select: { id: true, name: true, email: true } },
      feedback: { select: { value: true, reasons: true } },
      _count: { select: { approvals: true } },
    },
  });
  const { page, nextCursor } = keysetPage(rows, input.take);
  const ids = page.map((r) => r.id);
  // Three independent reads of the page's conversations, at once. Tool calls as replay shows them:
  // one stored TOOL_CALL row per call (MCP and local tools, executed, rejected or interrupted
  // alike), counted without replaying every conversation.
  const [statuses, toolCounts, usage] = await Promise.all([
    lastRunStatuses(prisma, ids),
    ids.length
      ? prisma.agentEvent.groupBy({
          by: ['conversationId'],
          where: { conversationId: { in: ids }, type: 'TOOL_CALL' },
          _count: { _all: true },
        })
      : Promise.resolve([]),
    usageByConversation(prisma, ids),
  ]);
  const perConversation = new Map(toolCounts.map((t) => [t.conversationId, t._count._all]));
  return {
    items: page.map((r) => ({
      id: r.id,
      title: r.title,
      user: r.user,
      updatedAt: r.updatedAt,
      deleted: r.deletedAt !== null,
      lastRunStatus: statuses.get(r.id) ?? null,
      negativeFeedback: r.feedback.filter((f) => f.value < 0).length,
      positiveFeedback: r.feedback.filter((f) => f.value > 0).length,
      /** Every reason given with this conversation's thumbs down, in the product's order. */
      reasons: normalizeFeedbackReasons(r.feedback.flatMap((f) => (f.value < 0 ? f.reasons : []))),
      approvals: r._count.approvals,
      toolCalls: perConversation.get(r.id) ?? 0,
      usage: usage.get(r.id) ?? { inputTokens: 0, outputTokens: 0, costUsd: null, estimated: false },
    })),
    nextCursor,
  };
}

/** The id of a conversation of the project (any user, deleted or not), or null. */
export async function findProjectConversationId(prisma: PrismaClient, projectId: string, conversationId: string) {
  const c = await prisma.agentConversation.findFirst({
    where: { id: conversationId, projectId },
    select: { id: true },
  });
  return c?.id ?? null;
}

/** Every run of a conversation, oldest first (the review export). */
export function listConversationRuns(prisma: PrismaClient, conversationId: string) {
  return prisma.agentRun.findMany({ where: { conversationId }, orderBy: { startedAt: 'asc' } });
}

/** Sums of runs' usage; `estimated` when one of them is partly estimated (stopped or failed mid-answer). */
type UsageTotals = { inputTokens: number; outputTokens: number; costUsd: number | null; estimated: boolean };

/** Tokens and cost per conversation (sums over its runs). */
async function usageByConversation(prisma: PrismaClient, ids: string[]): Promise<Map<string, UsageTotals>> {
  if (!ids.length) return new Map();
  const rows = await prisma.$queryRaw<
    Array<{
      id: string;
      input: bigint | number | null;
      output: bigint | number | null;
      cost: number | null;
      estimated: boolean | null;
    }>
  >`
    SELECT "conversationId" AS id, sum("inputTokens") AS input, sum("outputTokens") AS output,
      sum("costUsd") AS cost, bool_or("usageEstimated") AS estimated
    FROM "AgentRun" WHERE "conversationId" IN (${Prisma.join(ids)})
    GROUP BY "conversationId"`;
  return new Map(
    rows.map((r) => [
      r.id,
      {
        inputTokens: Number(r.input ?? 0),
        outputTokens: Number(r.output ?? 0),
        costUsd: r.cost === null ? null : Number(r.cost),
        estimated: r.estimated === true,
      },
    ]),
  );
}

/** Tokens and cost of the project over the last `days` days: per day (UTC), per user, in total. */
export async function projectUsage(prisma: PrismaClient, projectId: string, days: number) {
  const since = new Date(Date.now() - days * 86_400_000);
  type Row = {
    key: string;
    name: string | null;
    runs: bigint | number;
    input: bigint | number | null;
    output: bigint | number | null;
    cost: number | null;
    estimated: boolean | null;
  };
  const totals = (r: Row) => ({
    runs: Number(r.runs),
    inputTokens: Number(r.input ?? 0),
    outputTokens: Number(r.output ?? 0),
    costUsd: r.cost === null ? null : Math.round(Number(r.cost) * 1e6) / 1e6,
    estimated: r.estimated === true,
  });
  const [byDay, byUser] = await Promise.all([
    prisma.$queryRaw<Row[]>`
      SELECT to_char(date_trunc('day', r."startedAt"), 'YYYY-MM-DD') AS key, NULL AS name, count(*) AS runs,
        sum(r."inputTokens") AS input, sum(r."outputTokens") AS output, sum(r."costUsd") AS cost,
        bool_or(r."usageEstimated") AS estimated
      FROM "AgentRun" r JOIN "AgentConversation" c ON c."id" = r."conversationId"
      WHERE c."projectId" = ${projectId} AND r."startedAt" >= ${since}
      GROUP BY 1 ORDER BY 1 DESC`,
    prisma.$queryRaw<Row[]>`
      SELECT u."id" AS key, u."name" AS name, count(*) AS runs,
        sum(r."inputTokens") AS input, sum(r."outputTokens") AS output, sum(r."costUsd") AS cost,
        bool_or(r."usageEstimated") AS estimated
      FROM "AgentRun" r JOIN "AgentConversation" c ON c."id" = r."conversationId" JOIN "User" u ON u."id" = r."userId"
      WHERE c."projectId" = ${projectId} AND r."startedAt" >= ${since}
      GROUP BY u."id", u."name" ORDER BY sum(r."inputTokens") + sum(r."outputTokens") DESC NULLS LAST`,
  ]);
  const all = [...byDay].map(totals);
  const sum = (f: (t: ReturnType<typeof totals>) => number) => all.reduce((n, t) => n + f(t), 0);
  const priced = all.some((t) => t.costUsd !== null);
  return {
    days,
    byDay: byDay.map((r) => ({ day: r.key, ...totals(r) })),
    byUser: byUser.map((r) => ({ user: { id: r.key, name: r.name ?? '' }, ...totals(r) })),
    total: {
      runs: sum((t) => t.runs),
      inputTokens: sum((t) => t.inputTokens),
      outputTokens: sum((t) => t.outputTokens),
      costUsd: priced ? Math.round(sum((t) => t.costUsd ?? 0) * 1e6) / 1e6 : null,
      estimated: all.some((t) => t.estimated),
    },
  };
}

/** One conversation of the project as the review shows it (a page of it when `page` is given), or null. */
export async function reviewDetail(
  prisma: PrismaClient,
  projectId: string,
  conversationId: string,
  page?: { runs: number },
) {
  const c = await prisma.agentConversation.findFirst({
    where: { id: conversationId, projectId },
    include: { user: { select: { id: true, name: true, email: true } } },
  });
  if (!c) return null;
  const runs = await prisma.agentRun.findMany({ where: { conversationId }, select: { id: true } });
  const [replayed, feedbackRows, audit, approvals, usageRows] = await Promise.all([
    replayPage(prisma, conversationId, page ? { page } : {}),
    prisma.agentFeedback.findMany({ where: { conversationId } }),
    prisma.toolCallAudit.findMany({ where: { runId: { in: runs.map((r) => r.id) } }, orderBy: { startedAt: 'asc' } }),
    prisma.agentPendingApproval.findMany({ where: { conversationId }, orderBy: { createdAt: 'asc' } }),
    usageByConversation(prisma, [conversationId]),
  ]);
  const usage = usageRows.get(conversationId) ?? {
    inputTokens: 0,
    outputTokens: 0,
    costUsd: null,
    estimated: false,
  };
  return {
    conversation: { id: c.id, title: c.title, createdAt: c.createdAt, updatedAt: c.updatedAt, deletedAt: c.deletedAt },
    usage,
    user: c.user,
    view: replayed.view,
    olderBefore: replayed.olderBefore,
    feedback: Object.fromEntries(feedbackRows.map((f) => [f.messageId, feedbackView(f)])),
    audit: audit.map((a) => ({
      id: a.id,
      tool: a.tool,
      status: a.status,
      errorCode: a.errorCode,
      argsPreview: a.argsPreview,
      resultPreview: a.resultPreview,
      durationMs: a.durationMs,
      startedAt: a.startedAt,
      toolCallId: a.toolCallId,
      runId: a.runId,
    })),
    approvals: approvals.map((a) => ({
      toolCallId: a.toolCallId,
      toolName: a.toolName,
      status: a.status,
      reason: a.reason,
      feedback: a.feedback,
      decidedAt: a.decidedAt,
    })),
  };
}
