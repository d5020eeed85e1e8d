/**
 * Budgets in the database: the admission check that refuses a run once a budget of its window is
 * spent (part of the one statement that opens the run, so no round trip of its own), the part of a
 * run's last statement that counts its spend, and the settings' reads and writes.
 *
 * Spend is counted per window in `AgentSpend` (a member per UTC day, a member per UTC month, the
 * project per UTC month) by the statement that records a run's end, from the usage it records:
 * the admission reads three windows by their key, whatever the project's history (measured on
 * PostgreSQL against sums over the runs: docs/performance.md). A window is counted in slots, its
 * spend their sum: a run's end adds to a slot that no other transaction holds, or opens one, so
 * runs of a project ending together never wait for each other's count (one row per window made
 * each end wait for the one before it to commit). Counters also outlive the runs they count:
 * purging or deleting conversations never gives a budget back.
 *
 * A run that streams is never cut by a budget: only opening one is refused. So the runs a member
 * opens while the window is still below its budget may all finish above it: a member's overshoot
 * is at most `AGENT_MAX_CONCURRENT_RUNS_PER_USER` answers; the project's, that many per member
 * answering at that moment.
 */
import { log, Prisma, type PrismaClient, type SqlSession } from '../host';
import {
  BUDGET_SCOPES,
  type BudgetScope,
  type BudgetState,
  BudgetStateSchema,
  type BudgetUnit,
  budgetSpentSentence,
  budgetWindow,
} from '../budgets';
import { AgentRefusal } from '../error-codes';
import type { AdmissionCheck } from './admission';

/** Database time in UTC (the windows are UTC days and months of the database's clock). */
const NOW = Prisma.sql`(now() AT TIME ZONE 'UTC')`;

/** A budget read by the open statement: its state, whether it is spent, seconds until its window ends. */
interface ReadBudget extends BudgetState {
  exhausted: boolean;
  retryAfter: number;
}

/**
 * The check of the run-open statement: the project's budgets with the spend of their current
 * windows (for the member opening the run, and for the project), read by key. Refuses
 * BUDGET_EXCEEDED when one is spent: `Retry-After` is the end of the window that renews last among
 * the spent ones (before then nothing can open), and the message names that budget. It only reads,
 * so it is decided first: a refused run locks, counts and writes nothing. `state()` gives what it
 * read (null: the project has no budget), for the budget event at the run's end.
 */
export function budgetCheck(projectId: string, userId: string): AdmissionCheck & { state(): BudgetState[] | null } {
  let read: ReadBudget[] | null = null;
  return {
    parts: (passed) => ({
      ctes: [
        Prisma.sql`budgets AS MATERIALIZED (
          SELECT b."scope"::text AS scope, b."unit"::text AS unit, b."amount" AS amount, w."end",
            CASE WHEN b."unit" = 'USD' THEN COALESCE(s."costUsd", 0) ELSE COALESCE(s."tokens", 0)::double precision END AS spent
          FROM "AgentBudget" b
          CROSS JOIN LATERAL (SELECT date_trunc(CASE WHEN b."scope" = 'MEMBER_DAY' THEN 'day' ELSE 'month' END, ${NOW}) AS start) w0
          CROSS JOIN LATERAL (SELECT w0.start, w0.start
            + CASE WHEN b."scope" = 'MEMBER_DAY' THEN interval '1 day' ELSE interval '1 month' END AS "end") w
          CROSS JOIN LATERAL (SELECT sum(x."tokens") AS tokens, sum(x."costUsd") AS "costUsd" FROM "AgentSpend" x
            WHERE x."projectId" = b."projectId"
              AND x."userId" = CASE WHEN b."scope" = 'PROJECT_MONTH' THEN '' ELSE ${userId}::text END
              AND x."period" = (CASE WHEN b."scope" = 'MEMBER_DAY' THEN 'DAY' ELSE 'MONTH' END)::"AgentSpendPeriod"
              AND x."windowStart" = w.start) s
          WHERE b."projectId" = ${projectId} AND ${passed})`,
      ],
      pass: Prisma.sql`(${passed} AND NOT EXISTS (SELECT 1 FROM budgets WHERE spent >= amount))`,
      columns: [
        Prisma.sql`(SELECT json_agg(json_build_object('scope', scope, 'unit', unit, 'amount', amount, 'spent', spent,
            'endsAt', to_char("end", 'YYYY-MM-DD"T"HH24:MI:SS"Z"'), 'exhausted', spent >= amount,
            'retryAfter', GREATEST(1, ceil(extract(epoch FROM ("end" - ${NOW}))))::int))::text FROM budgets) AS "budgets"`,
      ],
    }),
    refusal: (row) => {
      read = parseRead(row?.budgets);
      const spent = (read ?? []).filter((b) => b.exhausted);
      if (!spent.length) return null;
      // Nothing opens before the last of the spent windows renews: that one is named.
      const binding = spent.reduce((a, b) => (b.retryAfter > a.retryAfter ? b : a));
      return new AgentRefusal('BUDGET_EXCEEDED', budgetSpentSentence(binding), {
        retryAfterSeconds: binding.retryAfter,
      });
    },
    state: () => (read?.length ? read.map(({ exhausted: _e, retryAfter: _r, ...b }) => b) : null),
  };
}

function parseRead(raw: unknown): ReadBudget[] | null {
  if (typeof raw !== 'string') return null;
  const out: ReadBudget[] = [];
  for (const item of JSON.parse(raw) as Array<Record<string, unknown>>) {
    const state = BudgetStateSchema.safeParse(item);
    if (!state.success) continue;
    out.push({ ...state.data, exhausted: item.exhausted === true, retryAfter: Number(item.retryAfter) || 1 });
  }
  return out.sort((a, b) => BUDGET_SCOPES.indexOf(a.scope) - BUDGET_SCOPES.indexOf(b.scope));
}

/**
 * The CTE of a run's last statement that counts its spend: its tokens (in + out) and cost added to
 * the member's day and month and the project's month (windows of the database's clock at the end),
 * only when `run` (a CTE of that statement, returning the run's `conversationId` and `userId`)
 * closed the run. Each window's count goes to a slot of it that no other transaction holds (taken
 * with `FOR UPDATE SKIP LOCKED`), else to a new slot: the statement never waits for another run's
 * end to commit. Null when the run has no usage to count.
 */
export function spendCte(
  run: string,
  usage: { inputTokens?: number; outputTokens?: number; costUsd?: number } | undefined,
): Prisma.Sql | null {
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined && usage.costUsd === undefined))
    return null;
  const tokens = Math.max(0, Math.round((usage.inputTokens ?? 0) + (usage.outputTokens ?? 0)));
  const cost = Math.max(0, usage.costUsd ?? 0);
  const from = Prisma.raw(`"${run}"`);
  return Prisma.sql`spent AS (
    INSERT INTO "AgentSpend" ("projectId", "userId", "period", "windowStart", "slot", "tokens", "costUsd", "runs", "updatedAt")
    SELECT c."projectId", w.uid, w.period, w.start,
      COALESCE((SELECT s."slot" FROM "AgentSpend" s
        WHERE s."projectId" = c."projectId" AND s."userId" = w.uid AND s."period" = w.period AND s."windowStart" = w.start
        LIMIT 1 FOR UPDATE SKIP LOCKED), floor(random() * 2147483647)::int),
      ${tokens}::bigint, ${cost}::double precision, 1, ${NOW}
    FROM ${from} JOIN "AgentConversation" c ON c."id" = ${from}."conversationId"
    CROSS JOIN LATERAL (VALUES (${from}."userId", 'DAY'::"AgentSpendPeriod", date_trunc('day', ${NOW})),
      (${from}."userId", 'MONTH'::"AgentSpendPeriod", date_trunc('month', ${NOW})),
      ('', 'MONTH'::"AgentSpendPeriod", date_trunc('month', ${NOW}))) AS w(uid, period, start)
    ON CONFLICT ("projectId", "userId", "period", "windowStart", "slot") DO UPDATE SET
      "tokens" = "AgentSpend"."tokens" + EXCLUDED."tokens", "costUsd" = "AgentSpend"."costUsd" + EXCLUDED."costUsd",
      "runs" = "AgentSpend"."runs" + 1, "updatedAt" = EXCLUDED."updatedAt")`;
}

// ------------------------------------------------------------------------------------------------
// Settings and the usage page
// ------------------------------------------------------------------------------------------------

/** A budget as the settings show it. */
export interface BudgetSetting {
  scope: BudgetScope;
  unit: BudgetUnit;
  amount: number;
  updatedAt: Date;
}

/** The project's budgets, in the order of `BUDGET_SCOPES`. */
async function listBudgets(prisma: PrismaClient, projectId: string): Promise<BudgetSetting[]> {
  const rows = await prisma.agentBudget.findMany({ where: { projectId } });
  return rows
    .map((r) => ({ scope: r.scope, unit: r.unit, amount: r.amount, updatedAt: r.updatedAt }))
    .sort((a, b) => BUDGET_SCOPES.indexOf(a.scope) - BUDGET_SCOPES.indexOf(b.scope));
}

/**
 * Sets the project's budgets in one transaction: each scope given a number gets it (in `unit`),
 * each given null has none. Scopes not mentioned stay as they are. Takes effect for the next run
 * opened on any instance (the open statement reads the table).
 */
export async function saveBudgets(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; unit: BudgetUnit; budgets: Partial<Record<BudgetScope, number | null>> },
): Promise<void> {
  const entries = Object.entries(input.budgets) as Array<[BudgetScope, number | null]>;
  await prisma.$transaction(
    entries.map(([scope, amount]) =>
      amount === null
        ? prisma.agentBudget.deleteMany({ where: { projectId: input.projectId, scope } })
        : prisma.agentBudget.upsert({
            where: { projectId_scope: { projectId: input.projectId, scope } },
            create: { projectId: input.projectId, scope, unit: input.unit, amount, updatedById: input.userId },
            update: { unit: input.unit, amount, updatedById: input.userId },
          }),
    ),
  );
  // ops: who changed which budgets (ids and numbers only).
  log().info(
    {
      event: 'budgets.changed',
      projectId: input.projectId,
      userId: input.userId,
      unit: input.unit,
      scopes: entries.map(([scope, amount]) => `${scope}=${amount ?? 'none'}`),
    },
    'assistant budgets changed',
  );
}

/** One window's spend. */
interface Spend {
  tokens: number;
  costUsd: number;
  runs: number;
}

/**
 * Spend against each budget for the usage page: the project's month, and every member's day and
 * month that spent anything (most first), with the windows' bounds. Read from the counters.
 */
export async function budgetUsage(prisma: PrismaClient, projectId: string, at = new Date()) {
  const day = budgetWindow('MEMBER_DAY', at);
  const month = budgetWindow('MEMBER_MONTH', at);
  const [budgets, rows] = await Promise.all([
    listBudgets(prisma, projectId),
    prisma.agentSpend.findMany({
      where: {
        projectId,
        OR: [
          { period: 'DAY', windowStart: day.start },
          { period: 'MONTH', windowStart: month.start },
        ],
      },
    }),
  ]);
  const none: Spend = { tokens: 0, costUsd: 0, runs: 0 };
  // A window's spend is the sum of its slots.
  const add = (s: Spend, r: (typeof rows)[number]): Spend => ({
    tokens: s.tokens + Number(r.tokens),
    costUsd: s.costUsd + r.costUsd,
    runs: s.runs + r.runs,
  });
  let project = none;
  const members = new Map<string, { day: Spend; month: Spend }>();
  for (const r of rows) {
    if (r.userId === '') {
      if (r.period === 'MONTH') project = add(project, r);
      continue;
    }
    const m = members.get(r.userId) ?? { day: none, month: none };
    if (r.period === 'DAY') m.day = add(m.day, r);
    else m.month = add(m.month, r);
    members.set(r.userId, m);
  }
  const users = members.size
    ? await prisma.user.findMany({ where: { id: { in: [...members.keys()] } }, select: { id: true, name: true } })
    : [];
  const names = new Map(users.map((u) => [u.id, u.name]));
  return {
    budgets,
    windows: {
      day: { start: day.start.toISOString(), end: day.end.toISOString() },
      month: { start: month.start.toISOString(), end: month.end.toISOString() },
    },
    project,
    members: [...members.entries()]
      .map(([id, s]) => ({ user: { id, name: names.get(id) ?? '' }, ...s }))
      .sort((a, b) => b.month.costUsd - a.month.costUsd || b.month.tokens - a.month.tokens),
  };
}

/**
 * Counters of windows that ended long ago (their month is past `keepDays`): nothing reads them any
 * more. One bounded statement; the retention purge calls it in batches under its lock.
 */
export async function purgeOldSpend(session: SqlSession, keepDays: number, limit: number): Promise<number> {
  const { rows } = await session.query<{ n: number }>(
    `WITH doomed AS (
       SELECT "projectId", "userId", "period", "windowStart", "slot" FROM "AgentSpend"
       WHERE "windowStart" < (now() AT TIME ZONE 'UTC') - make_interval(days => $1::int)
       LIMIT $2::int
     ), gone AS (
       DELETE FROM "AgentSpend" s USING doomed d
       WHERE s."projectId" = d."projectId" AND s."userId" = d."userId" AND s."period" = d."period"
         AND s."windowStart" = d."windowStart" AND s."slot" = d."slot"
       RETURNING 1
     )
     SELECT count(*)::int AS n FROM gone`,
    [keepDays, limit],
  );
  return Number(rows[0]?.n ?? 0);
}
