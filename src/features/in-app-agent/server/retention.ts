/**
 * The module's part of the retention purge, each one bounded statement per call (the host's purge,
 * src/server/retention.ts, calls them in batches under its lock):
 *
 * - conversations the user deleted more than `days` ago (AGENT_RETENTION_DAYS);
 * - conversations of a project with a retention (`AgentDataPolicy.retentionDays`) whose last
 *   activity is older than it, and with them the previews of their tool calls in the audit trail
 *   (the audit row itself stays: who called what, when, with which outcome);
 * - spend counters of windows long gone (`purgeOldSpend`, budgets.ts).
 *
 * Everything under a conversation goes with it (runs, events, pending approvals, feedback, and
 * any table added under it later, such as attachments: cascading foreign keys). A conversation
 * with a RUNNING run is never touched.
 */
import 'server-only';
import type { SqlSession } from '../host';

/** The attachments kept no longer (attachment-store.ts): the purge runs it before the conversations. */
export { purgeAttachments } from './attachment-store';

/** Deletes at most `limit` expired deleted conversations; returns how many. */
export async function purgeDeletedConversations(session: SqlSession, days: number, limit: number): Promise<number> {
  const { rows } = await session.query<{ n: number }>(
    `WITH doomed AS (
       SELECT c."id" FROM "AgentConversation" c
       WHERE c."deletedAt" IS NOT NULL
         AND c."deletedAt" < (now() AT TIME ZONE 'UTC') - make_interval(days => $1::int)
         AND NOT EXISTS (SELECT 1 FROM "AgentRun" r WHERE r."conversationId" = c."id" AND r."status" = 'RUNNING')
       ORDER BY c."deletedAt"
       LIMIT $2::int
       FOR UPDATE SKIP LOCKED
     ), gone AS (
       DELETE FROM "AgentConversation" WHERE "id" IN (SELECT "id" FROM doomed) RETURNING 1
     )
     SELECT count(*)::int AS n FROM gone`,
    [days, limit],
  );
  return Number(rows[0]?.n ?? 0);
}

/**
 * Deletes at most `limit` conversations older than their project's retention (days after their
 * last activity, `updatedAt`), and blanks the audit previews of their runs' tool calls; returns how
 * many conversations.
 */
export async function purgeExpiredConversations(session: SqlSession, limit: number): Promise<number> {
  const { rows } = await session.query<{ n: number }>(
    `WITH doomed AS (
       SELECT c."id" FROM "AgentDataPolicy" p
       JOIN "AgentConversation" c ON c."projectId" = p."projectId"
       WHERE p."retentionDays" IS NOT NULL
         AND c."updatedAt" < (now() AT TIME ZONE 'UTC') - make_interval(days => p."retentionDays")
         AND NOT EXISTS (SELECT 1 FROM "AgentRun" r WHERE r."conversationId" = c."id" AND r."status" = 'RUNNING')
       ORDER BY c."updatedAt"
       LIMIT $1::int
       FOR UPDATE OF c SKIP LOCKED
     ), previews AS (
       UPDATE "ToolCallAudit" SET "argsPreview" = '', "resultPreview" = ''
       WHERE "runId" IN (SELECT r."id" FROM "AgentRun" r WHERE r."conversationId" IN (SELECT "id" FROM doomed))
         AND ("argsPreview" <> '' OR "resultPreview" <> '')
     ), gone AS (
       DELETE FROM "AgentConversation" WHERE "id" IN (SELECT "id" FROM doomed) RETURNING 1
     )
     SELECT count(*)::int AS n FROM gone`,
    [limit],
  );
  return Number(rows[0]?.n ?? 0);
}
