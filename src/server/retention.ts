/**
 * The retention purge: what the product keeps no longer is deleted, in bounded batches, by one
 * instance at a time.
 *
 * - deleted assistant conversations after AGENT_RETENTION_DAYS, with their runs, events,
 *   approvals and feedback (cascades), never one with a RUNNING run (the module's part); their
 *   attachments first (with their objects, when an object store holds them), and uploads never
 *   sent after a day;
 * - assistant conversations past their project's retention (the project's "Retention" setting),
 *   the same way, and the audit previews of their tool calls; spend counters of windows that ended
 *   more than `SPEND_KEEP_DAYS` ago (the module's part);
 * - MCP audit rows after AUDIT_RETENTION_DAYS;
 * - in-app agent run keys expired or revoked more than AUDIT_RETENTION_DAYS ago (until then the
 *   audit trail still names the key its rows point at), never the key of a RUNNING run;
 * - consumed override nonces past their retention (every token expired a day before);
 * - MCP authorization rows (`purgeOAuthBatch`): codes and tokens a day after they expired, grants
 *   revoked or unused and clients without grants after AUDIT_RETENTION_DAYS;
 * - counters of the limits store (`LimitCounter`: sign-in, tRPC, assistant runs, MCP calls) that no
 *   sliding window reads any more (`purgeExpiredLimits`, two windows after each one started).
 *
 * One at a time: the purge holds a session-level PostgreSQL advisory lock
 * (`pg_try_advisory_lock`) on the connection it works on, so a second instance (or connection)
 * skips its turn instead of deleting alongside; a lost connection releases the lock. In one
 * process a flag does the same (advisory locks are re-entrant within a session, and the embedded
 * database has a single one). Every statement deletes at most `batchSize` rows; a pass stops after
 * `maxBatches` per kind and the next pass goes on.
 */
import 'server-only';
import { purgeOldSpend } from '@/features/in-app-agent/server/budgets';
import {
  purgeAttachments,
  purgeDeletedConversations,
  purgeExpiredConversations,
} from '@/features/in-app-agent/server/retention';
import { purgeOAuthBatch } from '@/features/mcp/oauth/retention';
import { OVERRIDE_USE_RETENTION_MS } from '@/features/mcp/override-store';
import type { Database } from './db';
import { purgeExpiredLimits } from './limits';
import { childLog } from './log';
import type { SqlSession } from './migrate';
import { processWide } from '@/server/process-wide';

/** Advisory lock key of the purge (the migration applier uses 72707369). */
export const RETENTION_LOCK_KEY = 72707370;

/** Spend counters are kept this long after their window started (the usage page reads a month back). */
const SPEND_KEEP_DAYS = 400;

export interface PurgeOptions {
  agentRetentionDays: number;
  auditRetentionDays: number;
  /** Rows per statement (conversations: a fifth of it, since each cascades to its events). */
  batchSize?: number;
  /** Statements per kind and pass. */
  maxBatches?: number;
  /** Checked between statements: a shutdown stops the pass early. */
  shouldStop?: () => boolean;
  /** Called after every statement (tests hold a pass half-way). */
  afterBatch?: () => Promise<void> | void;
}

export interface PurgeResult {
  /** False when another instance (or pass) held the lock: this one did nothing. */
  ran: boolean;
  conversations: number;
  /** Assistant attachments (of purged conversations, and uploads never sent). */
  attachments: number;
  /** Conversations older than their project's retention. */
  expiredConversations: number;
  /** Spend counters of windows long gone. */
  spendWindows: number;
  auditRows: number;
  runKeys: number;
  overrideUses: number;
  /** MCP authorization codes, tokens, grants and clients. */
  oauthRows: number;
  limitCounters: number;
}

const UTC_NOW = `(now() AT TIME ZONE 'UTC')`;

async function deleteBatch(session: SqlSession, sql: string, params: unknown[]): Promise<number> {
  const { rows } = await session.query<{ n: number }>(sql, params);
  return Number(rows[0]?.n ?? 0);
}

const auditBatch = (s: SqlSession, days: number, limit: number) =>
  deleteBatch(
    s,
    `WITH gone AS (
       DELETE FROM "ToolCallAudit" WHERE "id" IN (
         SELECT "id" FROM "ToolCallAudit" WHERE "startedAt" < ${UTC_NOW} - make_interval(days => $1::int) LIMIT $2::int)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [days, limit],
  );

const runKeyBatch = (s: SqlSession, days: number, limit: number) =>
  deleteBatch(
    s,
    `WITH gone AS (
       DELETE FROM "ApiKey" WHERE "id" IN (
         SELECT k."id" FROM "ApiKey" k
         WHERE k."kind" = 'IN_APP_AGENT'
           AND COALESCE(k."revokedAt", k."expiresAt") < ${UTC_NOW} - make_interval(days => $1::int)
           AND NOT EXISTS (SELECT 1 FROM "AgentRun" r WHERE r."id" = k."runId" AND r."status" = 'RUNNING')
         LIMIT $2::int)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [days, limit],
  );

const overrideUseBatch = (s: SqlSession, limit: number) =>
  deleteBatch(
    s,
    `WITH gone AS (
       DELETE FROM "McpOverrideUse" WHERE "nonce" IN (
         SELECT "nonce" FROM "McpOverrideUse"
         WHERE "consumedAt" < ${UTC_NOW} - make_interval(secs => $1::double precision) LIMIT $2::int)
       RETURNING 1)
     SELECT count(*)::int AS n FROM gone`,
    [OVERRIDE_USE_RETENTION_MS / 1000, limit],
  );

interface Holder {
  running: boolean;
}
const holder: Holder = processWide<Holder>('__trackerRetention', () => ({ running: false }));

/** One purge pass (see the file comment). Never two at once in a process or across instances. */
export async function purgeExpired(db: Database, opts: PurgeOptions): Promise<PurgeResult> {
  const result: PurgeResult = {
    ran: false,
    conversations: 0,
    attachments: 0,
    expiredConversations: 0,
    spendWindows: 0,
    auditRows: 0,
    runKeys: 0,
    overrideUses: 0,
    oauthRows: 0,
    limitCounters: 0,
  };
  if (holder.running) return result;
  holder.running = true;
  try {
    return await db.withSession(async (session) => {
      const lock = 'SELECT pg_try_advisory_lock($1) AS locked';
      const { rows } = await session.query<{ locked: boolean }>(lock, [RETENTION_LOCK_KEY]);
      if (!rows[0]?.locked) return result;
      result.ran = true;
      const started = Date.now();
      try {
        const batch = opts.batchSize ?? 500;
        const maxBatches = opts.maxBatches ?? 100;
        /** Runs `one` until it deletes less than a full batch, the pass's bound, or a shutdown. */
        const drain = async (limit: number, one: (limit: number) => Promise<number>): Promise<number> => {
          let total = 0;
          for (let i = 0; i < maxBatches && !opts.shouldStop?.(); i++) {
            const n = await one(limit);
            total += n;
            await opts.afterBatch?.();
            if (n < limit) break;
          }
          return total;
        };
        const conversationBatch = Math.max(1, Math.floor(batch / 5));
        result.attachments = await drain(conversationBatch, (n) =>
          purgeAttachments(session, opts.agentRetentionDays, n),
        );
        result.conversations = await drain(conversationBatch, (n) =>
          purgeDeletedConversations(session, opts.agentRetentionDays, n),
        );
        result.expiredConversations = await drain(conversationBatch, (n) => purgeExpiredConversations(session, n));
        result.spendWindows = await drain(batch, (n) => purgeOldSpend(session, SPEND_KEEP_DAYS, n));
        result.auditRows = await drain(batch, (n) => auditBatch(session, opts.auditRetentionDays, n));
        result.runKeys = await drain(batch, (n) => runKeyBatch(session, opts.auditRetentionDays, n));
        result.overrideUses = await drain(batch, (n) => overrideUseBatch(session, n));
        result.oauthRows = await drain(batch, (n) => purgeOAuthBatch(session, opts.auditRetentionDays, n));
        // Expiry by this process's clock, as the counters are written (limits.ts): one batch a statement.
        result.limitCounters = await drain(batch, (n) =>
          purgeExpiredLimits(db.prisma, new Date(), { batchSize: n, maxBatches: 1 }),
        );
        childLog({ job: 'retention' }).info(
          {
            event: 'purge.finished',
            conversations: result.conversations,
            attachments: result.attachments,
            expiredConversations: result.expiredConversations,
            spendWindows: result.spendWindows,
            auditRows: result.auditRows,
            runKeys: result.runKeys,
            overrideUses: result.overrideUses,
            oauthRows: result.oauthRows,
            limitCounters: result.limitCounters,
            ms: Date.now() - started,
          },
          'retention purge finished',
        );
        return result;
      } finally {
        await session.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]).catch(() => undefined);
      }
    });
  } finally {
    holder.running = false;
  }
}
