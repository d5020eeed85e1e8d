/**
 * The limits store: counters for abuse limits (sign-in failures, tRPC mutations, assistant runs,
 * MCP calls...), kept in the application database so every app instance shares them. No extra
 * service: one table, `LimitCounter`, one row per key and fixed window.
 *
 * A limit is "at most `limit` units per `windowSeconds`", measured over a sliding window: the
 * estimate is `previous window × (share of it still inside the sliding window) + current window`,
 * as fixed-window counters would drift at window edges (a burst at the end of one window and the
 * start of the next would get twice the limit).
 *
 * - `hitLimit` counts a hit when it fits and says whether it was allowed, in ONE SQL statement
 *   (`INSERT ... ON CONFLICT ("key", "windowStart") DO UPDATE ... WHERE fits`): two instances
 *   counting at once never lose an update, and never both take the last unit. A refused hit is
 *   NOT counted, so a client that waits `retryAfterSeconds` gets in when promised.
 * - `peekLimit` reads without counting; `refundLimit` gives units back (work counted but not
 *   done); `resetLimit` forgets a key (e.g. the failures of an account after a good sign-in).
 * - `purgeExpiredLimits` deletes rows no window reads any more, in batches (housekeeping).
 *
 * Keys are namespaced strings, `<area>:<what>:<id>`: `signin:account:<hmac of the email>`,
 * `signin:address:<ip>`, `trpc:mutation:<userId>`. Never put secrets or raw emails in a key.
 *
 * Time comes from the caller's clock (`now`, default the current time): instances should run NTP,
 * as anything with timestamps does; a skew of seconds only shifts windows by as much.
 */
import 'server-only';
import { z } from 'zod';
import { Prisma, type PrismaClient } from '@/generated/prisma/client';

/** Printable ASCII without spaces: namespaced ids, hashes, IP addresses. */
const LimitKeySchema = z
  .string()
  .min(1)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, 'A limit key is printable ASCII without spaces.');

const WindowSeconds = z
  .number()
  .int()
  .min(1)
  .max(7 * 86_400);

export const HitLimitInput = z
  .object({
    key: LimitKeySchema,
    /** Units allowed per window. */
    limit: z.number().int().min(1).max(1_000_000_000),
    windowSeconds: WindowSeconds,
    /** Units this hit takes (default 1); at most `limit`, or it could never be allowed. */
    cost: z.number().int().min(1).max(1_000_000_000).default(1),
    /** The moment of the hit (tests, replays); default now. */
    now: z.date().optional(),
  })
  .strict()
  .refine((v) => v.cost <= v.limit, { message: 'cost must not exceed limit', path: ['cost'] });
export type HitLimitInput = z.input<typeof HitLimitInput>;

export const RefundLimitInput = z
  .object({
    key: LimitKeySchema,
    windowSeconds: WindowSeconds,
    cost: z.number().int().min(1).max(1_000_000_000).default(1),
    now: z.date().optional(),
  })
  .strict();
export type RefundLimitInput = z.input<typeof RefundLimitInput>;

export interface LimitResult {
  /** Whether the hit fits (hitLimit: it was counted; peekLimit: it would be). */
  allowed: boolean;
  /** Units counted in the current window (after this hit, when it was counted). */
  count: number;
  /** When refused: seconds until a hit of the same cost would fit (at least 1). 0 when allowed. */
  retryAfterSeconds: number;
}

interface Window {
  key: string;
  /** Epoch milliseconds of the current window's start, of the previous one, and of expiry. */
  startMs: number;
  previousStartMs: number;
  expiresMs: number;
  /** Share of the previous window still inside the sliding window (1 at a window start, → 0). */
  previousWeight: number;
  windowMs: number;
  nowMs: number;
}

function windowOf(key: string, windowSeconds: number, now: Date | undefined): Window {
  const windowMs = windowSeconds * 1000;
  const nowMs = (now ?? new Date()).getTime();
  const startMs = Math.floor(nowMs / windowMs) * windowMs;
  return {
    key,
    startMs,
    previousStartMs: startMs - windowMs,
    // The next window still reads this one as its "previous": keep it until that one ends.
    expiresMs: startMs + 2 * windowMs,
    previousWeight: 1 - (nowMs - startMs) / windowMs,
    windowMs,
    nowMs,
  };
}

/**
 * Seconds until a hit of `cost` fits, assuming nothing else is counted meanwhile: later in this
 * window, as the previous window's share shrinks, or in the next one, as this window's does.
 */
function retryAfter(w: Window, previous: number, current: number, cost: number, limit: number): number {
  let fitsAtMs: number;
  if (current + cost <= limit && previous > 0) {
    const fraction = 1 - (limit - cost - current) / previous;
    fitsAtMs = w.startMs + fraction * w.windowMs;
  } else {
    const fraction = current > 0 ? 1 - (limit - cost) / current : 0;
    fitsAtMs = w.startMs + w.windowMs + fraction * w.windowMs;
  }
  return Math.max(1, Math.ceil((fitsAtMs - w.nowMs) / 1000));
}

function fits(previous: number, weight: number, current: number, cost: number, limit: number): boolean {
  return previous * weight + current + cost <= limit;
}

/** `timestamp(3)` of an epoch-milliseconds parameter, in UTC like every other timestamp column. */
const ts = (ms: number) => ms / 1000;

/** The SQL condition selecting `key`'s counter of the window starting at `startMs`. */
const counterAt = (key: string, startMs: number) =>
  Prisma.sql`"key" = ${key} AND "windowStart" = to_timestamp(${ts(startMs)}::float8) AT TIME ZONE 'UTC'`;

/**
 * The parts of a statement that count one hit of `cost` units on `key` if it fits the limit: two
 * CTEs, `limit_previous` (the previous window's count) and `limit_counted` (the current window's
 * counter, inserted or incremented only when the sliding-window estimate stays within `limit`, and
 * `gate` holds), and the columns `limitCounted`, `limitPrevious`, `limitCurrent` to select, which
 * `limitResult` reads. `hitLimit` is this statement alone; the assistant's run open puts it in the
 * statement that opens the run, so a refused run counts nothing.
 */
export function limitHitParts(raw: HitLimitInput, gate: Prisma.Sql = Prisma.sql`true`) {
  const input = HitLimitInput.parse(raw);
  const w = windowOf(input.key, input.windowSeconds, input.now);
  const ctes = Prisma.sql`limit_previous AS (
      SELECT COALESCE((
        SELECT "count" FROM "LimitCounter"
        WHERE ${counterAt(w.key, w.previousStartMs)}
      ), 0) AS "count"
    ),
    limit_counted AS (
      INSERT INTO "LimitCounter" AS c ("key", "windowStart", "count", "expiresAt")
      SELECT ${w.key},
             to_timestamp(${ts(w.startMs)}::float8) AT TIME ZONE 'UTC',
             ${input.cost}::int,
             to_timestamp(${ts(w.expiresMs)}::float8) AT TIME ZONE 'UTC'
      FROM limit_previous
      WHERE limit_previous."count" * ${w.previousWeight}::float8 + ${input.cost}::int <= ${input.limit}::int
        AND (${gate})
      ON CONFLICT ("key", "windowStart") DO UPDATE SET "count" = c."count" + EXCLUDED."count"
      WHERE (SELECT "count" FROM limit_previous) * ${w.previousWeight}::float8 + c."count" + EXCLUDED."count"
            <= ${input.limit}::int
      RETURNING c."count"
    )`;
  const columns = Prisma.sql`(SELECT "count" FROM limit_counted) AS "limitCounted",
      (SELECT "count" FROM limit_previous) AS "limitPrevious",
      (SELECT "count" FROM "LimitCounter" WHERE ${counterAt(w.key, w.startMs)}) AS "limitCurrent"`;
  return { ctes, columns, input, window: w };
}

/** The columns `limitHitParts` selects. */
export interface LimitColumns {
  limitCounted: number | null;
  limitPrevious: number | null;
  limitCurrent: number | null;
}

/** What a statement with `limitHitParts` said about the hit. */
export function limitResult(parts: ReturnType<typeof limitHitParts>, row: LimitColumns | undefined): LimitResult {
  if (row?.limitCounted != null) return { allowed: true, count: Number(row.limitCounted), retryAfterSeconds: 0 };
  // Refused: nothing was written. `current` is the statement's snapshot (good enough to say when).
  const current = Number(row?.limitCurrent ?? 0);
  const { input, window } = parts;
  return {
    allowed: false,
    count: current,
    retryAfterSeconds: retryAfter(window, Number(row?.limitPrevious ?? 0), current, input.cost, input.limit),
  };
}

/**
 * Counts one hit of `cost` units on `key` if it fits the limit, atomically across instances.
 * One SQL statement: the previous window is read in a CTE, the current one is inserted or
 * incremented only when the sliding-window estimate stays within `limit`.
 */
export async function hitLimit(prisma: PrismaClient, raw: HitLimitInput): Promise<LimitResult> {
  const parts = limitHitParts(raw);
  const rows = await prisma.$queryRaw<LimitColumns[]>`WITH ${parts.ctes} SELECT ${parts.columns}`;
  return limitResult(parts, rows[0]);
}

/** Whether a hit of `cost` would fit now, without counting it. */
export async function peekLimit(prisma: PrismaClient, raw: HitLimitInput): Promise<LimitResult> {
  const input = HitLimitInput.parse(raw);
  const w = windowOf(input.key, input.windowSeconds, input.now);
  const rows = await prisma.$queryRaw<Array<{ previous: number | null; current: number | null }>>`
    SELECT
      (SELECT "count" FROM "LimitCounter" WHERE ${counterAt(w.key, w.previousStartMs)}) AS previous,
      (SELECT "count" FROM "LimitCounter" WHERE ${counterAt(w.key, w.startMs)}) AS "current"`;
  const previous = Number(rows[0]?.previous ?? 0);
  const current = Number(rows[0]?.current ?? 0);
  const allowed = fits(previous, w.previousWeight, current, input.cost, input.limit);
  return {
    allowed,
    count: current,
    retryAfterSeconds: allowed ? 0 : retryAfter(w, previous, current, input.cost, input.limit),
  };
}

/**
 * Gives `cost` units back to the current window (never below zero): for work that was counted but
 * then not done (e.g. a sign-in attempt the server was too busy to check). Best effort: a unit
 * counted in the window that just ended stays there and fades with it.
 */
export async function refundLimit(prisma: PrismaClient, raw: RefundLimitInput): Promise<void> {
  const input = RefundLimitInput.parse(raw);
  const w = windowOf(input.key, input.windowSeconds, input.now);
  await prisma.$executeRaw`
    UPDATE "LimitCounter" SET "count" = GREATEST("count" - ${input.cost}::int, 0)
    WHERE ${counterAt(w.key, w.startMs)}`;
}

/** Forgets every window of `key`. */
export async function resetLimit(prisma: PrismaClient, key: string): Promise<void> {
  const k = LimitKeySchema.parse(key);
  await prisma.$executeRaw`DELETE FROM "LimitCounter" WHERE "key" = ${k}`;
}

const PURGE_BATCH_ROWS = 1000;

/**
 * Deletes the counters no window reads any more (expired at or before `now`), `batchSize` rows per
 * statement so a large backlog never holds long locks, at most `maxBatches` statements per call.
 * Returns how many rows were deleted. For a periodic housekeeping task.
 */
export async function purgeExpiredLimits(
  prisma: PrismaClient,
  now: Date = new Date(),
  opts: { batchSize?: number; maxBatches?: number } = {},
): Promise<number> {
  const batchSize = z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .parse(opts.batchSize ?? PURGE_BATCH_ROWS);
  const maxBatches = z
    .number()
    .int()
    .min(1)
    .max(100_000)
    .parse(opts.maxBatches ?? 100);
  const nowSeconds = ts(now.getTime());
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const deleted = await prisma.$executeRaw`
      DELETE FROM "LimitCounter" WHERE ("key", "windowStart") IN (
        SELECT "key", "windowStart" FROM "LimitCounter"
        WHERE "expiresAt" <= to_timestamp(${nowSeconds}::float8) AT TIME ZONE 'UTC'
        LIMIT ${batchSize}::int
      )`;
    total += deleted;
    if (deleted < batchSize) break;
  }
  return total;
}
