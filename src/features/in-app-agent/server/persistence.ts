/**
 * Conversations, runs, compacted events, replay and stale-run recovery.
 * Rows are written per message or tool call (see compact.ts), never per token.
 */
import { Prisma, type PrismaClient } from '@/generated/prisma/client';
import { retryWhileUnavailable } from '@/server/errors'; // ops: recorder writes survive a short database outage
import { newId } from '@/server/ids';
import { Compactor, coalesce, expand, rowEnd, type WriteOp } from '../compact';
import { LIMITS, STORED_EVENT_VERSION, type AgentErrorCode } from '../constants';
import { emptyView, foldEvents } from '../fold';
import { upgradeStoredEvent, type AgentEvent, type ConversationView, type RunOutcome, type StoredEvent, type StoredEventUpgrade } from '../schema';

export class RunConflictError extends Error {
  readonly code = 'RUN_IN_PROGRESS' as const;
  constructor() {
    super('Another answer is still being written in this conversation.');
  }
}

export function titleFrom(message: string): string {
  const oneLine = message.replace(/\s+/g, ' ').trim();
  return oneLine.length > 60 ? `${oneLine.slice(0, 57)}…` : oneLine || 'New conversation';
}

/** Database time in UTC, as the schema's `timestamp(3)` columns hold it (instances' clocks may differ). */
const NOW = Prisma.sql`(now() AT TIME ZONE 'UTC')`;

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
}

/**
 * Opens a run in ONE statement: checks that the conversation is the user's (or creates it, with
 * the id the client chose, when `create` is given), reserves the run's block of row positions on
 * the conversation's counter (so nothing else, such as the stale sweep, can write into it), bumps
 * the conversation's time, and inserts the RUNNING run. Null: no such conversation of this user
 * and project (or another user's or project's: the same answer). RunConflictError: a run is
 * already RUNNING there (the partial unique index).
 */
export async function openRunRow(
  prisma: PrismaClient,
  input: {
    runId: string;
    conversationId: string;
    projectId: string;
    userId: string;
    modelId: string;
    traceId?: string;
    /** Create the conversation with this title when it does not exist. */
    create?: { title: string };
  },
): Promise<OpenedRun | null> {
  const block = LIMITS.runSeqBlock;
  const { conversationId: cid, projectId: pid, userId: uid } = input;
  const conv = input.create
    ? Prisma.sql`INSERT INTO "AgentConversation" ("id", "projectId", "userId", "title", "lastSeq", "createdAt", "updatedAt")
        VALUES (${cid}, ${pid}, ${uid}, ${input.create.title.slice(0, LIMITS.maxTitleChars)}, ${block}, ${NOW}, ${NOW})
        ON CONFLICT ("id") DO UPDATE SET "lastSeq" = "AgentConversation"."lastSeq" + ${block}, "updatedAt" = ${NOW}
        WHERE "AgentConversation"."projectId" = ${pid} AND "AgentConversation"."userId" = ${uid}
          AND "AgentConversation"."deletedAt" IS NULL
        RETURNING "id", "lastSeq"`
    : Prisma.sql`UPDATE "AgentConversation" SET "lastSeq" = "lastSeq" + ${block}, "updatedAt" = ${NOW}
        WHERE "id" = ${cid} AND "projectId" = ${pid} AND "userId" = ${uid} AND "deletedAt" IS NULL
        RETURNING "id", "lastSeq"`;
  try {
    const rows = await prisma.$queryRaw<Array<{ lastSeq: number }>>`
      WITH conv AS (${conv}),
      run AS (
        INSERT INTO "AgentRun" ("id", "conversationId", "userId", "status", "startedAt", "lastHeartbeatAt", "modelId", "traceId")
        SELECT ${input.runId}, conv."id", ${uid}, 'RUNNING', ${NOW}, ${NOW}, ${input.modelId}, ${input.traceId ?? null} FROM conv
        RETURNING "id"
      )
      SELECT conv."lastSeq" FROM conv JOIN run ON true`;
    const row = rows[0];
    if (!row) return null;
    const seqTo = Number(row.lastSeq);
    return { runId: input.runId, conversationId: cid, seqFrom: seqTo - block, seqTo };
  } catch (err) {
    if (isRunConflict(err)) throw new RunConflictError();
    throw err;
  }
}

/**
 * Closes RUNNING runs whose heartbeat is older than the stale window (database time, so instances'
 * clocks do not matter) as FAILED (RUN_STALE), with a RUN_ERROR row so replay shows what happened.
 * The row takes a position reserved on the conversation's counter, never one the run may still
 * write; the run's own later writes are refused (they require RUNNING), and its instance, seeing
 * its heartbeat refused, stops. Scoped to one conversation, or all when omitted.
 */
export async function recoverStaleRuns(prisma: PrismaClient, staleSeconds: number, conversationId?: string): Promise<number> {
  const stale = await prisma.$queryRaw<Array<{ id: string; conversationId: string }>>`
    UPDATE "AgentRun" SET "status" = 'FAILED', "finishedAt" = ${NOW}, "errorCode" = 'RUN_STALE',
      "errorMessage" = 'The run stopped responding and was closed.'
    WHERE "status" = 'RUNNING' AND "lastHeartbeatAt" < ${NOW} - make_interval(secs => ${staleSeconds})
      ${conversationId ? Prisma.sql`AND "conversationId" = ${conversationId}` : Prisma.empty}
    RETURNING "id", "conversationId"`;
  for (const run of stale) {
    const last = await prisma.agentEvent.findFirst({ where: { runId: run.id }, orderBy: { seq: 'desc' }, select: { payload: true } });
    const lastRow = last ? upgradeStoredEvent(last.payload) : null;
    const events: StoredEvent[] = [];
    let pos: number | undefined;
    if (!last) {
      // A run that died before its first write still shows up in replay, as started and failed.
      events.push({ v: STORED_EVENT_VERSION, type: 'RUN_STARTED', runId: run.id, threadId: run.conversationId, pos: 1 });
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
    await prisma.apiKey.updateMany({ where: { runId: run.id, revokedAt: null }, data: { revokedAt: new Date() } });
  }
  return stale.length;
}

/**
 * On the embedded database one process owns the data, so a run still RUNNING when that process
 * first serves the assistant was left by a previous process (a restart mid-answer): close it now
 * instead of making the user wait out the stale window. Runs once per process.
 */
export function recoverAfterRestart(prisma: PrismaClient, embedded: boolean): Promise<number> {
  const g = globalThis as { __inAppAgentRestartRecovery?: Promise<number> };
  g.__inAppAgentRestartRecovery ??= embedded ? recoverStaleRuns(prisma, 0).catch(() => 0) : Promise.resolve(0);
  return g.__inAppAgentRestartRecovery;
}

/**
 * Starts the periodic stale-run sweep once per process (every half stale window, at least 5 s,
 * unless `everyMs` says otherwise). Runs of conversations nobody posts to again are closed too.
 */
export function startStaleSweep(getPrisma: () => Promise<PrismaClient>, staleSeconds: number, everyMs?: number): void {
  const g = globalThis as { __inAppAgentSweep?: NodeJS.Timeout };
  if (g.__inAppAgentSweep) return;
  let running = false;
  g.__inAppAgentSweep = setInterval(() => {
    if (running) return;
    running = true;
    getPrisma()
      .then((p) => recoverStaleRuns(p, staleSeconds))
      .catch((err: unknown) => console.error('[in-app-agent] stale sweep failed', err))
      .finally(() => (running = false));
  }, everyMs ?? Math.max(5_000, (staleSeconds * 1000) / 2));
  g.__inAppAgentSweep.unref();
}

/** Stops the periodic stale-run sweep (before the database is closed: scripts, tests). */
export function stopStaleSweep(): void {
  const g = globalThis as { __inAppAgentSweep?: NodeJS.Timeout };
  if (g.__inAppAgentSweep) clearInterval(g.__inAppAgentSweep);
  g.__inAppAgentSweep = undefined;
}

/** Removes a run that never started (its resume answer was refused): nothing of it was written. */
export async function discardRun(prisma: PrismaClient, runId: string): Promise<void> {
  await prisma.agentRun.deleteMany({ where: { id: runId } });
}

export type RunEnd =
  | { status: 'COMPLETED'; outcome: RunOutcome }
  | { status: 'INTERRUPTED'; outcome: RunOutcome }
  | { status: 'ABORTED' }
  | { status: 'FAILED'; code: AgentErrorCode; message: string };

export interface RecorderOptions {
  flushIntervalMs?: number;
  heartbeatMs?: number;
  /** The run was closed elsewhere (stale sweep): its writes are refused from now on. */
  onLost?: () => void;
  /** ops: how long a write is retried while the database is unavailable (default 30 s). */
  writeRetryBudgetMs?: number;
}

/**
 * Records one run's events: feeds the compactor, writes its row operations in order (one write
 * chain per run), flushes long messages on a timer and keeps the heartbeat fresh. Every write
 * requires the run to still be RUNNING: once something else closed it, nothing more is written and
 * `onLost` is called.
 */
export class RunRecorder {
  private readonly compactor: Compactor;
  private chain: Promise<void> = Promise.resolve();
  private pending: WriteOp[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastHeartbeat = Date.now();
  private key: { id: string; ttlSeconds: number; extendAt: number } | undefined;
  private writeError: unknown;
  private lost = false;
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
  }

  /** Whether the run was closed elsewhere while this recorder wrote it. */
  get isLost(): boolean {
    return this.lost;
  }

  start(): void {
    const every = Math.min(this.opts.flushIntervalMs ?? LIMITS.flushIntervalMs, this.opts.heartbeatMs ?? LIMITS.heartbeatMs);
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

  private markLost(): void {
    if (this.lost) return;
    this.lost = true;
    if (this.timer) clearInterval(this.timer);
    this.opts.onLost?.();
  }

  private tick(): void {
    const due = this.compactor.flushDue();
    if (due.length) this.enqueue(due, true);
    const now = Date.now();
    if (now - this.lastHeartbeat >= (this.opts.heartbeatMs ?? LIMITS.heartbeatMs)) {
      this.lastHeartbeat = now;
      const key = this.key && now >= this.key.extendAt ? this.key : undefined;
      if (key) key.extendAt = now + (key.ttlSeconds * 1000) / 2;
      this.chain = this.chain
        .then(async () => {
          if (this.lost) return;
          this.statements += 1;
          const alive = await this.prisma.$executeRaw`
            UPDATE "AgentRun" SET "lastHeartbeatAt" = ${NOW} WHERE "id" = ${this.runId} AND "status" = 'RUNNING'`;
          if (alive === 0) return this.markLost();
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
    // Messages and tool calls are written when they end; everything else rides along with them
    // or with the final write, so a plain answer costs a handful of statements.
    const urgent = event.type !== 'CUSTOM' && event.type !== 'RUN_STARTED' && event.type !== 'RUN_FINISHED' && event.type !== 'RUN_ERROR';
    this.enqueue(ops, urgent);
  }

  private enqueue(ops: WriteOp[], flushNow: boolean): void {
    for (const op of ops) {
      if (op.event.type === 'RUN_ERROR') op.event = { ...op.event, runId: this.runId };
      this.pending.push(op);
    }
    if (flushNow) this.flushPending();
  }

  /** ops: runs a write again while the database is briefly unavailable, so it lands once it is back. */
  private durable<T>(work: () => Promise<T>): Promise<T> {
    return retryWhileUnavailable(work, { budgetMs: this.opts.writeRetryBudgetMs ?? 30_000 });
  }

  private flushPending(): void {
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
   * Writes a batch: updates of rows already written first, then the new rows (so a reader never
   * sees a later row beside an older version of an earlier one), each as one statement that
   * requires the run to still be RUNNING.
   */
  private async write(ops: WriteOp[]): Promise<void> {
    if (this.lost) return;
    const inserts = ops.filter((o) => o.kind === 'insert');
    const updates = ops.filter((o) => o.kind === 'update');
    const running = Prisma.sql`EXISTS (SELECT 1 FROM "AgentRun" WHERE "id" = ${this.runId} AND "status" = 'RUNNING')`;
    if (updates.length) {
      this.statements += 1;
      const n = await this.prisma.$executeRaw`
        UPDATE "AgentEvent" AS e SET "payload" = x.payload::jsonb
        FROM unnest(${updates.map((o) => o.seq)}::int[], ${updates.map((o) => JSON.stringify(o.event))}::text[]) AS x(seq, payload)
        WHERE e."conversationId" = ${this.conversationId} AND e."seq" = x.seq AND ${running}`;
      if (n === 0) return this.markLost();
    }
    if (inserts.length) {
      this.statements += 1;
      const n = await this.prisma.$executeRaw`
        INSERT INTO "AgentEvent" ("id", "conversationId", "runId", "seq", "type", "schemaVersion", "payload", "createdAt")
        SELECT x.id, ${this.conversationId}, ${this.runId}, x.seq, x.type, x.v, x.payload::jsonb, ${NOW}
        FROM unnest(
          ${inserts.map(() => newId('ev_'))}::text[], ${inserts.map((o) => o.seq)}::int[],
          ${inserts.map((o) => o.event.type)}::text[], ${inserts.map((o) => o.event.v)}::int[],
          ${inserts.map((o) => JSON.stringify(o.event))}::text[]
        ) AS x(id, seq, type, v, payload)
        WHERE ${running}`;
      if (n === 0) return this.markLost();
    }
  }

  /** Waits for every queued write (used before reading the conversation back). */
  async settle(): Promise<void> {
    this.flushPending();
    await this.chain;
  }

  /**
   * Closes the run: writes what is open, then, in one statement, the final status and usage (only
   * while still RUNNING: a sweep may have closed it) and the conversation's time.
   */
  async finish(end: RunEnd, usage?: { inputTokens?: number; outputTokens?: number }): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.enqueue(this.compactor.drain(), false);
    await this.settle();
    if (!this.lost) {
      this.statements += 1;
      const failed = end.status === 'FAILED';
      await this.durable(() => this.prisma.$executeRaw`
        WITH run AS (
          UPDATE "AgentRun" SET "status" = ${end.status}::"AgentRunStatus", "finishedAt" = ${NOW},
            "inputTokens" = ${usage?.inputTokens ?? null}, "outputTokens" = ${usage?.outputTokens ?? null},
            "errorCode" = ${failed ? end.code : null}, "errorMessage" = ${failed ? end.message.slice(0, 1000) : null}
          WHERE "id" = ${this.runId} AND "status" = 'RUNNING'
          RETURNING "conversationId"
        )
        UPDATE "AgentConversation" SET "updatedAt" = ${NOW} WHERE "id" IN (SELECT "conversationId" FROM run)`);
    }
    if (this.writeError) console.error('[in-app-agent] event write failed', this.writeError);
  }
}

/** One run's stored rows in order (to resume a watcher from a position after the run ended). */
export async function loadRunRows(prisma: PrismaClient, runId: string): Promise<StoredEvent[]> {
  const rows = await prisma.agentEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' }, select: { payload: true } });
  const out: StoredEvent[] = [];
  for (const r of rows) {
    const res = upgradeStoredEvent(r.payload);
    if (res.ok) out.push(res.event);
  }
  return out;
}

/** A run's owner and state, for the reattach and stop endpoints. */
export async function findRun(prisma: PrismaClient, runId: string) {
  return prisma.agentRun.findUnique({
    where: { id: runId },
    select: {
      id: true,
      status: true,
      conversationId: true,
      conversation: { select: { projectId: true, userId: true, deletedAt: true } },
    },
  });
}

/** The RUNNING run of a conversation, if any (the panel reattaches to it). */
export async function runningRunOf(prisma: PrismaClient, conversationId: string): Promise<string | null> {
  const run = await prisma.agentRun.findFirst({ where: { conversationId, status: 'RUNNING' }, select: { id: true } });
  return run?.id ?? null;
}

/** A simulated schema version and its upgrade steps (tests); defaults to the module's own. */
export interface ReplayOptions {
  upgrade?: { version: number; steps: Readonly<Record<number, StoredEventUpgrade>> };
  /** Leave out this run's rows (the run being prepared reads the history before it). */
  excludeRunId?: string;
}

/**
 * Reads stored rows in order, upgrading older versions step by step. A row that cannot be read
 * (no upgrade path, corrupt, written by a newer build) is left out of the replay and logged with
 * its seq and reason; it never fails the replay.
 */
export async function loadStoredEvents(prisma: PrismaClient, conversationId: string, opts: ReplayOptions = {}): Promise<StoredEvent[]> {
  return (await loadRows(prisma, conversationId, opts)).events;
}

async function loadRows(prisma: PrismaClient, conversationId: string, opts: ReplayOptions): Promise<{ events: StoredEvent[]; lastSeq: number }> {
  const rows = await prisma.agentEvent.findMany({
    where: { conversationId, ...(opts.excludeRunId ? { runId: { not: opts.excludeRunId } } : {}) },
    orderBy: { seq: 'asc' },
    select: { seq: true, payload: true },
  });
  const out: StoredEvent[] = [];
  const skipped: string[] = [];
  for (const r of rows) {
    const res = upgradeStoredEvent(r.payload, opts.upgrade ?? {});
    if (res.ok) out.push(res.event);
    else skipped.push(`seq ${r.seq}: ${res.reason}`);
  }
  if (skipped.length) {
    console.warn(
      `[in-app-agent] ${skipped.length} stored event(s) of conversation ${conversationId} could not be read and were left out of the replay: ${skipped.slice(0, 5).join('; ')}${skipped.length > 5 ? '; ...' : ''}`,
    );
  }
  return { events: out, lastSeq: rows.at(-1)?.seq ?? 0 };
}

/** Replays a conversation into the view the panel renders. */
export async function replayConversation(prisma: PrismaClient, conversationId: string, opts: ReplayOptions = {}): Promise<ConversationView> {
  return (await replayWithSeq(prisma, conversationId, opts)).view;
}

/** The replayed view and the highest stored seq (unreadable rows included), in one query. */
export async function replayWithSeq(prisma: PrismaClient, conversationId: string, opts: ReplayOptions = {}): Promise<{ view: ConversationView; lastSeq: number }> {
  const { events, lastSeq } = await loadRows(prisma, conversationId, opts);
  return { view: foldEvents(expand(events), emptyView(conversationId)), lastSeq };
}
