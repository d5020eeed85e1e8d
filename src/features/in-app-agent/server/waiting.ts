/**
 * What waits for a user: the approvals (and questions, interrupts of other kinds) the assistant
 * asked them in a project and that can still be answered, per conversation; and the housekeeping
 * that marks the ones past their expiry as expired, so the database says what the panel shows.
 */
import type { PrismaClient } from '../host';
import { INTERRUPT_REASON_TOOL_APPROVAL } from '../constants';

/** Conversations listed at most (the newest requests first); `total` counts them all. */
const WAITING_LIST_LIMIT = 50;

interface WaitingConversation {
  conversationId: string;
  title: string;
  /** Tool approvals waiting. */
  approvals: number;
  /** Questions (interrupts of other kinds) waiting. */
  questions: number;
  /** The tools whose calls wait for approval. */
  tools: string[];
  /** The newest request's time. */
  latestAt: Date;
  /** When the first of them expires. */
  expiresAt: Date;
}

export interface WaitingList {
  /** Requests waiting in the project (approvals and questions, every conversation). */
  total: number;
  conversations: WaitingConversation[];
  /** The database's time, so the panel schedules its next look at the first expiry by it. */
  now: Date;
}

/** The user's requests that still wait in this project (not answered, not expired), per conversation. */
export async function listWaiting(prisma: PrismaClient, projectId: string, userId: string): Promise<WaitingList> {
  type Row = {
    conversationId: string;
    title: string;
    approvals: number;
    questions: number;
    tools: string[] | null;
    latestAt: Date;
    expiresAt: Date;
    now: Date;
  };
  const rows = await prisma.$queryRaw<Row[]>`
    SELECT a."conversationId", c."title",
      count(*) FILTER (WHERE a."kind" = ${INTERRUPT_REASON_TOOL_APPROVAL})::int AS approvals,
      count(*) FILTER (WHERE a."kind" <> ${INTERRUPT_REASON_TOOL_APPROVAL})::int AS questions,
      array_agg(DISTINCT a."toolName") FILTER (WHERE a."kind" = ${INTERRUPT_REASON_TOOL_APPROVAL}) AS tools,
      max(a."createdAt") AS "latestAt", min(a."expiresAt") AS "expiresAt", (now() AT TIME ZONE 'UTC') AS now
    FROM "AgentPendingApproval" a
    JOIN "AgentConversation" c ON c."id" = a."conversationId"
    WHERE a."userId" = ${userId} AND a."status" = 'PENDING' AND a."expiresAt" > (now() AT TIME ZONE 'UTC')
      AND c."projectId" = ${projectId} AND c."deletedAt" IS NULL
    GROUP BY a."conversationId", c."title"
    ORDER BY max(a."createdAt") DESC, a."conversationId"`;
  const conversations = rows.map((r) => ({
    conversationId: r.conversationId,
    title: r.title,
    approvals: Number(r.approvals),
    questions: Number(r.questions),
    tools: (r.tools ?? []).sort(),
    latestAt: r.latestAt,
    expiresAt: r.expiresAt,
  }));
  return {
    total: conversations.reduce((n, c) => n + c.approvals + c.questions, 0),
    conversations: conversations.slice(0, WAITING_LIST_LIMIT),
    now: rows[0]?.now ?? (await databaseNow(prisma)),
  };
}

async function databaseNow(prisma: PrismaClient): Promise<Date> {
  const rows = await prisma.$queryRaw<Array<{ now: Date }>>`SELECT (now() AT TIME ZONE 'UTC') AS now`;
  return rows[0]?.now ?? new Date();
}

/**
 * Marks pending requests past their expiry as EXPIRED (at their expiry time), at most `limit` a
 * statement; returns how many. Idempotent: every instance's sweep may run it. The conversation shows
 * the card as expired from its stored expiry (replay is unchanged); when the conversation goes on,
 * the expired call gets its result (`closeAbandoned`).
 */
export async function expireLapsedRequests(prisma: PrismaClient, limit = 500): Promise<number> {
  const rows = await prisma.$queryRaw<Array<{ n: number }>>`
    WITH lapsed AS (
      SELECT "id" FROM "AgentPendingApproval"
      WHERE "status" = 'PENDING' AND "expiresAt" <= (now() AT TIME ZONE 'UTC')
      LIMIT ${limit}::int
      FOR UPDATE SKIP LOCKED
    ), expired AS (
      UPDATE "AgentPendingApproval" a SET "status" = 'EXPIRED', "decidedAt" = a."expiresAt"
      FROM lapsed WHERE a."id" = lapsed."id" AND a."status" = 'PENDING'
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM expired`;
  return Number(rows[0]?.n ?? 0);
}
