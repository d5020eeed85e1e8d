/**
 * What decides whether a run may open, as parts of the one statement that opens it: each check
 * adds its CTEs and columns to that statement, passes or not (later checks run only when every
 * earlier one passed, so a refused run locks, counts and writes nothing), and reads its own
 * refusal from the statement's row. `openRunRow` (persistence.ts) folds the list into the
 * statement and decodes the row once: the first check that refused is the answer.
 *
 * A new limit on opening runs is one more check, in the order it should be decided: checks that
 * only read (the budgets and the data policy: budgets.ts, data-policy.ts) are passed to
 * `openRunRow` as `admission` and decided first; the ones here lock or count, after them. A check
 * may also refuse nothing and only read a column for the run (the data policy does).
 */
import { type HitLimitInput, limitHitParts, limitResult, Prisma } from '../host';
import { AgentRefusal } from '../error-codes';

/** A run-open statement's row, as the checks read it. */
type AdmissionRow = Record<string, unknown> | undefined;

export interface AdmissionCheck {
  /**
   * The check's parts of the statement, given `passed`: a boolean SQL expression that holds when
   * every earlier check passed (the check must not lock, count or write otherwise).
   */
  parts(passed: Prisma.Sql): {
    /** CTEs, in order, each `name AS (...)`. */
    ctes: Prisma.Sql[];
    /** Holds when this check and every earlier one passed. */
    pass: Prisma.Sql;
    /** Columns the check reads back (`expr AS "name"`), selected by the statement. */
    columns: Prisma.Sql[];
  };
  /** Its refusal, read from the row (called only when every earlier check passed). */
  refusal(row: AdmissionRow): AgentRefusal | null;
}

/** What a client refused with TOO_MANY_RUNS is told to wait before retrying (answers take seconds). */
const TOO_MANY_RUNS_RETRY_AFTER_SECONDS = 5;

/**
 * At most `maxRunning` RUNNING runs of the user, in any conversation and on any instance.
 * `in_app_agent_admit_run` (migration `20261125400000_run_admission`) takes a transaction-scoped
 * advisory lock on the user and counts their RUNNING runs with a fresh heartbeat in a snapshot
 * taken after the lock is held; the lock is held until the statement commits, so two instances
 * opening runs for one user at once take turns and the second counts the first's run. Runs waiting
 * for an approval ended INTERRUPTED: they are not running. A run whose instance died (no heartbeat
 * for `staleSeconds`) does not count either: the stale sweep closes it.
 */
export function runningRunsCheck(userId: string, limit: { maxRunning: number; staleSeconds: number }): AdmissionCheck {
  return {
    parts: (passed) => ({
      ctes: [
        Prisma.sql`admitted AS MATERIALIZED (
          SELECT CASE WHEN ${passed}
            THEN "in_app_agent_admit_run"(${userId}, ${limit.maxRunning}::int, ${limit.staleSeconds}::int)
            ELSE false END AS ok)`,
      ],
      pass: Prisma.sql`(SELECT ok FROM admitted)`,
      columns: [Prisma.sql`(SELECT ok FROM admitted) AS "admittedRunning"`],
    }),
    refusal: (row) =>
      row?.admittedRunning === false
        ? new AgentRefusal(
            'TOO_MANY_RUNS',
            `You already have ${limit.maxRunning} answer${limit.maxRunning === 1 ? '' : 's'} being written at once. ` +
              'Wait for one to finish, then try again.',
            { retryAfterSeconds: TOO_MANY_RUNS_RETRY_AFTER_SECONDS },
          )
        : null,
  };
}

/**
 * One unit on a shared per-window counter (runs per user and minute), counted by the statement
 * only when every earlier check passed and the unit fits: a run refused for any reason counts
 * nothing.
 */
export function perWindowCheck(input: HitLimitInput): AdmissionCheck {
  let hit: ReturnType<typeof limitHitParts> | undefined;
  return {
    parts: (passed) => {
      hit = limitHitParts(input, passed);
      return { ctes: [hit.ctes], pass: Prisma.sql`EXISTS (SELECT 1 FROM limit_counted)`, columns: [hit.columns] };
    },
    refusal: (row) => {
      if (!hit) return null;
      const result = limitResult(hit, row as Parameters<typeof limitResult>[1]);
      return result.allowed
        ? null
        : new AgentRefusal('RATE_LIMITED', `Too many requests. Try again in ${result.retryAfterSeconds} s.`, {
            retryAfterSeconds: result.retryAfterSeconds,
          });
    },
  };
}
