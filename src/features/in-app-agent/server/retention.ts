/**
 * The module's part of the retention purge: conversations the user deleted more than `days` ago,
 * with everything hanging off them (runs, events, pending approvals, feedback: cascading foreign
 * keys). A conversation with a RUNNING run is never touched. One bounded statement per call; the
 * host's purge (src/server/retention.ts) calls it in batches under its lock.
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
