// A run survives the death of its instance. Three production instances on one PostgreSQL database
// behind nginx (deploy/nginx.conf), a scripted model that can hold an answer mid-stream, and
// `kill -9` of the run's owner at every point of a run's life: mid model stream; after a step's
// checkpoint before its tools; inside a tool before and after its write commits; between steps;
// while an approval waits; after RUN_FINISHED was produced but before the status is written; the
// instance the watcher is attached to; two takeovers in a row; SIGSTOP of the owner and SIGCONT
// after the takeover; Stop pressed while the owner is dead; and the embedded database restarted on
// the same directory. Every scenario checks what a user and an operator would notice: one end
// (RUN_FINISHED, never RUN_ERROR), the watcher's positions increasing without gap or duplicate and
// its answer equal to the stored one, each side effect once (issues by title, a webhook sink), the
// model asked again only for the step that was cut off, no write of an old generation.
// Instances hold a 4 s lease here (AGENT_RUN_LEASE_SECONDS) so the suite stays short.
// Started by `.ci/run` after the production build (see tests/deploy/cluster.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventWeight } from '@/features/in-app-agent/compact';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent, ConversationView } from '@/features/in-app-agent/schema';
import { closeDb, getPrisma } from '@/server/db';
import { cancelRun, followToEnd, startRunStream, userMessageBody, type PositionedSse } from '../helpers/agent';
import { type FakeServer, type ScriptedTurn, startFakeOpenAI } from '../helpers/fake-models';
import { createProject, type TestProject } from '../helpers/fixtures';
import { signIn } from '../integration/mcp/oauth-client';
import { trpcClient } from '../helpers/trpc';
import { Cluster, type ClusterNode, waitUntil } from './takeover-cluster';

const LEASE_SECONDS = 4;
const GENERATION = 2 ** 32;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function deferred(): { promise: Promise<void>; release: () => void } {
  let release: () => void = () => undefined;
  const promise = new Promise<void>((r) => (release = r));
  return { promise, release };
}

// ---- The scripted model: each scenario's user message names it; the step is the number of the
// model's own messages after it. Every request is recorded as [scenario, step].
type Script = (step: number, attempt: number) => ScriptedTurn;
const scripts = new Map<string, Script>();
const asked: Array<[string, number]> = [];
const askedOf = (name: string) => asked.filter(([n]) => n === name).map(([, s]) => s);

function turnFor(body: Record<string, unknown>): ScriptedTurn {
  const messages = (body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  let name = '';
  let step = 0;
  for (const m of messages) {
    if (m.role === 'user') {
      const match = /scenario (\S+)/.exec(typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
      if (match) {
        name = match[1]!;
        step = 0;
      }
    } else if (m.role === 'assistant') step += 1;
  }
  const attempt = asked.filter(([n, s]) => n === name && s === step).length;
  asked.push([name, step]);
  return scripts.get(name)?.(step, attempt) ?? { text: ['(no script)'] };
}

const words = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag}${i} `);

// ---- The webhook's receiver: counts deliveries per Idempotency-Key.
const deliveries: string[] = [];
let sink: http.Server;
let sinkUrl = '';

let cluster: Cluster;
let model: FakeServer;
let db: pg.Client;
let project: TestProject;

beforeAll(async () => {
  if (!process.env.DATABASE_URL) throw new Error('Run from `.ci/run` (DATABASE_URL names the PostgreSQL server).');
  model = await startFakeOpenAI((body) => turnFor(body));
  sink = http.createServer((req, res) => {
    deliveries.push(String(req.headers['idempotency-key'] ?? ''));
    req.resume();
    req.on('end', () => res.writeHead(200).end('{}'));
  });
  await new Promise<void>((r) => sink.listen(0, '127.0.0.1', r));
  sinkUrl = `http://127.0.0.1:${(sink.address() as AddressInfo).port}/hook`;
  cluster = new Cluster({
    serverUrl: process.env.DATABASE_URL,
    modelUrl: model.url,
    env: { AGENT_RUN_LEASE_SECONDS: String(LEASE_SECONDS) },
  });
  await cluster.start();
  // This process writes its fixtures to the cluster's database.
  process.env.DATABASE_URL = cluster.databaseUrl;
  project = await createProject('Takeover');
  await (await getPrisma()).project.update({ where: { id: project.id }, data: { webhookUrl: sinkUrl } });
  db = new pg.Client({ connectionString: cluster.databaseUrl });
  await db.connect();
}, 300_000);

afterAll(async () => {
  await db?.end().catch(() => undefined);
  await closeDb();
  await cluster?.stop();
  await model?.close();
  sink?.close();
});

const cookie = () => project.users.MEMBER.cookie;
const isTerminal = (e: PositionedSse) => e.event.type === 'RUN_FINISHED' || e.event.type === 'RUN_ERROR';
const isResumed = (e: PositionedSse) => e.event.type === 'CUSTOM' && e.event.name === 'in-app-agent.resumed';
const deltas = (events: PositionedSse[]) => events.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length;

/** Starts a scenario's run through the proxy; the stream is dropped once RUN_STARTED arrived. */
async function startScenario(name: string, threadId?: string) {
  const started = await startRunStream(
    cluster.proxyUrl,
    project.id,
    cookie(),
    userMessageBody(`scenario ${name}`, threadId),
    (ev) => ev.length >= 1,
  );
  expect(started.status).toBe(200);
  const { runId, threadId: thread } = started.events[0]!.event as { runId: string; threadId: string };
  // Only RUN_STARTED: what else the same read brought is followed again from position 1.
  return { runId, threadId: thread, first: started.events.slice(0, 1) };
}

/** Follows a run to its end in the background, from after `after`, as the panel does. */
function watch(runId: string, after: number, bases = [cluster.proxyUrl]) {
  const seen: PositionedSse[] = [];
  const done = followToEnd(bases, project.id, runId, cookie(), {
    after,
    onEvents: (ev) => {
      seen.length = 0;
      seen.push(...ev);
    },
    timeoutMs: 120_000,
  });
  return { seen, done };
}

async function run(runId: string) {
  const { rows } = await db.query<{
    status: string;
    generation: number;
    takeovers: number;
    owner: string | null;
    checkpointSteps: number;
    checkpointFinal: boolean;
    usageEstimated: boolean;
  }>(
    `SELECT "status"::text, "generation", "takeovers", "owner", "checkpointSteps", "checkpointFinal", "usageEstimated"
     FROM "AgentRun" WHERE "id" = $1`,
    [runId],
  );
  return rows[0]!;
}

/** Whether the run's streaming answer has been written (its first flush), with some of its text. */
async function partialTextStored(runId: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT 1 FROM "AgentEvent" WHERE "runId" = $1 AND "type" = 'TEXT_MESSAGE'
       AND "payload"->>'role' = 'assistant' AND length("payload"->>'content') > 0`,
    [runId],
  );
  return rows.length > 0;
}

/** Kills the run's owner now (-9, its whole process group). */
async function killOwner(runId: string): Promise<ClusterNode> {
  const owner = await cluster.ownerOf(runId, db);
  await cluster.signal(owner, 'SIGKILL');
  return owner;
}

/** A session on the cluster's database that holds a lock until `release`. */
async function holdLock(sql: string, params: unknown[] = []) {
  const c = new pg.Client({ connectionString: cluster.databaseUrl });
  await c.connect();
  const { rows } = await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
  await c.query('BEGIN');
  await c.query(sql, params);
  return {
    pid: rows[0]!.pid,
    release: async () => {
      await c.query('ROLLBACK').catch(() => undefined);
      await c.end();
    },
  };
}

/**
 * Waits until some session waits for the lock `lock` holds (on `table`, for the message). Asked of
 * the lock manager (`pg_blocking_pids`), not of the waiting statement's text, which
 * `pg_stat_activity` cuts at 1 kB.
 */
async function blockedOn(lock: { pid: number }, table: string): Promise<void> {
  await waitUntil(
    `a statement blocked on ${table}`,
    async () => {
      const { rows } = await db.query(`SELECT 1 FROM pg_stat_activity WHERE $1::int = ANY (pg_blocking_pids(pid))`, [
        lock.pid,
      ]);
      return rows.length > 0;
    },
    20_000,
  );
}

/** The conversation as the product stores it (the replay a reload shows). */
async function stored(threadId: string): Promise<ConversationView> {
  // Through the proxy, tried again while it answers for a killed instance (as the page would be reloaded).
  const got = await waitUntil('the conversation through the proxy', () =>
    trpcClient(cluster.proxyUrl, cookie()).agent.conversations.get.query({
      projectId: project.id,
      conversationId: threadId,
    }),
  );
  return got.view;
}

const shape = (view: ConversationView, runId: string) =>
  view.messages
    .filter((m) => m.runId === runId)
    .map((m) =>
      m.role === 'assistant'
        ? { role: m.role, content: m.content, calls: m.toolCalls.map((t) => [t.name, t.status]) }
        : m.role === 'tool'
          ? { role: m.role, toolCallId: m.toolCallId }
          : { role: m.role, content: m.content },
    );

/**
 * What every scenario asserts about a run that was watched from its start: one end, of the kind
 * expected; positions that increase without gap or duplicate (within a generation each event moves
 * the position by its weight; a new generation starts right after its base); the watcher's answer
 * equal to the stored one.
 */
async function checkWatched(
  runId: string,
  threadId: string,
  events: PositionedSse[],
  end: { type: 'RUN_FINISHED'; outcome: 'success' | 'cancelled' | 'interrupt' },
) {
  const terminals = events.filter(isTerminal);
  expect(terminals).toHaveLength(1);
  expect(terminals[0]!.event).toMatchObject({ type: end.type, outcome: { type: end.outcome } });
  // The unstored `resuming` notice carries no position of its own (an SSE reader keeps the last id).
  const positioned = events.filter(
    (e) => e.id !== null && !(e.event.type === 'CUSTOM' && e.event.name === 'in-app-agent.resuming'),
  );
  expect(positioned[0]!.id).toBe(1);
  for (let i = 1; i < positioned.length; i++) {
    const [a, b] = [positioned[i - 1]!, positioned[i]!];
    const [ga, gb] = [Math.floor(a.id! / GENERATION), Math.floor(b.id! / GENERATION)];
    if (ga === gb) expect(b.id! - a.id!, `after ${a.id}: ${b.event.type}`).toBe(eventWeight(b.event));
    else {
      expect(gb).toBeGreaterThan(ga);
      expect(b.id).toBe(gb * GENERATION + 1);
      expect(b.event).toMatchObject({ type: 'CUSTOM', name: 'in-app-agent.resumed' });
    }
  }
  const watched = foldEvents(
    events.map((e) => e.event as AgentEvent),
    emptyView(threadId),
  );
  const view = await stored(threadId);
  expect(shape(watched, runId)).toEqual(shape(view, runId));
  return view;
}

/** No row of the run's ledger or events was written by a generation that had lost the run. */
async function checkNoStaleWrites(runId: string) {
  const { rows } = await db.query<{ generation: number; current: number }>(
    `SELECT c."generation", r."generation" AS "current" FROM "AgentToolCall" c JOIN "AgentRun" r ON r."id" = c."runId"
     WHERE c."runId" = $1`,
    [runId],
  );
  for (const r of rows) expect(r.generation).toBeLessThanOrEqual(r.current);
  const keys = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM "ApiKey" WHERE "runId" = $1 AND "revokedAt" IS NULL`,
    [runId],
  );
  expect(keys.rows[0]!.n).toBe(0);
}

async function issuesTitled(title: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM "Issue" WHERE "title" = $1`, [title]);
  return rows[0]!.n;
}

/** Answers the interrupt of a run that asked for approval, through the proxy (a new run). */
async function approve(threadId: string, interruptEvent: PositionedSse) {
  const outcome = (interruptEvent.event as { outcome: { interrupts: Array<{ id: string }> } }).outcome;
  const res = await startRunStream(
    cluster.proxyUrl,
    project.id,
    cookie(),
    {
      threadId,
      messages: [],
      resume: outcome.interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } })),
    },
    (ev) => ev.length >= 1,
  );
  expect(res.status).toBe(200);
  const { runId } = res.events[0]!.event as { runId: string };
  return { runId, first: res.events.slice(0, 1) };
}

/** A run that asks for approval of one call (its first step), watched to its interrupt. */
async function untilApprovalAsked(name: string) {
  const s = await startScenario(name);
  const events = await followToEnd([cluster.proxyUrl], project.id, s.runId, cookie(), { after: 1 });
  const end = events.find(isTerminal)!;
  expect(end.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
  return { ...s, end };
}

describe('a run survives the death of its instance (three instances behind nginx)', () => {
  beforeAll(async () => {
    await cluster.heal();
  });
  // Every instance a scenario killed or paused is back before the next one (also after a failure).
  afterEach(async () => {
    await cluster.heal();
  });

  it('kill -9 mid model stream: the step is asked again once and replaces the cut text', async () => {
    const hold = deferred();
    scripts.set('midstream', (_step, attempt) =>
      attempt === 0 ? { text: words(40, 'cut'), hold: hold.promise, holdAfter: 10 } : { text: ['Whole ', 'answer.'] },
    );
    const s = await startScenario('midstream');
    const w = watch(s.runId, 1);
    await waitUntil('ten deltas', async () => deltas(w.seen) >= 10);
    // The long message's first flush (every second while it streams): the cut text is stored, so
    // the takeover counts its usage as estimated.
    await waitUntil('the cut text stored', async () => await partialTextStored(s.runId), 20_000);
    await killOwner(s.runId);
    const events = [...s.first, ...(await w.done)];
    const view = await checkWatched(s.runId, s.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
    expect(shape(view, s.runId).at(-1)).toMatchObject({ role: 'assistant', content: 'Whole answer.' });
    expect(askedOf('midstream')).toEqual([0, 0]);
    expect(await run(s.runId)).toMatchObject({
      status: 'COMPLETED',
      generation: 2,
      takeovers: 1,
      usageEstimated: true,
    });
    await checkNoStaleWrites(s.runId);
    hold.release();
    await cluster.heal();
  });

  it('kill -9 after a step was stored, before its tool ran: the tool runs, the step is not asked again', async () => {
    scripts.set('checkpoint', (step) =>
      step === 0 ? { toolCalls: [{ name: 'list_issues', args: {} }] } : { text: ['Listed.'] },
    );
    const lock = await holdLock('LOCK TABLE "Issue" IN ACCESS EXCLUSIVE MODE');
    const s = await startScenario('checkpoint');
    const w = watch(s.runId, 1);
    await waitUntil('the stored step', async () => (await run(s.runId)).checkpointSteps === 1);
    await blockedOn(lock, 'Issue');
    await killOwner(s.runId);
    // A page opened while the next owner's call waits for the lock follows the run from its start:
    // it gets the stored step of the first generation, then the second.
    await waitUntil('the run taken over', async () => (await run(s.runId)).generation === 2);
    const late = watch(s.runId, 1);
    await waitUntil('the late watcher attached', async () => late.seen.some(isResumed));
    await lock.release();
    const events = [...s.first, ...(await w.done)];
    const view = await checkWatched(s.runId, s.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
    await checkWatched(s.runId, s.threadId, [...s.first, ...(await late.done)], {
      type: 'RUN_FINISHED',
      outcome: 'success',
    });
    expect(shape(view, s.runId)).toEqual([
      { role: 'user', content: 'scenario checkpoint' },
      { role: 'assistant', content: '', calls: [['list_issues', 'done']] },
      expect.objectContaining({ role: 'tool' }),
      { role: 'assistant', content: 'Listed.', calls: [] },
    ]);
    expect(askedOf('checkpoint')).toEqual([0, 1]);
    expect(await run(s.runId)).toMatchObject({ status: 'COMPLETED', generation: 2 });
    await checkNoStaleWrites(s.runId);
    await cluster.heal();
  });

  for (const when of ['before', 'after'] as const) {
    it(`kill -9 inside an approved tool call ${when} its write commits: the issue is created once`, async () => {
      const name = `tool-${when}`;
      const title = `Created by the ${when} scenario`;
      scripts.set(name, (step) =>
        step === 0 ? { toolCalls: [{ name: 'create_issue', args: { title } }] } : { text: ['Created.'] },
      );
      const asking = await untilApprovalAsked(name);
      // Before: the insert of the issue waits; after: the change and its ledger row committed, the
      // call's audit row waits.
      const lock = await holdLock(
        when === 'before' ? 'LOCK TABLE "Issue" IN SHARE MODE' : 'LOCK TABLE "ToolCallAudit" IN SHARE MODE',
      );
      const resume = await approve(asking.threadId, asking.end);
      const w = watch(resume.runId, 1);
      await blockedOn(lock, when === 'before' ? 'Issue' : 'ToolCallAudit');
      expect(await issuesTitled(title)).toBe(when === 'before' ? 0 : 1);
      await killOwner(resume.runId);
      await lock.release();
      const events = [...resume.first, ...(await w.done)];
      await checkWatched(resume.runId, asking.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
      expect(await issuesTitled(title)).toBe(1);
      expect(askedOf(name)).toEqual([0, 1]);
      expect(await run(resume.runId)).toMatchObject({ status: 'COMPLETED', generation: 2 });
      const ledger = await db.query(`SELECT "status", "generation" FROM "AgentToolCall" WHERE "runId" = $1`, [
        resume.runId,
      ]);
      expect(ledger.rows).toEqual([{ status: 'DONE', generation: when === 'before' ? 2 : 1 }]);
      await checkNoStaleWrites(resume.runId);
      await cluster.heal();
    });
  }

  it('kill -9 between steps: the next step is asked again, the tool is not', async () => {
    const hold = deferred();
    scripts.set('between', (step, attempt) =>
      step === 0
        ? { toolCalls: [{ name: 'notify_webhook', args: { message: 'between steps' } }] }
        : attempt === 0
          ? { text: ['Sent.'], hold: hold.promise, holdAfter: 0 }
          : { text: ['Sent.'] },
    );
    const asking = await untilApprovalAsked('between');
    const resume = await approve(asking.threadId, asking.end);
    const w = watch(resume.runId, 1);
    await waitUntil('the next step asked', async () => askedOf('between').length === 2);
    await killOwner(resume.runId);
    const events = [...resume.first, ...(await w.done)];
    await checkWatched(resume.runId, asking.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
    expect(askedOf('between')).toEqual([0, 1, 1]);
    // Delivered once, with the key of the run and call.
    const sent = deliveries.filter((k) => k.startsWith(`${resume.runId}:`));
    expect(sent).toHaveLength(1);
    hold.release();
    await checkNoStaleWrites(resume.runId);
    await cluster.heal();
  });

  it('kill -9 while an approval waits: nothing is taken over, the answer goes on elsewhere', async () => {
    const title = 'Created after the instance died';
    scripts.set('waiting', (step) =>
      step === 0 ? { toolCalls: [{ name: 'create_issue', args: { title } }] } : { text: ['Done.'] },
    );
    const asking = await untilApprovalAsked('waiting');
    const ran = cluster.nodes.find(
      (n) =>
        n.pgid !== null &&
        cluster
          .log(n)
          .split('\n')
          .some((line) => line.includes('"event":"run.started"') && line.includes(asking.runId)),
    )!;
    await cluster.signal(ran, 'SIGKILL');
    await sleep((LEASE_SECONDS + 2) * 1000);
    expect(await run(asking.runId)).toMatchObject({ status: 'INTERRUPTED', takeovers: 0 });
    const resume = await approve(asking.threadId, asking.end);
    const events = [
      ...resume.first,
      ...(await followToEnd([cluster.proxyUrl], project.id, resume.runId, cookie(), { after: 1 })),
    ];
    await checkWatched(resume.runId, asking.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
    expect(await issuesTitled(title)).toBe(1);
    expect(await run(resume.runId)).toMatchObject({ status: 'COMPLETED', takeovers: 0 });
    await cluster.heal();
  });

  it('kill -9 after RUN_FINISHED was produced, before the end was stored: one end, nothing asked again', async () => {
    const hold = deferred();
    scripts.set('unstored', () => ({ text: ['All ', 'done.'], hold: hold.promise, holdAfter: 1 }));
    const s = await startScenario('unstored');
    const w = watch(s.runId, 1);
    await waitUntil('a delta', async () => deltas(w.seen) >= 1);
    // The statement that stores the run's end also touches its conversation (nothing else of the
    // run does): that statement waits here.
    // (FOR NO KEY UPDATE: the rows the run writes meanwhile still reference the conversation.)
    const lock = await holdLock(`SELECT 1 FROM "AgentConversation" WHERE "id" = $1 FOR NO KEY UPDATE`, [s.threadId]);
    hold.release();
    // The answer's last step has no checkpoint of its own: its rows go with the end, held here.
    await blockedOn(lock, 'AgentConversation');
    expect((await run(s.runId)).status).toBe('RUNNING');
    expect(w.seen.some(isTerminal)).toBe(false);
    await killOwner(s.runId);
    await lock.release();
    const events = [...s.first, ...(await w.done)];
    await checkWatched(s.runId, s.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
    expect(askedOf('unstored')).toEqual([0]);
    // Either the dead instance's statement still committed once the lock was gone (the database runs
    // a statement it received to its end), or another instance took the run over and only ended it.
    const ended = await run(s.runId);
    expect(ended.status).toBe('COMPLETED');
    expect([1, 2]).toContain(ended.generation);
    await cluster.heal();
  });

  it('kill -9 of the instance the watcher is attached to: the watcher goes on elsewhere, nothing is taken over', async () => {
    const hold = deferred();
    scripts.set('watcher', () => ({ text: words(30, 'w'), hold: hold.promise, holdAfter: 5 }));
    const s = await startScenario('watcher');
    const owner = await cluster.ownerOf(s.runId, db);
    const other = cluster.nodes.find((n) => n !== owner && n.pgid !== null)!;
    const w = watch(s.runId, 1, [other.url, cluster.proxyUrl]);
    await waitUntil('five deltas', async () => deltas(w.seen) >= 5);
    await cluster.signal(other, 'SIGKILL');
    hold.release();
    const events = [...s.first, ...(await w.done)];
    await checkWatched(s.runId, s.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
    expect(await run(s.runId)).toMatchObject({ status: 'COMPLETED', generation: 1, takeovers: 0 });
    expect(askedOf('watcher')).toEqual([0]);
    await cluster.heal();
  });

  it('two takeovers in a row: the third instance finishes the answer', async () => {
    const holds = [deferred(), deferred()];
    scripts.set('twice', (_step, attempt) =>
      attempt < 2
        ? { text: words(20, `g${attempt}-`), hold: holds[attempt]!.promise, holdAfter: 5 }
        : { text: ['Third ', 'time.'] },
    );
    const s = await startScenario('twice');
    const w = watch(s.runId, 1);
    await waitUntil('five deltas', async () => deltas(w.seen) >= 5);
    await killOwner(s.runId);
    await waitUntil('the first takeover streaming', async () => askedOf('twice').length === 2 && deltas(w.seen) >= 10);
    await killOwner(s.runId);
    const events = [...s.first, ...(await w.done)];
    const view = await checkWatched(s.runId, s.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
    expect(shape(view, s.runId).at(-1)).toMatchObject({ content: 'Third time.' });
    expect(askedOf('twice')).toEqual([0, 0, 0]);
    expect(await run(s.runId)).toMatchObject({ status: 'COMPLETED', generation: 3, takeovers: 2 });
    for (const h of holds) h.release();
    await checkNoStaleWrites(s.runId);
    await cluster.heal();
  });

  it('SIGSTOP of the owner, SIGCONT after the takeover: the paused owner writes nothing more', async () => {
    const hold = deferred();
    scripts.set('paused', (_step, attempt) =>
      attempt === 0 ? { text: words(20, 'old'), hold: hold.promise, holdAfter: 5 } : { text: ['New ', 'owner.'] },
    );
    const s = await startScenario('paused');
    const owner = await cluster.ownerOf(s.runId, db);
    const other = cluster.nodes.find((n) => n !== owner && n.pgid !== null)!;
    const w = watch(s.runId, 1, [other.url]);
    await waitUntil('five deltas', async () => deltas(w.seen) >= 5);
    await cluster.signal(owner, 'SIGSTOP');
    const events = [...s.first, ...(await w.done)];
    const before = await db.query(`SELECT "seq", "payload" FROM "AgentEvent" WHERE "runId" = $1 ORDER BY "seq"`, [
      s.runId,
    ]);
    await cluster.signal(owner, 'SIGCONT');
    hold.release(); // the paused owner's model stream goes on: it tries to write, and is fenced off
    await waitUntil('the old owner to notice', async () => cluster.log(owner).includes('"event":"run.handed_over"'));
    const after = await db.query(`SELECT "seq", "payload" FROM "AgentEvent" WHERE "runId" = $1 ORDER BY "seq"`, [
      s.runId,
    ]);
    expect(after.rows).toEqual(before.rows);
    await checkWatched(s.runId, s.threadId, events, { type: 'RUN_FINISHED', outcome: 'success' });
    expect(await run(s.runId)).toMatchObject({ status: 'COMPLETED', generation: 2 });
    await checkNoStaleWrites(s.runId);
    await cluster.heal();
  });

  it('Stop pressed while the owner is dead: the next owner ends the run as cancelled', async () => {
    const hold = deferred();
    scripts.set('stopped', () => ({ text: words(20, 's'), hold: hold.promise, holdAfter: 5 }));
    const s = await startScenario('stopped');
    const w = watch(s.runId, 1);
    await waitUntil('five deltas', async () => deltas(w.seen) >= 5);
    await killOwner(s.runId);
    // The proxy may still send the first try to the dead instance: a 502 is tried again, as the panel would.
    const stop = await waitUntil('Stop accepted', async () => {
      const res = await cancelRun(cluster.proxyUrl, project.id, s.runId, cookie());
      return res.status === 202 ? res : null;
    });
    expect(stop.status).toBe(202);
    const events = [...s.first, ...(await w.done)];
    await checkWatched(s.runId, s.threadId, events, { type: 'RUN_FINISHED', outcome: 'cancelled' });
    expect(askedOf('stopped')).toEqual([0]);
    expect(await run(s.runId)).toMatchObject({ status: 'ABORTED', generation: 2 });
    hold.release();
    await cluster.heal();
  });
});

describe('the embedded database, restarted on the same directory', () => {
  it('resumes the run the previous process left running', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pglite-restart-'));
    const node: ClusterNode = {
      index: 9,
      port: 3199,
      url: 'http://127.0.0.1:3199',
      logFile: path.join(dir, 'app.log'),
      pgid: null,
    };
    const embedded = new Cluster({ serverUrl: process.env.DATABASE_URL!, modelUrl: model.url, instances: 0 });
    const env = embedded.env(node);
    delete env.DATABASE_URL;
    Object.assign(env, { PGLITE_DIR: path.join(dir, 'data'), AUTO_SEED: '1', NEXTAUTH_URL: node.url });
    const start = () => embedded.startNodeWith(node, env);
    try {
      await start();
      const member = await signIn(node.url, 'member@example.com', 'demo-password');
      const projects = (await trpcClient(node.url, member).tracker.projects.list.query()) as Array<{ id: string }>;
      const projectId = projects[0]!.id;
      const hold = deferred();
      scripts.set('embedded', (_step, attempt) =>
        attempt === 0 ? { text: words(20, 'e'), hold: hold.promise, holdAfter: 5 } : { text: ['After ', 'restart.'] },
      );
      const started = await startRunStream(
        node.url,
        projectId,
        member,
        userMessageBody('scenario embedded'),
        (ev) => deltas(ev) >= 5,
      );
      const { runId, threadId } = started.events[0]!.event as { runId: string; threadId: string };
      await sleep(1_500);
      await embedded.signal(node, 'SIGKILL');
      await start();
      const rest = await followToEnd([node.url], projectId, runId, member, { after: started.events.at(-1)!.id });
      const events = [...started.events, ...rest];
      expect(events.filter(isTerminal)).toHaveLength(1);
      expect(events.find(isTerminal)!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      const got = await trpcClient(node.url, member).agent.conversations.get.query({
        projectId,
        conversationId: threadId,
      });
      expect(got.view.messages.map((m) => (m.role === 'tool' ? '' : m.content))).toEqual([
        'scenario embedded',
        'After restart.',
      ]);
      expect(askedOf('embedded')).toEqual([0, 0]);
      hold.release();
    } finally {
      await embedded.signal(node, 'SIGKILL').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
