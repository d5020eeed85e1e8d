/**
 * Conversations, runs, compacted events, replay and stale-run recovery.
 * Rows are written per message or tool call (see compact.ts), never per token.
 */
// The host, through the module's seam (host.ts).
import {
  type AgentKeyRow,
  describeError,
  driverOf,
  type HitLimitInput,
  log,
  type MemberColumns,
  memberOf,
  memberParts,
  newId,
  Prisma,
  type PrismaClient,
  type ProjectMember,
  processWide,
  retryWhileUnavailable,
  type Scope,
} from '../host';
import { Compactor, coalesce, expand, rowEnd, type WriteOp } from '../compact';
import { LIMITS, STORED_EVENT_VERSION } from '../constants';
import { AgentRefusal, type AgentErrorCode } from '../error-codes';
import { emptyView, foldEvents } from '../fold';
import { type AdmissionCheck, perWindowCheck, runningRunsCheck } from './admission';
import { spendCte } from './budgets';
import { expireLapsedRequests } from './waiting';
import {
  upgradeStoredEvent,
  type AgentEvent,
  type ConversationView,
  type MessagePart,
  type PageContext,
  type RunOutcome,
  type StoredEvent,
  type StoredEventUpgrade,
} from '../schema';
import type { Usage } from './usage';

export function titleFrom(message: string): string {
  const oneLine = message.replace(/\s+/g, ' ').trim();
  return oneLine.length > 60 ? `${oneLine.slice(0, 57)}…` : oneLine || 'New conversation';
}

/** Database time in UTC, as the schema's `timestamp(3)` columns hold it (instances' clocks may differ). */
/** The database's time, as the timestamps are stored (UTC, without a zone). */
export const NOW = Prisma.sql`(now() AT TIME ZONE 'UTC')`;

function isRunConflict(err: unknown): boolean {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') return true;
  return String((err as Error)?.message ?? '').includes('AgentRun_one_running_per_conversation');
}

/** A run row and the block of row positions (`seq`) it may write: (seqFrom, seqTo]. */
export interface OpenedRun {
  runId: string;
  conversationId: string;
  seqFrom: number;
  seqTo: number;
  /** The run this one follows (the conversation's last shown run, or the one a new version follows). */
  precedingRunId: string | null;
  /** The statement created the conversation: it has no history yet. */
  created: boolean;
  /** Who opened it, as the statement read it (`OpenRunInput.memberScope`). */
  member?: ProjectMember;
  /** The statement's row: what the `reads` selected. */
  row: Record<string, unknown>;
}

/** What opening a run needs. */
export interface OpenRunInput {
  runId: string;
  conversationId: string;
  projectId: string;
  userId: string;
  modelId: string;
  traceId?: string;
  /** Create the conversation with this title when it does not exist. */
  create?: { title: string };
  /** A new version of a turn: the run that turn follows (null: the conversation's first turn). */
  version?: { precedingRunId: string | null };
  /** A resume: the run it continues. */
  resumedFromId?: string;
  /** At most this many RUNNING runs of the user, across instances (`runningRunsCheck`). Unset: no such limit. */
  running?: { maxRunning: number; staleSeconds: number };
  /** The run's MCP key, stored with the run (only its hash: see `agentKeyMaterial`). */
  key?: AgentKeyRow;
  /**
   * Open only for a member of the project whose role holds this scope: the statement reads the
   * membership first (refused PROJECT_NOT_FOUND, or FORBIDDEN) and returns it (`OpenedRun.member`),
   * so the route needs no statement of its own to learn who asks.
   */
  memberScope?: Scope;
  /**
   * A limit the run counts against (runs per user and minute), counted by the same statement: a
   * run refused for any reason counts nothing (`perWindowCheck`).
   */
  perMinute?: HitLimitInput;
  /**
   * More checks that only read (a budget), decided first, in this order (see admission.ts): a run
   * they refuse takes no lock and counts nothing.
   */
  admission?: AdmissionCheck[];
  /** What else the statement reads for the run, and records on its row (the project's assistant settings). */
  reads?: OpenStatementRead[];
  /** The instance that runs it, and how long its first lease lasts (seconds). */
  lease?: { owner: string; seconds: number };
  /** What the run is asked (stored with it, so another instance can go on with it). */
  input?: RunInput;
}

/**
 * A read folded into the statement that opens a run, so the run learns it without a round trip of
 * its own: CTEs (reading nothing the user may not see: they are decoded only for an opened run),
 * the columns selected from them (the run reads them from `OpenedRun.row`), and columns of the run
 * row set from them (what the run went by, recorded in the same snapshot it was read in).
 */
export interface OpenStatementRead {
  ctes: Prisma.Sql[];
  columns: Prisma.Sql[];
  runColumns: Array<{ name: string; value: Prisma.Sql }>;
}

/** What a run was asked, stored with it: another instance that takes it over goes on from this. */
export interface RunInput {
  /** The user message's parts (null: a resume answering interrupts). */
  userMessage: MessagePart[] | null;
  /** Its message id, so an instance that sends it again sends the same message. */
  userMessageId?: string;
  pageContext: PageContext;
}

/**
 * Opens a run in ONE statement (one round trip, its own transaction): reads who asks (the
 * membership, when `memberScope` is given), decides the admission checks (admission.ts: the
 * checks that only read, `admission`: the budgets; then running runs and runs per minute; each only
 * when everything before it passed), checks that the conversation is the user's (or creates it,
 * with the id the client chose, when `create` is given), reserves the run's block of row positions
 * on the conversation's counter (so nothing else, such as the stale sweep, can write into it),
 * makes the run the last one of the conversation's shown path (following the previous last one,
 * or, for a new version of a turn, the run that turn follows), counts it against the size limit,
 * inserts the RUNNING run and its MCP key. The row is decoded once: the first refusal is thrown as an `AgentRefusal`
 * (PROJECT_NOT_FOUND, FORBIDDEN, then the checks' own; RUN_IN_PROGRESS when a run is already
 * RUNNING there, by the partial unique index; CONVERSATION_TOO_LONG at the size limit). Null: no
 * such conversation of this user and project (or another user's or project's: the same answer).
 *
 * The checks' locks are transaction-scoped: held until the statement commits. The rest of the
 * statement needs no fresher snapshot: the conversation's update re-reads a row changed meanwhile,
 * and the insert of a second RUNNING run of one conversation fails on the unique index.
 */
export async function openRunRow(prisma: PrismaClient, input: OpenRunInput): Promise<OpenedRun | null> {
  const db = driverOf(prisma);
  const block = LIMITS.runSeqBlock;
  const max = LIMITS.maxRunsPerConversation;
  const { conversationId: cid, projectId: pid, userId: uid, runId, key } = input;
  const member = input.memberScope ? memberParts(pid, uid, input.memberScope) : null;
  const checks: AdmissionCheck[] = [
    ...(input.admission ?? []),
    ...(input.running ? [runningRunsCheck(uid, input.running)] : []),
    ...(input.perMinute ? [perWindowCheck(input.perMinute)] : []),
  ];
  // Folded in order: each check runs only when the membership and every check before it passed.
  let passed = member ? member.allowed : Prisma.sql`true`;
  const ctes: Prisma.Sql[] = member ? [member.cte] : [];
  const columns: Prisma.Sql[] = [];
  for (const check of checks) {
    const parts = check.parts(passed);
    ctes.push(...parts.ctes);
    columns.push(...parts.columns);
    passed = parts.pass;
  }
  const reads = input.reads ?? [];
  for (const read of reads) {
    ctes.push(...read.ctes);
    columns.push(...read.columns);
  }
  const runColumns = reads.flatMap((read) => read.runColumns);
  const owned = Prisma.sql`"AgentConversation"."projectId" = ${pid} AND "AgentConversation"."userId" = ${uid}
    AND "AgentConversation"."deletedAt" IS NULL AND "AgentConversation"."runCount" < ${max}
    AND ${passed}`;
  const update = Prisma.sql`"lastSeq" = "AgentConversation"."lastSeq" + ${block}, "updatedAt" = ${NOW},
    "runCount" = "AgentConversation"."runCount" + 1, "headRunId" = ${runId}`;
  const conv = input.create
    ? Prisma.sql`INSERT INTO "AgentConversation"
          ("id", "projectId", "userId", "title", "lastSeq", "runCount", "headRunId", "createdAt", "updatedAt")
        SELECT ${cid}, ${pid}, ${uid}, ${input.create.title.slice(0, LIMITS.maxTitleChars)}, ${block}, 1, ${runId}, ${NOW}, ${NOW}
        WHERE ${passed}
        ON CONFLICT ("id") DO UPDATE SET ${update} WHERE ${owned}
        RETURNING "id", "lastSeq", ("xmax" = 0) AS "created"`
    : Prisma.sql`UPDATE "AgentConversation" SET ${update} WHERE "id" = ${cid} AND ${owned}
        RETURNING "id", "lastSeq", false AS "created"`;
  // A conversation written without a head (rows from before versions existed) goes on after its
  // latest run rather than starting a second first turn.
  const preceding = input.version
    ? Prisma.sql`${input.version.precedingRunId}::text`
    : Prisma.sql`COALESCE((SELECT "headRunId" FROM prev),
        (SELECT "id" FROM "AgentRun" WHERE "conversationId" = ${cid} ORDER BY "startedAt" DESC, "id" DESC LIMIT 1))`;
  const keyInsert = key
    ? Prisma.sql`, "key" AS (
        INSERT INTO "ApiKey" ("id", "kind", "name", "publicKey", "secretHash", "projectId", "userId", "runId", "expiresAt")
        SELECT ${key.id}, 'IN_APP_AGENT', ${key.name}, ${key.publicKey}, ${key.secretHash}, ${pid}, ${uid}, run."id",
          ${NOW} + make_interval(secs => ${key.ttlSeconds}::int)
        FROM run
      )`
    : Prisma.empty;
  const extra = [...columns, ...(member ? [member.columns] : [])];
  let rows: Array<
    { lastSeq: number | null; precedingRunId: string | null; created: boolean | null } & Partial<MemberColumns> &
      Record<string, unknown>
  >;
  try {
    rows = await db.queryRows(Prisma.sql`
      -- Every part of the statement sees the conversation as it was before it: \`prev\` is the old head.
      WITH ${ctes.length ? Prisma.sql`${Prisma.join(ctes, ',\n      ')},` : Prisma.empty}
      prev AS (SELECT "headRunId" FROM "AgentConversation" WHERE "id" = ${cid}),
      conv AS (${conv}),
      run AS (
        INSERT INTO "AgentRun" ("id", "conversationId", "userId", "status", "startedAt", "lastHeartbeatAt", "selectedAt",
          "modelId", "traceId", "precedingRunId", "resumedFromId", "owner", "leaseExpiresAt", "input", "seqFrom"${Prisma.raw(
            runColumns.map((c) => `, "${c.name}"`).join(''),
          )})
        SELECT ${runId}, conv."id", ${uid}, 'RUNNING', ${NOW}, ${NOW}, ${NOW}, ${input.modelId}, ${input.traceId ?? null},
          ${preceding}, ${input.resumedFromId ?? null}, ${input.lease?.owner ?? null},
          ${NOW} + make_interval(secs => ${input.lease?.seconds ?? LIMITS.leaseSeconds}::int),
          ${input.input ? JSON.stringify(input.input) : null}::jsonb, conv."lastSeq" - ${block}::int${
            runColumns.length
              ? Prisma.sql`, ${Prisma.join(
                  runColumns.map((c) => c.value),
                  ', ',
                )}`
              : Prisma.empty
          }
        FROM conv
        RETURNING "id", "precedingRunId"
      )${keyInsert}
      SELECT conv."lastSeq", run."precedingRunId", conv."created"${extra.length ? Prisma.sql`, ${Prisma.join(extra, ', ')}` : Prisma.empty}
      FROM (SELECT 1) AS one LEFT JOIN (conv JOIN run ON true) ON true${member ? Prisma.sql` LEFT JOIN member ON true` : Prisma.empty}`);
  } catch (err) {
    if (isRunConflict(err))
      throw new AgentRefusal('RUN_IN_PROGRESS', 'Another answer is still being written in this conversation.');
    throw err;
  }
  const row = rows[0];
  const opener = member ? memberOf(row as MemberColumns | undefined, uid) : null;
  if (member && !opener) throw new AgentRefusal('PROJECT_NOT_FOUND', 'Project not found.');
  if (opener && !opener.allowed) throw new AgentRefusal('FORBIDDEN', 'Your role cannot use the assistant here.');
  for (const check of checks) {
    const refused = check.refusal(row);
    if (refused) throw refused;
  }
  if (!row || row.lastSeq === null) {
    const full = await db.queryRows<{ n: number }>(Prisma.sql`
      SELECT count(*)::int AS n FROM "AgentConversation"
      WHERE "id" = ${cid} AND "projectId" = ${pid} AND "userId" = ${uid} AND "deletedAt" IS NULL
        AND "runCount" >= ${max}`);
    if (full[0]?.n) throw new AgentRefusal('CONVERSATION_TOO_LONG');
    return null;
  }
  const seqTo = Number(row.lastSeq);
  return {
    runId,
    conversationId: cid,
    seqFrom: seqTo - block,
    seqTo,
    precedingRunId: row.precedingRunId,
    created: row.created === true,
    ...(opener ? { member: opener.member } : {}),
    row,
  };
}

/** A run as the conversation's tree knows it. */
export interface RunNode {
  id: string;
  precedingRunId: string | null;
  resumedFromId: string | null;
  selectedAt: Date;
  status: string;
}

/** Every run of a conversation (bounded by the size limit), oldest first. */
export async function loadRunTree(prisma: PrismaClient, conversationId: string): Promise<RunNode[]> {
  return prisma.agentRun.findMany({
    where: { conversationId },
    orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
    select: { id: true, precedingRunId: true, resumedFromId: true, selectedAt: true, status: true },
  });
}

function childrenOf(nodes: readonly RunNode[]): Map<string | null, RunNode[]> {
  const children = new Map<string | null, RunNode[]>();
  for (const n of nodes) {
    const list = children.get(n.precedingRunId) ?? [];
    list.push(n);
    children.set(n.precedingRunId, list);
  }
  return children;
}

const selectedOf = (siblings: readonly RunNode[]) =>
  siblings.reduce((a, b) =>
    b.selectedAt.getTime() > a.selectedAt.getTime() ||
    (b.selectedAt.getTime() === a.selectedAt.getTime() && b.id > a.id)
      ? b
      : a,
  );

/**
 * The runs shown, first to last: from the first turn, the selected version of each turn (the run
 * selected last among those following the same run), down to the end. `from` starts the walk below
 * a run instead of at the top (the runs after a newly selected version).
 */
export function selectedPath(nodes: readonly RunNode[], from: string | null = null): string[] {
  const children = childrenOf(nodes);
  const path: string[] = [];
  for (let at = from, guard = 0; guard <= nodes.length; guard++) {
    const next = children.get(at);
    if (!next?.length) break;
    at = selectedOf(next).id;
    path.push(at);
  }
  return path;
}

/** The versions of each turn on the path that has more than one: position (1-based), count, ids. */
function versionsOnPath(nodes: readonly RunNode[], path: readonly string[]): ConversationView['versions'] {
  const children = childrenOf(nodes);
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const out: NonNullable<ConversationView['versions']> = {};
  for (const id of path) {
    const siblings = children.get(byId.get(id)?.precedingRunId ?? null) ?? [];
    if (siblings.length > 1)
      out[id] = {
        index: siblings.findIndex((s) => s.id === id) + 1,
        count: siblings.length,
        runIds: siblings.map((s) => s.id),
      };
  }
  return Object.keys(out).length ? out : undefined;
}

/**
 * Shows another version of a turn: selects it and makes the end of the path below it the
 * conversation's last run. Pending approvals of the branch left are expired (they can no longer be
 * answered). Null when `runId` is no run of this conversation or a run is answering.
 */
export async function selectVersion(
  prisma: PrismaClient,
  conversationId: string,
  runId: string,
): Promise<{ headRunId: string } | null> {
  return prisma.$transaction(async (tx) => {
    const nodes = await loadRunTree(tx as unknown as PrismaClient, conversationId);
    const target = nodes.find((n) => n.id === runId);
    if (!target || nodes.some((n) => n.status === 'RUNNING')) return null;
    const before = new Set(selectedPath(nodes));
    target.selectedAt = new Date();
    const after = selectedPath(nodes);
    await tx.agentRun.update({ where: { id: runId }, data: { selectedAt: target.selectedAt } });
    const headRunId = after.at(-1)!;
    await tx.agentConversation.update({ where: { id: conversationId }, data: { headRunId } });
    const left = [...before].filter((id) => !after.includes(id));
    if (left.length) {
      await tx.agentPendingApproval.updateMany({
        where: { runId: { in: left }, status: 'PENDING' },
        data: { status: 'EXPIRED', decidedAt: new Date() },
      });
    }
    return { headRunId };
  });
}

/** Expires the pending approvals of runs outside the path (a new version replaced their turn). */
export async function expireOffPath(
  prisma: PrismaClient,
  conversationId: string,
  path: readonly string[],
): Promise<void> {
  await prisma.agentPendingApproval.updateMany({
    where: { conversationId, status: 'PENDING', runId: { notIn: [...path] } },
    data: { status: 'EXPIRED', decidedAt: new Date() },
  });
}

/** Records what the run read for the data-flow guard of later runs (only ever turns flags on). */
export async function rememberReads(
  prisma: PrismaClient,
  conversationId: string,
  read: { privateData: boolean; untrustedContent: boolean },
): Promise<void> {
  if (!read.privateData && !read.untrustedContent) return;
  await prisma.agentConversation.update({
    where: { id: conversationId },
    data: {
      ...(read.privateData ? { readPrivateData: true } : {}),
      ...(read.untrustedContent ? { readUntrustedContent: true } : {}),
    },
  });
}

/**
 * Closes RUNNING runs whose heartbeat is older than the stale window (database time, so instances'
 * clocks do not matter) as FAILED (RUN_STALE), with a RUN_ERROR row so replay shows what happened.
 * The row takes a position reserved on the conversation's counter, never one the run may still
 * write; the run's own later writes are refused (they require RUNNING), and its instance, seeing
 * its heartbeat refused, stops. Scoped to one conversation, or all when omitted.
 */
export async function recoverStaleRuns(
  prisma: PrismaClient,
  staleSeconds: number,
  conversationId?: string,
): Promise<number> {
  // The run's MCP key is revoked in the same statement that closes it: a closed run never has a
  // usable key, not even for the moment before its RUN_ERROR row is written.
  const stale = await prisma.$queryRaw<Array<{ id: string; conversationId: string }>>`
    WITH stale AS (
      UPDATE "AgentRun" SET "status" = 'FAILED', "finishedAt" = ${NOW}, "errorCode" = 'RUN_STALE',
        "errorMessage" = 'The run stopped responding and was closed.'
      WHERE "status" = 'RUNNING' AND "lastHeartbeatAt" < ${NOW} - make_interval(secs => ${staleSeconds})
        -- A run that can be taken over is left to the instances that take runs over (takeover.ts),
        -- unless none did for a whole stale window after its lease expired.
        AND ("input" IS NULL OR "leaseExpiresAt" IS NULL
          OR "leaseExpiresAt" < ${NOW} - make_interval(secs => ${staleSeconds}))
        ${conversationId ? Prisma.sql`AND "conversationId" = ${conversationId}` : Prisma.empty}
      RETURNING "id", "conversationId"
    ), revoked AS (
      UPDATE "ApiKey" SET "revokedAt" = ${NOW} WHERE "runId" IN (SELECT "id" FROM stale) AND "revokedAt" IS NULL
    )
    SELECT "id", "conversationId" FROM stale`;
  for (const run of stale) {
    const last = await prisma.agentEvent.findFirst({
      where: { runId: run.id },
      orderBy: { seq: 'desc' },
      select: { payload: true },
    });
    const lastRow = last ? upgradeStoredEvent(last.payload) : null;
    const events: StoredEvent[] = [];
    let pos: number | undefined;
    if (!last) {
      // A run that died before its first write still shows up in replay, as started and failed.
      events.push({
        v: STORED_EVENT_VERSION,
        type: 'RUN_STARTED',
        runId: run.id,
        threadId: run.conversationId,
        pos: 1,
      });
      pos = 2;
    } else if (lastRow?.ok && lastRow.event.pos !== undefined) {
      pos = rowEnd(lastRow.event)! + 1;
    }
    events.push({
      v: STORED_EVENT_VERSION,
      type: 'RUN_ERROR',
      runId: run.id,
      code: 'RUN_STALE',
      message: 'The run stopped responding and was closed.',
      ...(pos === undefined ? {} : { pos }),
    });
    const reserved = await prisma.$queryRaw<Array<{ lastSeq: number }>>`
      UPDATE "AgentConversation" SET "lastSeq" = "lastSeq" + ${events.length} WHERE "id" = ${run.conversationId} RETURNING "lastSeq"`;
    let seq = Number(reserved[0]?.lastSeq ?? 0) - events.length;
    await prisma.agentEvent.createMany({
      data: events.map((event) => ({
        id: newId('ev_'),
        conversationId: run.conversationId,
        runId: run.id,
        seq: ++seq,
        type: event.type,
        schemaVersion: event.v,
        payload: event as Prisma.InputJsonValue,
      })),
    });
  }
  return stale.length;
}

/**
 * On the embedded database one process owns the data, so a run still RUNNING when that process
 * first serves the assistant was left by a previous process (a restart mid-answer): close it now
 * instead of making the user wait out the stale window. Runs once per process.
 */
export function recoverAfterRestart(prisma: PrismaClient, embedded: boolean): Promise<number> {
  return processWide('__inAppAgentRestartRecovery', () => ({
    done: embedded ? recoverStaleRuns(prisma, 0).catch(() => 0) : Promise.resolve(0),
  })).done;
}

/**
 * Starts the periodic stale-run sweep once per process (every half stale window, at least 5 s,
 * unless `everyMs` says otherwise). Runs of conversations nobody posts to again are closed too; so
 * are requests (approvals, questions) past their expiry.
 */
export function startStaleSweep(getPrisma: () => Promise<PrismaClient>, staleSeconds: number, everyMs?: number): void {
  const g = sweepHolder();
  if (g.timer) return;
  let running = false;
  g.timer = setInterval(
    () => {
      if (running) return;
      running = true;
      getPrisma()
        // Approvals and questions past their expiry are marked expired on the same beat (waiting.ts).
        .then((p) => Promise.all([recoverStaleRuns(p, staleSeconds), expireLapsedRequests(p)]))
        .catch((err: unknown) =>
          log().error({ event: 'stale_sweep.failed', error: describeError(err) }, 'stale sweep failed'),
        )
        .finally(() => (running = false));
    },
    everyMs ?? Math.max(5_000, (staleSeconds * 1000) / 2),
  );
  g.timer.unref();
}

function sweepHolder(): { timer?: NodeJS.Timeout } {
  return processWide('__inAppAgentStaleSweep', () => ({}));
}

/** Stops the periodic stale-run sweep (before the database is closed: scripts, tests). */
export function stopStaleSweep(): void {
  const g = sweepHolder();
  if (g.timer) clearInterval(g.timer);
  g.timer = undefined;
}

/**
 * Removes a run that never started (its resume answer was refused): nothing of it was written, and
 * the conversation's last shown run is the one before it again. `created`: the open created the
 * conversation, which goes too when no run is left in it.
 */
export async function discardRun(
  prisma: PrismaClient,
  runId: string,
  created?: { conversationId: string },
): Promise<void> {
  await prisma.$executeRaw`
    WITH gone AS (DELETE FROM "AgentRun" WHERE "id" = ${runId} RETURNING "conversationId", "precedingRunId")
    UPDATE "AgentConversation" AS c SET "headRunId" = gone."precedingRunId", "runCount" = c."runCount" - 1
    FROM gone WHERE c."id" = gone."conversationId" AND c."headRunId" = ${runId}`;
  if (created) {
    await prisma.$executeRaw`
      DELETE FROM "AgentConversation" c WHERE c."id" = ${created.conversationId}
        AND NOT EXISTS (SELECT 1 FROM "AgentRun" r WHERE r."conversationId" = c."id")`;
  }
}

export type RunEnd =
  | { status: 'COMPLETED'; outcome: RunOutcome }
  | { status: 'INTERRUPTED'; outcome: RunOutcome }
  | { status: 'ABORTED' }
  | { status: 'FAILED'; code: AgentErrorCode; message: string };

/** Why a recorder stopped writing: the run was closed elsewhere (the stale sweep), or another instance took it over. */
export type LostReason = 'closed' | 'taken';

export interface RecorderOptions {
  flushIntervalMs?: number;
  heartbeatMs?: number;
  /** How long after a message or tool call ended it is written (default `LIMITS.writeDelayMs`). */
  writeDelayMs?: number;
  /** The generation this recorder writes as (the fencing token of the run's lease; default 1). */
  generation?: number;
  /** How long each heartbeat extends the run's lease (seconds; default `LIMITS.leaseSeconds`). */
  leaseSeconds?: number;
  /** The run was closed elsewhere, or taken over: its writes are refused from now on. */
  onLost?: (why: LostReason) => void;
  /** Stop was pressed where nobody ran the run live (read by the heartbeat). */
  onCancelRequested?: () => void;
  /** ops: how long a write is retried while the database is unavailable (default `LIMITS.writeRetryBudgetMs`). */
  writeRetryBudgetMs?: number;
  /**
   * What a row becomes before it is stored (masking: redaction.ts). It must keep every text's
   * length, so stored positions stay those of the live stream. The live stream is not changed.
   */
  storedForm?: (event: StoredEvent) => StoredEvent;
}

/**
 * Records one run's events: feeds the compactor, writes its row operations in order (one write
 * chain per run), flushes long messages on a timer and keeps the heartbeat (and the lease) fresh.
 * Every write requires the run to still be RUNNING in this recorder's generation: once something
 * else closed it or another instance took it over, nothing more is written and `onLost` is called.
 */
export class RunRecorder {
  private readonly compactor: Compactor;
  private chain: Promise<void> = Promise.resolve();
  private pending: WriteOp[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The write of what ended lately (`LIMITS.writeDelayMs`). */
  private soon: NodeJS.Timeout | undefined;
  private lastHeartbeat = Date.now();
  private key: { id: string; ttlSeconds: number; extendAt: number } | undefined;
  private writeError: unknown;
  private lost = false;
  private lostReason: LostReason | undefined;
  private readonly generation: number;
  /** Statements issued, for the bench's O(messages) check. */
  statements = 0;

  constructor(
    private readonly prisma: PrismaClient,
    readonly conversationId: string,
    readonly runId: string,
    seqs: { seqFrom: number; seqTo: number },
    private readonly opts: RecorderOptions = {},
  ) {
    this.compactor = new Compactor(seqs.seqFrom, opts.flushIntervalMs ?? LIMITS.flushIntervalMs, Date.now, seqs.seqTo);
    this.generation = opts.generation ?? 1;
    this.retry = {
      budgetMs: opts.writeRetryBudgetMs ?? LIMITS.writeRetryBudgetMs,
      onRetry: (err, attempt) =>
        log().warn(
          { event: 'run.write_retried', runId, attempt, error: describeError(err) },
          'a write of the run is retried: the database is unavailable',
        ),
    };
  }

  /** A third of the lease: two beats may be late before the lease runs out. */
  private heartbeatMs(): number {
    return this.opts.heartbeatMs ?? Math.round(((this.opts.leaseSeconds ?? LIMITS.leaseSeconds) * 1000) / 3);
  }

  /** The run is still RUNNING in this recorder's generation (every write's guard). */
  private running(): Prisma.Sql {
    return Prisma.sql`EXISTS (SELECT 1 FROM "AgentRun" WHERE "id" = ${this.runId} AND "status" = 'RUNNING'
      AND "generation" = ${this.generation}::int)`;
  }

  /** Whether the run was closed elsewhere while this recorder wrote it. */
  get isLost(): boolean {
    return this.lost;
  }

  /** Whether another instance took the run over while this recorder wrote it. */
  get isTaken(): boolean {
    return this.lostReason === 'taken';
  }

  start(): void {
    const every = Math.min(this.opts.flushIntervalMs ?? LIMITS.flushIntervalMs, this.heartbeatMs());
    this.timer = setInterval(() => this.tick(), every);
    this.timer.unref();
  }

  /**
   * Keeps the run's MCP key alive with the heartbeat: once half its lifetime has passed it is
   * extended by another lifetime, so a long run never outlives its key (and a dead run's key
   * still expires soon after its last heartbeat).
   */
  keepKeyAlive(keyId: string, ttlSeconds: number): void {
    this.key = { id: keyId, ttlSeconds, extendAt: Date.now() + (ttlSeconds * 1000) / 2 };
  }

  private markLost(why: LostReason): void {
    if (this.lost) return;
    this.lost = true;
    this.lostReason = why;
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.soon);
    this.opts.onLost?.(why);
  }

  /** After a refused write: why (the run was closed, or another generation took it over). */
  private async lostWhy(): Promise<LostReason> {
    const rows = await driverOf(this.prisma)
      .queryRows<{ status: string; generation: number }>(
        Prisma.sql`SELECT "status"::text AS "status", "generation" FROM "AgentRun" WHERE "id" = ${this.runId}`,
      )
      .catch(() => []);
    const row = rows[0];
    // Another generation holds it, or held it and has already ended it: taken either way (this
    // instance ends nothing, the watchers follow the run to where it went).
    return row && row.generation !== this.generation ? 'taken' : 'closed';
  }

  private tick(): void {
    const due = this.compactor.flushDue();
    if (due.length) this.enqueue(due, true);
    const now = Date.now();
    if (now - this.lastHeartbeat >= this.heartbeatMs()) {
      this.lastHeartbeat = now;
      const key = this.key && now >= this.key.extendAt ? this.key : undefined;
      if (key) key.extendAt = now + (key.ttlSeconds * 1000) / 2;
      this.chain = this.chain
        .then(async () => {
          if (this.lost) return;
          this.statements += 1;
          // The heartbeat renews the lease, in this generation only; it also reads whether Stop was
          // pressed where nobody ran the run live.
          const lease = this.opts.leaseSeconds ?? LIMITS.leaseSeconds;
          const [beat] = await driverOf(this.prisma).queryRows<{ cancel: boolean }>(Prisma.sql`
            UPDATE "AgentRun" SET "lastHeartbeatAt" = ${NOW}, "leaseExpiresAt" = ${NOW} + make_interval(secs => ${lease}::int)
            WHERE "id" = ${this.runId} AND "status" = 'RUNNING' AND "generation" = ${this.generation}::int
            RETURNING "cancelRequested" AS "cancel"`);
          if (!beat) return this.markLost(await this.lostWhy());
          if (beat.cancel) this.opts.onCancelRequested?.();
          if (key) {
            this.statements += 1;
            await this.prisma.apiKey.updateMany({
              where: { id: key.id, revokedAt: null },
              data: { expiresAt: new Date(Date.now() + key.ttlSeconds * 1000) },
            });
          }
        })
        .catch((err: unknown) => {
          this.writeError ??= err;
        });
    }
  }

  /** Records a live event at its position; writes happen in the background, in order. */
  record(event: AgentEvent, pos?: number): void {
    if (this.lost) return;
    const ops = this.compactor.push(event, pos);
    if (!ops.length) return;
    // Messages and tool calls are written soon after they end (LIMITS.writeDelayMs); everything
    // else rides along with them or with the run's last statement, so a short answer costs one
    // statement after its open and a long one a handful.
    const urgent =
      event.type !== 'CUSTOM' &&
      event.type !== 'RUN_STARTED' &&
      event.type !== 'RUN_FINISHED' &&
      event.type !== 'RUN_ERROR';
    this.enqueue(ops, urgent);
  }

  private enqueue(ops: WriteOp[], flushSoon: boolean): void {
    for (const op of ops) {
      if (op.event.type === 'RUN_ERROR') op.event = { ...op.event, runId: this.runId };
      this.pending.push(op);
    }
    if (flushSoon && !this.soon) {
      this.soon = setTimeout(() => {
        this.soon = undefined;
        this.flushPending();
      }, this.opts.writeDelayMs ?? LIMITS.writeDelayMs);
      this.soon.unref();
    }
  }

  /**
   * ops: runs a write again while the database is briefly unavailable, so it lands once it is back;
   * each retry is a warning (the run's answer waits for it).
   */
  private durable<T>(work: () => Promise<T>): Promise<T> {
    return retryWhileUnavailable(work, this.retry);
  }

  /** How `durable` retries: made once per run, not per write. */
  private readonly retry: Parameters<typeof retryWhileUnavailable>[1];

  private flushPending(): void {
    clearTimeout(this.soon);
    this.soon = undefined;
    if (!this.pending.length) return;
    const batch = coalesce(this.pending);
    this.pending = [];
    this.chain = this.chain
      .then(() => this.durable(() => this.write(batch)))
      .catch((err: unknown) => {
        this.writeError ??= err;
      });
  }

  /**
   * The statements that write a batch: the updates of rows already written, then the new rows, each
   * writing only when `guard` holds (the run is still RUNNING). One statement each, or, in the
   * run's last statement, two parts of it.
   */
  private eventWrites(ops: WriteOp[], guard: Prisma.Sql): { updates: Prisma.Sql | null; inserts: Prisma.Sql | null } {
    const inserts = ops.filter((o) => o.kind === 'insert');
    const updates = ops.filter((o) => o.kind === 'update');
    const stored = this.opts.storedForm ?? ((e: StoredEvent) => e);
    return {
      updates: updates.length
        ? Prisma.sql`
        UPDATE "AgentEvent" AS e SET "payload" = x.payload::jsonb
        FROM unnest(${updates.map((o) => o.seq)}::int[], ${updates.map((o) => JSON.stringify(stored(o.event)))}::text[]) AS x(seq, payload)
        WHERE e."conversationId" = ${this.conversationId} AND e."seq" = x.seq AND ${guard}`
        : null,
      inserts: inserts.length
        ? Prisma.sql`
        INSERT INTO "AgentEvent" ("id", "conversationId", "runId", "seq", "type", "schemaVersion", "payload", "messageId", "createdAt")
        SELECT x.id, ${this.conversationId}, ${this.runId}, x.seq, x.type, x.v, x.payload::jsonb, x.message_id, ${NOW}
        FROM unnest(
          ${inserts.map(() => newId('ev_'))}::text[], ${inserts.map((o) => o.seq)}::int[],
          ${inserts.map((o) => o.event.type)}::text[], ${inserts.map((o) => o.event.v)}::int[],
          ${inserts.map((o) => JSON.stringify(stored(o.event)))}::text[],
          ${inserts.map((o) => (o.event.type === 'TEXT_MESSAGE' ? o.event.messageId : null))}::text[]
        ) AS x(id, seq, type, v, payload, message_id)
        WHERE ${guard}`
        : null,
    };
  }

  /**
   * Writes a batch: updates of rows already written first, then the new rows (so a reader never
   * sees a later row beside an older version of an earlier one), each as one statement that
   * requires the run to still be RUNNING.
   */
  private async write(ops: WriteOp[]): Promise<void> {
    if (this.lost) return;
    // Every run writes through here: straight to the driver (see Database.queryRows).
    const db = driverOf(this.prisma);
    const { updates, inserts } = this.eventWrites(ops, this.running());
    for (const statement of [updates, inserts]) {
      if (!statement) continue;
      this.statements += 1;
      if ((await db.execute(statement)) === 0) return this.markLost(await this.lostWhy());
    }
  }

  /** Waits for every queued write (used before reading the conversation back). */
  async settle(): Promise<void> {
    this.flushPending();
    await this.chain;
  }

  /**
   * A model step's output is whole at `pos` (the position its last event took): writes every row
   * that ended so far and the run's checkpoint (`pos`, how many steps, their usage, whether the
   * step ended the answer) in one statement, in this generation only, after the writes under way.
   * Resolves once it is stored; false when the run is no longer this recorder's to write.
   */
  async checkpoint(point: { pos: number; steps: number; usage: Usage; final: boolean }): Promise<boolean> {
    clearTimeout(this.soon);
    this.soon = undefined;
    const rows = coalesce(this.pending);
    this.pending = [];
    await this.chain;
    if (this.lost) return false;
    const write = async () => {
      this.statements += 1;
      const { updates, inserts } = this.eventWrites(rows, Prisma.sql`EXISTS (SELECT 1 FROM run)`);
      const done = await driverOf(this.prisma).queryRows<{ ok: number }>(Prisma.sql`
        WITH run AS (
          UPDATE "AgentRun" SET "checkpointPos" = ${point.pos}::double precision, "checkpointSteps" = ${point.steps}::int,
            "checkpointFinal" = ${point.final}, "checkpointUsage" = ${JSON.stringify(point.usage)}::jsonb
          WHERE "id" = ${this.runId} AND "status" = 'RUNNING' AND "generation" = ${this.generation}::int
          RETURNING "id"
        )${updates ? Prisma.sql`, updated AS (${updates})` : Prisma.empty}${inserts ? Prisma.sql`, inserted AS (${inserts})` : Prisma.empty}
        SELECT 1 AS "ok" FROM run`);
      if (done.length === 0) this.markLost(await this.lostWhy());
    };
    const next = this.chain.then(() => this.durable(write));
    this.chain = next.catch((err: unknown) => {
      this.writeError ??= err;
    });
    await next.catch(() => undefined);
    return !this.lost;
  }

  /**
   * Lets the run go without ending it (the drain's end: this instance stops): its lease expires now
   * and it has no owner, in this generation only, so another instance takes it over at once. What
   * was not stored at a checkpoint is left to the next owner, which streams it again. Nothing more
   * is written by this recorder. Resolves to whether the run was still this recorder's.
   */
  async release(): Promise<boolean> {
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.soon);
    this.pending = [];
    await this.chain;
    if (this.lost) return false;
    this.lost = true;
    this.statements += 1;
    const released = await this.durable(() =>
      driverOf(this.prisma).execute(Prisma.sql`
        UPDATE "AgentRun" SET "owner" = NULL, "leaseExpiresAt" = ${NOW}
        WHERE "id" = ${this.runId} AND "status" = 'RUNNING' AND "generation" = ${this.generation}::int`),
    );
    return released === 1;
  }

  /**
   * Closes the run in one statement, after the writes already under way: the rows still open (the
   * end of the answer, the terminal event), the final status and usage (only while still RUNNING:
   * a sweep may have closed it; the rows are written only then), its spend on the budgets' windows
   * (budgets.ts), the conversation's time and the revocation of the run's MCP keys. A row the
   * database refuses (text it cannot store) does not keep the run open: it is logged and the run is
   * closed without it. Resolves to whether that statement ran (false when the run was closed
   * elsewhere: the caller revokes the keys itself).
   */
  async finish(
    end: RunEnd,
    usage?: { inputTokens?: number; outputTokens?: number; costUsd?: number; estimated?: boolean },
  ): Promise<boolean> {
    if (this.timer) clearInterval(this.timer);
    clearTimeout(this.soon);
    this.enqueue(this.compactor.drain(), false);
    const last = coalesce(this.pending);
    this.pending = [];
    await this.chain;
    if (this.writeError) {
      log().error(
        { event: 'run.write_failed', runId: this.runId, error: describeError(this.writeError) },
        'an event write of the run failed',
      );
    }
    if (this.lost) return false;
    const close = (rows: WriteOp[]) => {
      this.statements += 1;
      return this.durable(() => driverOf(this.prisma).execute(this.finishStatement(end, rows, usage)));
    };
    try {
      await close(last);
    } catch (err) {
      if (!last.length) throw err;
      log().error(
        { event: 'run.rows_refused', runId: this.runId, rows: last.length, error: describeError(err) },
        'the last rows of the run were refused; the run is closed without them',
      );
      await close([]);
    }
    return true;
  }

  private finishStatement(
    end: RunEnd,
    rows: WriteOp[],
    usage?: { inputTokens?: number; outputTokens?: number; costUsd?: number; estimated?: boolean },
  ): Prisma.Sql {
    const failed = end.status === 'FAILED';
    const { updates, inserts } = this.eventWrites(rows, Prisma.sql`EXISTS (SELECT 1 FROM run)`);
    // The run's spend, counted on its windows for the budgets (budgets.ts), in the same statement.
    const spent = spendCte('run', usage);
    return Prisma.sql`
        WITH run AS (
          UPDATE "AgentRun" SET "status" = ${end.status}::"AgentRunStatus", "finishedAt" = ${NOW}, "owner" = NULL,
            "leaseExpiresAt" = NULL,
            "inputTokens" = ${usage?.inputTokens ?? null}, "outputTokens" = ${usage?.outputTokens ?? null},
            "costUsd" = ${usage?.costUsd ?? null}::double precision, "usageEstimated" = ${usage?.estimated === true},
            "errorCode" = ${failed ? end.code : null}, "errorMessage" = ${failed ? end.message.slice(0, 1000) : null}
          WHERE "id" = ${this.runId} AND "status" = 'RUNNING' AND "generation" = ${this.generation}::int
          RETURNING "conversationId", "userId"
        ),${spent ? Prisma.sql` ${spent},` : Prisma.empty}${updates ? Prisma.sql` updated AS (${updates}),` : Prisma.empty}${inserts ? Prisma.sql` inserted AS (${inserts}),` : Prisma.empty}
        revoked AS (
          UPDATE "ApiKey" SET "revokedAt" = ${NOW} WHERE "runId" = ${this.runId} AND "revokedAt" IS NULL
        )
        UPDATE "AgentConversation" SET "updatedAt" = ${NOW} WHERE "id" IN (SELECT "conversationId" FROM run)`;
  }
}

/** One run's stored rows in order (to resume a watcher from a position after the run ended). */
export async function loadRunRows(prisma: PrismaClient, conversationId: string, runId: string): Promise<StoredEvent[]> {
  const rows = await prisma.agentEvent.findMany({
    where: { runId },
    orderBy: { seq: 'asc' },
    select: { seq: true, payload: true },
  });
  return readRows(conversationId, rows, {});
}

/** A run's owner and state, for the reattach and stop endpoints. */
export async function findRun(prisma: PrismaClient, runId: string) {
  return prisma.agentRun.findUnique({
    where: { id: runId },
    select: {
      id: true,
      status: true,
      conversationId: true,
      generation: true,
      leaseExpiresAt: true,
      conversation: { select: { projectId: true, userId: true, deletedAt: true } },
    },
  });
}

/**
 * Stop pressed where no instance runs the run live (its instance died): the next owner ends it as
 * cancelled. False when it is no longer RUNNING.
 */
export async function requestCancel(prisma: PrismaClient, runId: string): Promise<boolean> {
  const n = await driverOf(prisma).execute(
    Prisma.sql`UPDATE "AgentRun" SET "cancelRequested" = true WHERE "id" = ${runId} AND "status" = 'RUNNING'`,
  );
  return n === 1;
}

/** The RUNNING run of a conversation, if any (the panel reattaches to it). */
export async function runningRunOf(prisma: PrismaClient, conversationId: string): Promise<string | null> {
  const run = await prisma.agentRun.findFirst({ where: { conversationId, status: 'RUNNING' }, select: { id: true } });
  return run?.id ?? null;
}

export interface ReplayOptions {
  /** A simulated schema version and its upgrade steps (tests); defaults to the module's own. */
  upgrade?: { version: number; steps: Readonly<Record<number, StoredEventUpgrade>> };
  /**
   * Leave out this run's rows (a watcher attaching to it gets the conversation before it, then the
   * run's own events). Its versions stay in the view: a run that is a new version of a turn is
   * counted as such from its first event.
   */
  excludeRunId?: string;
  /** One page: the last `runs` runs of the shown path, before the run `before` when given. */
  page?: { runs: number; before?: string };
}

/** Parses stored payloads, upgrading older versions; an unreadable row is logged and left out. */
function readRows(
  conversationId: string,
  rows: Array<{ seq: number; payload: unknown }>,
  opts: ReplayOptions,
): StoredEvent[] {
  const out: StoredEvent[] = [];
  const skipped: string[] = [];
  for (const r of rows) {
    const res = upgradeStoredEvent(r.payload, opts.upgrade ?? {});
    if (res.ok) out.push(res.event);
    else skipped.push(`seq ${r.seq}: ${res.reason}`);
  }
  if (skipped.length) {
    log().warn(
      { event: 'replay.rows_skipped', conversationId, count: skipped.length, rows: skipped.slice(0, 5) },
      'stored events that could not be read were left out of the replay',
    );
  }
  return out;
}

/** The stored rows of these runs, in order (a later run of a path always has later rows). */
async function rowsOfRuns(
  prisma: PrismaClient,
  conversationId: string,
  runIds: readonly string[],
  opts: ReplayOptions,
): Promise<StoredEvent[]> {
  if (!runIds.length) return [];
  const rows = await prisma.agentEvent.findMany({
    where: { conversationId, runId: { in: [...runIds] } },
    orderBy: { seq: 'asc' },
    select: { seq: true, payload: true },
  });
  return readRows(conversationId, rows, opts);
}

/**
 * A page of the conversation as the panel shows it: the selected version of every turn, the last
 * `page.runs` runs of that path (all of it without `page`), folded with the live reducer, with the
 * versions of its turns. `olderBefore`: the run to ask for the previous page with, or null.
 */
export async function replayPage(
  prisma: PrismaClient,
  conversationId: string,
  opts: ReplayOptions = {},
): Promise<{ view: ConversationView; olderBefore: string | null }> {
  const nodes = await loadRunTree(prisma, conversationId);
  let path = selectedPath(nodes);
  if (opts.excludeRunId) path = path.filter((id) => id !== opts.excludeRunId);
  let end = path.length;
  if (opts.page?.before) {
    const at = path.indexOf(opts.page.before);
    end = Math.max(at, 0);
  }
  const start = opts.page ? Math.max(0, end - opts.page.runs) : 0;
  const runs = path.slice(start, end);
  const view = foldEvents(expand(await rowsOfRuns(prisma, conversationId, runs, opts)), emptyView(conversationId));
  const excluded = opts.excludeRunId && !opts.page?.before ? [opts.excludeRunId] : [];
  const versions = versionsOnPath(nodes, [...runs, ...excluded.filter((id) => nodes.some((n) => n.id === id))]);
  if (versions) view.versions = versions;
  return { view, olderBefore: start > 0 ? path[start]! : null };
}

/** Replays a conversation (the whole shown path) into the view the panel renders. */
export async function replayConversation(
  prisma: PrismaClient,
  conversationId: string,
  opts: ReplayOptions = {},
): Promise<ConversationView> {
  return (await replayPage(prisma, conversationId, { ...opts, page: undefined })).view;
}

/** Every stored row of the conversation, all versions included, in order (the review export). */
export async function loadStoredEvents(
  prisma: PrismaClient,
  conversationId: string,
  opts: ReplayOptions = {},
): Promise<Array<StoredEvent & { runId: string }>> {
  const rows = await prisma.agentEvent.findMany({
    where: { conversationId },
    orderBy: { seq: 'asc' },
    select: { seq: true, payload: true, runId: true },
  });
  const out: Array<StoredEvent & { runId: string }> = [];
  for (const r of rows) {
    const [event] = readRows(conversationId, [r], opts);
    if (event) out.push({ ...event, runId: r.runId });
  }
  return out;
}

/**
 * The model's history: the shown path before this run, read newest first and only as far back as
 * the budget reaches (plus what a turn needs to stay whole), so a run's cost does not grow with
 * the conversation's age. The token budget decides later what is sent; this decides what is read.
 */
export async function historyWindow(
  prisma: PrismaClient,
  conversationId: string,
  input: { excludeRunId: string; budgetChars: number; pageRows?: number },
): Promise<ConversationView> {
  const nodes = await loadRunTree(prisma, conversationId);
  const path = selectedPath(nodes).filter((id) => id !== input.excludeRunId);
  if (!path.length) return emptyView(conversationId);
  const pageRows = input.pageRows ?? 200;
  const collected: Array<{ seq: number; payload: unknown; runId: string }> = [];
  let chars = 0;
  let before: number | undefined;
  for (;;) {
    // Every follow-up turn reads here before the model is asked: straight to the driver.
    const rows = await driverOf(prisma).queryRows<{ seq: number; payload: unknown; runId: string }>(Prisma.sql`
      SELECT "seq", "payload", "runId" FROM "AgentEvent"
      WHERE "conversationId" = ${conversationId} AND "runId" = ANY(${path}::text[])
        ${before === undefined ? Prisma.empty : Prisma.sql`AND "seq" < ${before}`}
      ORDER BY "seq" DESC
      LIMIT ${pageRows}`);
    for (const r of rows) {
      if (chars >= input.budgetChars) break;
      collected.push(r);
      chars += JSON.stringify(r.payload).length;
    }
    if (rows.length < pageRows || chars >= input.budgetChars) break;
    before = rows.at(-1)!.seq;
  }
  // Start at a run's beginning so every message and tool call of the window is whole (a window
  // inside one long run starts mid-run: the model's history drops what comes before a user turn).
  collected.reverse();
  const start = collected.findIndex((r) => (r.payload as { type?: string }).type === 'RUN_STARTED');
  const window = start > 0 ? collected.slice(start) : collected;
  return foldEvents(expand(readRows(conversationId, window, {})), emptyView(conversationId));
}

/** What the conversation has read so far (the data-flow guard's memory beyond the window). */
export async function conversationReads(
  prisma: PrismaClient,
  conversationId: string,
): Promise<{ privateData: boolean; untrustedContent: boolean }> {
  const rows = await driverOf(prisma).queryRows<{ readPrivateData: boolean; readUntrustedContent: boolean }>(
    Prisma.sql`SELECT "readPrivateData", "readUntrustedContent" FROM "AgentConversation" WHERE "id" = ${conversationId}`,
  );
  const c = rows[0];
  return { privateData: c?.readPrivateData ?? false, untrustedContent: c?.readUntrustedContent ?? false };
}

/** A turn's user message, its parts (a regeneration asks the same again), or null when it has none. */
export async function userMessageOfRun(prisma: PrismaClient, runId: string): Promise<MessagePart[] | null> {
  const rows = await prisma.agentEvent.findMany({
    where: { runId, type: 'TEXT_MESSAGE' },
    orderBy: { seq: 'asc' },
    select: { payload: true },
  });
  for (const r of rows) {
    const read = upgradeStoredEvent(r.payload);
    if (!read.ok || read.event.type !== 'TEXT_MESSAGE' || read.event.role !== 'user') continue;
    const parts = read.event.parts ?? (read.event.content ? [{ type: 'text' as const, text: read.event.content }] : []);
    return parts.length ? parts : null;
  }
  return null;
}
