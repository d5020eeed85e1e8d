/**
 * The tool-call ledger: each call an assistant's run makes to a tool that changes something happens
 * once, whichever instance runs the run and however often the call is asked (a run taken over after
 * its instance stopped asks its open calls again: in-app-agent/server/takeover.ts). Keyed by the run
 * (its run key's) and the tool-call id the assistant sends in `_meta`.
 *
 * - The product's own tools record the call in the same transaction as their change: the ledger row
 *   (DONE, with the result) and the change commit together or not at all. A repeat returns the
 *   stored result; a repeat with other arguments is refused (TOOL_CALL_CONFLICT).
 * - Calls to outside services (the webhook) cannot share a transaction: the row is committed as
 *   STARTED before the call goes out (with the key as `Idempotency-Key`), and DONE with the result
 *   after. A call found STARTED without a result (its instance stopped during it) is not sent again:
 *   its result says the outcome is unknown, so the model (and the user) can check.
 *
 * Rows are written only while the run is RUNNING and the key is not revoked (a takeover revokes the
 * old owner's keys in the statement that bumps the run's generation), and carry that generation.
 * Project keys and connected apps have no ledger: their clients own their retries.
 */
import 'server-only';
import { withTransaction } from '@/features/tracker/services/shared';
import type { PrismaClient } from '@/generated/prisma/client';
import type { McpPrincipal } from './auth';
import { type McpErrorCode, ToolFailure } from './errors';
import { fingerprintArgs, TOOL_CALL_META_KEY } from './override';

export interface LedgerEntry {
  runId: string;
  toolCallId: string;
  keyId: string;
  tool: string;
  argsHash: string;
}

type Row = { status: string; argsHash: string; result: unknown };

/** The ledger entry of a call, when it has one: a run key's call with a tool-call id. */
export function ledgerEntryOf(
  principal: McpPrincipal,
  meta: Record<string, unknown>,
  tool: string,
  args: unknown,
): LedgerEntry | null {
  if (principal.kind !== 'run-key' || !principal.runId) return null;
  const id = meta[TOOL_CALL_META_KEY];
  if (typeof id !== 'string' || id.length === 0 || id.length > 200) return null;
  return { runId: principal.runId, toolCallId: id, keyId: principal.key.id, tool, argsHash: fingerprintArgs(args) };
}

/** The `Idempotency-Key` of a call to an outside service. */
export const idempotencyKeyOf = (e: LedgerEntry) => `${e.runId}:${e.toolCallId}`;

async function read(db: PrismaClient, e: LedgerEntry): Promise<Row | null> {
  const rows = await db.$queryRaw<Row[]>`
    SELECT "status", "argsHash", "result" FROM "AgentToolCall" WHERE "runId" = ${e.runId} AND "toolCallId" = ${e.toolCallId}`;
  return rows[0] ?? null;
}

/** A failure stored as the call's outcome (an outside call that failed): raised again on a repeat. */
const FAILURE = '__toolFailure';

/** What an earlier call with this key says now: its result, or (thrown) its failure, a conflict, an unknown outcome. */
function outcomeOf(row: Row, e: LedgerEntry): Record<string, unknown> {
  if (row.argsHash !== e.argsHash) {
    throw new ToolFailure(
      'TOOL_CALL_CONFLICT',
      `This tool call (${e.toolCallId}) was already made with other arguments; it was not made again.`,
    );
  }
  if (row.status === 'DONE') {
    const result = row.result as Record<string, unknown>;
    const failed = result?.[FAILURE] as
      | { code: McpErrorCode; message: string; details?: Record<string, unknown> }
      | undefined;
    if (failed) throw new ToolFailure(failed.code, failed.message, failed.details);
    return result;
  }
  throw new ToolFailure(
    'OUTCOME_UNKNOWN',
    `${e.tool} was started before the assistant's server stopped, and whether it completed is unknown. ` +
      'It was not sent again: check its effect before asking for it again.',
    { outcomeUnknown: true },
  );
}

/** A call already in the ledger (it ran, or started): its stored outcome; null when it never ran. */
export async function earlierCall(db: PrismaClient, e: LedgerEntry): Promise<Record<string, unknown> | null> {
  const row = await read(db, e);
  return row ? outcomeOf(row, e) : null;
}

/**
 * Claims the call for this run: a STARTED row, written only while the key's run is RUNNING (the
 * row carries its generation). False when another call with this key got there first (then the
 * caller reads its outcome).
 */
async function start(db: PrismaClient, e: LedgerEntry): Promise<boolean> {
  const inserted = await db.$executeRaw`
    INSERT INTO "AgentToolCall" ("runId", "toolCallId", "toolName", "argsHash", "status", "generation")
    SELECT r."id", ${e.toolCallId}, ${e.tool}, ${e.argsHash}, 'STARTED', r."generation"
    FROM "ApiKey" k JOIN "AgentRun" r ON r."id" = k."runId"
    WHERE k."id" = ${e.keyId} AND k."revokedAt" IS NULL AND r."id" = ${e.runId} AND r."status" = 'RUNNING'
    ON CONFLICT ("runId", "toolCallId") DO NOTHING`;
  if (inserted === 1) return true;
  if (await read(db, e)) return false;
  throw new ToolFailure(
    'RUN_ENDED',
    'This assistant run has ended or another server goes on with it; the call was not made with this key.',
  );
}

async function done(db: PrismaClient, e: LedgerEntry, result: Record<string, unknown>): Promise<void> {
  await db.$executeRaw`
    UPDATE "AgentToolCall" SET "status" = 'DONE', "result" = ${JSON.stringify(result)}::jsonb,
      "finishedAt" = (now() AT TIME ZONE 'UTC')
    WHERE "runId" = ${e.runId} AND "toolCallId" = ${e.toolCallId}`;
}

/**
 * A product tool's call, once: the ledger row and the tool's change in one transaction (`run` gets
 * the transaction's client and must do every write through it). A call already done returns its
 * stored result without running.
 */
export async function callOnce(
  prisma: PrismaClient,
  e: LedgerEntry,
  run: (db: PrismaClient) => Promise<Record<string, unknown>>,
): Promise<{ result: Record<string, unknown>; repeated: boolean }> {
  return withTransaction(
    prisma,
    async (db) => {
      if (!(await start(db, e))) return { result: await earlierOutcome(db, e), repeated: true };
      const result = await run(db);
      await done(db, e, result);
      return { result, repeated: false };
    },
    // A tool's change may wait on a row another call holds (the same call, repeated): not 5 s only.
    { maxWait: 10_000, timeout: 30_000 },
  );
}

/**
 * A call to an outside service, at most once: STARTED is committed before it goes out, DONE with
 * its result after. A call found started without a result is not sent again (OUTCOME_UNKNOWN).
 */
export async function callOutsideOnce(
  prisma: PrismaClient,
  e: LedgerEntry,
  send: () => Promise<Record<string, unknown>>,
): Promise<{ result: Record<string, unknown>; repeated: boolean }> {
  if (!(await start(prisma, e))) return { result: await earlierOutcome(prisma, e), repeated: true };
  let result: Record<string, unknown>;
  try {
    result = await send();
  } catch (err) {
    // An expected failure is the call's outcome too (a repeat fails the same way, without sending).
    if (err instanceof ToolFailure) {
      await done(prisma, e, { [FAILURE]: { code: err.appCode, message: err.message, details: err.details } });
    }
    throw err;
  }
  await done(prisma, e, result);
  return { result, repeated: false };
}

async function earlierOutcome(db: PrismaClient, e: LedgerEntry): Promise<Record<string, unknown>> {
  const row = await read(db, e);
  if (!row) throw new ToolFailure('RUN_ENDED', 'The earlier call with this key was not found.');
  return outcomeOf(row, e);
}
