/**
 * Conversations, runs, compacted events, replay and stale-run recovery.
 * Rows are written per message or tool call (see compact.ts), never per token.
 */
import { Prisma, type PrismaClient } from '@/generated/prisma/client';
import { newId } from '@/server/ids';
import { Compactor, coalesce, expand, type WriteOp } from '../compact';
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

export async function createConversation(prisma: PrismaClient, input: { projectId: string; userId: string; title: string }) {
  return prisma.agentConversation.create({
    data: { id: newId('cv_'), projectId: input.projectId, userId: input.userId, title: input.title.slice(0, LIMITS.maxTitleChars) },
  });
}

/** The user's own, not deleted conversation in this project, or null. */
export async function findOwnConversation(prisma: PrismaClient, input: { projectId: string; userId: string; conversationId: string }) {
  return prisma.agentConversation.findFirst({
    where: { id: input.conversationId, projectId: input.projectId, userId: input.userId, deletedAt: null },
  });
}

async function nextSeq(prisma: PrismaClient | Prisma.TransactionClient, conversationId: string): Promise<number> {
  const agg = await prisma.agentEvent.aggregate({ where: { conversationId }, _max: { seq: true } });
  return agg._max.seq ?? 0;
}

/**
 * Closes RUNNING runs whose heartbeat is older than the stale window as FAILED (RUN_STALE), with a
 * RUN_ERROR event so replay shows what happened. Scoped to one conversation, or all when omitted.
 */
export async function recoverStaleRuns(prisma: PrismaClient, staleSeconds: number, conversationId?: string): Promise<number> {
  const cutoff = new Date(Date.now() - staleSeconds * 1000);
  const stale = await prisma.agentRun.findMany({
    where: { status: 'RUNNING', lastHeartbeatAt: { lt: cutoff }, ...(conversationId ? { conversationId } : {}) },
    select: { id: true, conversationId: true },
  });
  let closed = 0;
  for (const run of stale) {
    const updated = await prisma.agentRun.updateMany({
      where: { id: run.id, status: 'RUNNING', lastHeartbeatAt: { lt: cutoff } },
      data: { status: 'FAILED', finishedAt: new Date(), errorCode: 'RUN_STALE', errorMessage: 'The run stopped responding and was closed.' },
    });
    if (updated.count === 0) continue;
    closed += 1;
    let seq = await nextSeq(prisma, run.conversationId);
    const events: StoredEvent[] = [];
    // A run that died before its first write still shows up in replay, as started and failed.
    if ((await prisma.agentEvent.count({ where: { runId: run.id } })) === 0) {
      events.push({ v: STORED_EVENT_VERSION, type: 'RUN_STARTED', runId: run.id, threadId: run.conversationId });
    }
    events.push({ v: STORED_EVENT_VERSION, type: 'RUN_ERROR', runId: run.id, code: 'RUN_STALE', message: 'The run stopped responding and was closed.' });
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
  return closed;
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

/** Creates the run; the partial unique index turns a concurrent second run into RunConflictError. */
export async function createRun(
  prisma: PrismaClient,
  input: { conversationId: string; userId: string; modelId: string; resumedFromId?: string; traceId?: string },
) {
  try {
    return await prisma.agentRun.create({
      data: {
        id: newId('run_'),
        conversationId: input.conversationId,
        userId: input.userId,
        modelId: input.modelId,
        resumedFromId: input.resumedFromId ?? null,
        traceId: input.traceId ?? null,
      },
    });
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') throw new RunConflictError();
    if (String((err as Error).message).includes('AgentRun_one_running_per_conversation')) throw new RunConflictError();
    throw err;
  }
}

export type RunEnd =
  | { status: 'COMPLETED'; outcome: RunOutcome }
  | { status: 'INTERRUPTED'; outcome: RunOutcome }
  | { status: 'ABORTED' }
  | { status: 'FAILED'; code: AgentErrorCode; message: string };

/**
 * Records one run's events: feeds the compactor, writes its row operations in order (one write
 * chain per run), flushes long messages on a timer and keeps the heartbeat fresh.
 */
export class RunRecorder {
  private readonly compactor: Compactor;
  private chain: Promise<void> = Promise.resolve();
  private pending: WriteOp[] = [];
  private timer: NodeJS.Timeout | undefined;
  private lastHeartbeat = Date.now();
  private key: { id: string; ttlSeconds: number; extendAt: number } | undefined;
  private writeError: unknown;
  /** Statements issued, for the bench's O(messages) check. */
  statements = 0;

  constructor(
    private readonly prisma: PrismaClient,
    readonly conversationId: string,
    readonly runId: string,
    lastSeq: number,
    private readonly opts: { flushIntervalMs?: number; heartbeatMs?: number } = {},
  ) {
    this.compactor = new Compactor(lastSeq, opts.flushIntervalMs ?? LIMITS.flushIntervalMs);
  }

  static async open(prisma: PrismaClient, conversationId: string, runId: string, opts?: { flushIntervalMs?: number; heartbeatMs?: number }) {
    return new RunRecorder(prisma, conversationId, runId, await nextSeq(prisma, conversationId), opts);
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
          this.statements += 1;
          await this.prisma.agentRun.update({ where: { id: this.runId }, data: { lastHeartbeatAt: new Date() } });
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

  /** Records a live event; writes happen in the background, in order. */
  record(event: AgentEvent): void {
    const ops = this.compactor.push(event);
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

  private flushPending(): void {
    if (!this.pending.length) return;
    const batch = coalesce(this.pending);
    this.pending = [];
    this.chain = this.chain
      .then(() => this.write(batch))
      .catch((err: unknown) => {
        this.writeError ??= err;
      });
  }

  private async write(ops: WriteOp[]): Promise<void> {
    const inserts = ops.filter((o) => o.kind === 'insert');
    const updates = ops.filter((o) => o.kind === 'update');
    if (inserts.length) {
      this.statements += 1;
      await this.prisma.agentEvent.createMany({
        data: inserts.map((o) => ({
          id: newId('ev_'),
          conversationId: this.conversationId,
          runId: this.runId,
          seq: o.seq,
          type: o.event.type,
          schemaVersion: o.event.v,
          payload: o.event as Prisma.InputJsonValue,
        })),
      });
    }
    for (const o of updates) {
      this.statements += 1;
      await this.prisma.agentEvent.updateMany({
        where: { conversationId: this.conversationId, seq: o.seq },
        data: { payload: o.event as Prisma.InputJsonValue },
      });
    }
  }

  /** Waits for every queued write (used before reading the conversation back). */
  async settle(): Promise<void> {
    this.flushPending();
    await this.chain;
  }

  /** Closes the run: writes what is open, the final status, usage and the conversation's time. */
  async finish(end: RunEnd, usage?: { inputTokens?: number; outputTokens?: number }): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.enqueue(this.compactor.drain(), false);
    await this.settle();
    const data: Prisma.AgentRunUpdateInput = {
      status: end.status,
      finishedAt: new Date(),
      inputTokens: usage?.inputTokens ?? null,
      outputTokens: usage?.outputTokens ?? null,
    };
    if (end.status === 'FAILED') {
      data.errorCode = end.code;
      data.errorMessage = end.message.slice(0, 1000);
    }
    this.statements += 2;
    // Only a run that is still RUNNING is closed here: a sweep may have closed it already.
    await this.prisma.agentRun.updateMany({ where: { id: this.runId, status: 'RUNNING' }, data: data as Prisma.AgentRunUpdateManyMutationInput });
    await this.prisma.agentConversation.update({ where: { id: this.conversationId }, data: { lastSeq: this.compactor.lastSeq, updatedAt: new Date() } });
    if (this.writeError) console.error('[in-app-agent] event write failed', this.writeError);
  }
}

/** A simulated schema version and its upgrade steps (tests); defaults to the module's own. */
export interface ReplayOptions {
  upgrade?: { version: number; steps: Readonly<Record<number, StoredEventUpgrade>> };
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
  const rows = await prisma.agentEvent.findMany({ where: { conversationId }, orderBy: { seq: 'asc' }, select: { seq: true, payload: true } });
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
