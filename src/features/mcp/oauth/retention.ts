/**
 * What MCP authorization keeps no longer (run by the retention purge, src/server/retention.ts):
 * codes and tokens a day after they expired (a rotated refresh token stays until its own expiry,
 * so a replay is recognised until then); grants revoked, or without a usable token and unused,
 * for AUDIT_RETENTION_DAYS (audit rows keep the client's id and name); clients without any grant
 * or code that were registered or fetched that long ago. Every statement deletes at most `limit`
 * rows.
 */
import 'server-only';
import type { SqlSession } from '@/server/migrate';

const UTC_NOW = `(now() AT TIME ZONE 'UTC')`;
const EXPIRED_KEEP = `${UTC_NOW} - interval '1 day'`;

async function deleted(session: SqlSession, sql: string, params: unknown[]): Promise<number> {
  const { rows } = await session.query<{ n: number }>(
    `WITH gone AS (${sql} RETURNING 1) SELECT count(*)::int AS n FROM gone`,
    params,
  );
  return Number(rows[0]?.n ?? 0);
}

/** One batch of each kind; the number of rows deleted. */
export async function purgeOAuthBatch(session: SqlSession, days: number, limit: number): Promise<number> {
  const codes = await deleted(
    session,
    `DELETE FROM "McpOAuthCode" WHERE "codeHash" IN (
       SELECT "codeHash" FROM "McpOAuthCode" WHERE "expiresAt" < ${EXPIRED_KEEP} LIMIT $1::int)`,
    [limit],
  );
  const tokens = await deleted(
    session,
    `DELETE FROM "McpOAuthToken" WHERE "tokenHash" IN (
       SELECT "tokenHash" FROM "McpOAuthToken" WHERE "expiresAt" < ${EXPIRED_KEEP} LIMIT $1::int)`,
    [limit],
  );
  const grants = await deleted(
    session,
    `DELETE FROM "McpOAuthGrant" WHERE "id" IN (
       SELECT g."id" FROM "McpOAuthGrant" g
       WHERE COALESCE(g."revokedAt", g."lastUsedAt", g."createdAt") < ${UTC_NOW} - make_interval(days => $1::int)
         AND (g."revokedAt" IS NOT NULL OR NOT EXISTS (
           SELECT 1 FROM "McpOAuthToken" t WHERE t."grantId" = g."id" AND t."kind" = 'REFRESH'
             AND t."revokedAt" IS NULL AND t."rotatedAt" IS NULL AND t."expiresAt" > ${UTC_NOW}))
       LIMIT $2::int)`,
    [days, limit],
  );
  const clients = await deleted(
    session,
    `DELETE FROM "McpOAuthClient" WHERE "id" IN (
       SELECT c."id" FROM "McpOAuthClient" c
       WHERE c."updatedAt" < ${UTC_NOW} - make_interval(days => $1::int)
         AND NOT EXISTS (SELECT 1 FROM "McpOAuthGrant" g WHERE g."clientId" = c."id")
         AND NOT EXISTS (SELECT 1 FROM "McpOAuthCode" k WHERE k."clientId" = c."id")
       LIMIT $2::int)`,
    [days, limit],
  );
  return codes + tokens + grants + clients;
}
