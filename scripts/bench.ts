/**
 * `npm run bench`: the performance figures of DESIGN.md section 6, printed as JSON. Every workload
 * runs through the real route over HTTP on 127.0.0.1 with a scripted in-process model (and the
 * product's real MCP endpoint for the tool listing), and through the bare Mastra stream in the same
 * process, so each figure is also a ratio against the runtime's own floor. PGlite always;
 * PostgreSQL too when BENCH_DATABASE_URL names a server. BENCH_ONLY=firstByte,throughput,... runs
 * a subset (names as in the JSON).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const isChild = process.argv.includes('--child');

if (!isChild) {
  const results: Record<string, unknown> = {};
  const run = (label: string, env: Record<string, string | undefined>) => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--child'], {
      env: { ...process.env, ...env, NODE_ENV: 'test', PRISMA_COUNT_QUERIES: '1', AUTO_SEED: '0' },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    if (res.status !== 0) {
      process.stderr.write(res.stderr);
      results[label] = { error: `bench failed (exit ${res.status})` };
      return;
    }
    const line = res.stdout.trim().split('\n').pop() ?? '{}';
    results[label] = JSON.parse(line);
  };
  run('pglite', { DATABASE_URL: '', PGLITE_DIR: 'memory://' });
  const pgUrl = process.env.BENCH_DATABASE_URL;
  if (pgUrl) {
    const name = `bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    const url = new URL(pgUrl);
    url.pathname = `/${name}`;
    try {
      run('postgres', { DATABASE_URL: url.toString() });
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await admin.end();
    }
  }
  console.log(JSON.stringify({ node: process.version, cpus: (await import('node:os')).cpus().length, date: new Date().toISOString(), results }, null, 2));
  process.exit(0);
}

// ------------------------------------------------------------------------------------------------
// Child: one database kind
// ------------------------------------------------------------------------------------------------

const { Agent } = await import('@mastra/core/agent');
const { getDb, closeDb, queryStats } = await import('@/server/db');
const { createAgentRoutes } = await import('@/features/in-app-agent/server/handler');
const { replayConversation } = await import('@/features/in-app-agent/server/persistence');
const { newId } = await import('@/server/ids');
const { startTestServer } = await import('../tests/helpers/http');
const { createProject, createUser } = await import('../tests/helpers/fixtures');
const { parseSse } = await import('../tests/helpers/agent');

process.env.AGENT_RATE_LIMIT_PER_MINUTE = '10000';
const db = await getDb();
const prisma = db.prisma;

type Part = Record<string, unknown>;
interface ModelScript {
  chunks: number;
  delayMs: number;
  stamp: boolean;
}
let script: ModelScript = { chunks: 1, delayMs: 0, stamp: false };
/** When the model was last asked to stream (performance.now()). */
let modelCalledAt = -1;

/** A scripted model: `chunks` text deltas, `delayMs` apart; stamped deltas carry their send time. */
function benchModel() {
  return {
    specificationVersion: 'v2' as const,
    provider: 'bench',
    modelId: 'bench',
    supportedUrls: {},
    async doGenerate(): Promise<never> {
      throw new Error('stream only');
    },
    async doStream() {
      modelCalledAt = performance.now();
      const s = script;
      const stream = new ReadableStream<Part>({
        async start(c) {
          c.enqueue({ type: 'stream-start', warnings: [] });
          c.enqueue({ type: 'text-start', id: 't' });
          for (let i = 0; i < s.chunks; i++) {
            if (s.delayMs) await new Promise((r) => setTimeout(r, s.delayMs));
            c.enqueue({ type: 'text-delta', id: 't', delta: s.stamp ? `<${performance.now().toFixed(3)}>` : 'tok ' });
          }
          c.enqueue({ type: 'text-end', id: 't' });
          c.enqueue({ type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: s.chunks, totalTokens: s.chunks + 1 } });
          c.close();
        },
      });
      return { stream };
    },
  };
}

type Timings = { opened: number; keyMinted: number; historyLoaded: number; toolsListed: number; agentStarted: number };
let lastTimings: Timings | undefined;
const benchHandle = { model: benchModel(), info: { provider: 'demo' as const, modelId: 'bench', label: 'bench', demo: true } };
const routes = createAgentRoutes({ model: () => benchHandle as never, onRunTimings: (t) => (lastTimings = t) });
const server = await startTestServer({ agentRoutes: routes as never });
const project = await createProject('Bench');

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
};
const round = (n: number) => Math.round(n * 1000) / 1000;

async function post(cookie: string, text: string, onChunk?: (text: string, at: number) => void) {
  modelCalledAt = -1;
  const t0 = performance.now();
  const res = await fetch(`${server.url}/api/projects/${project.id}/in-app-agent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url, cookie },
    body: JSON.stringify({ threadId: 'new', messages: [{ role: 'user', content: text }] }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let firstByte = -1;
  let body = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const at = performance.now();
    if (firstByte < 0) firstByte = at - t0;
    const chunk = decoder.decode(value, { stream: true });
    body += chunk;
    onChunk?.(chunk, at);
  }
  return { status: res.status, firstByte, firstModelRequest: modelCalledAt - t0, total: performance.now() - t0, body };
}

async function bare(onChunk?: (delta: string, at: number) => void) {
  const agent = new Agent({ id: 'bare', name: 'bare', instructions: 'bench', model: benchModel() as never });
  modelCalledAt = -1;
  const t0 = performance.now();
  const out = await agent.stream([{ role: 'user', content: 'hi' }] as never);
  let first = -1;
  let deltas = 0;
  for await (const c of out.fullStream as unknown as AsyncIterable<{ type: string; payload?: { text?: string } }>) {
    if (first < 0) first = performance.now() - t0;
    if (c.type === 'text-delta') {
      deltas += 1;
      onChunk?.(c.payload?.text ?? '', performance.now());
    }
  }
  // Read once the stream is consumed: the model may be called lazily.
  return { first, modelRequest: modelCalledAt - t0, total: performance.now() - t0, deltas };
}

/** Arrival minus send time of every stamp in a chunk (a chunk may carry several stamps). */
const stampDelays = (text: string, at: number, into: number[], stamps?: number[]) => {
  for (const m of text.matchAll(/<(\d+\.\d+)>/g)) {
    into.push(at - Number(m[1]));
    stamps?.push(Number(m[1]));
  }
};
const only = new Set((process.env.BENCH_ONLY ?? '').split(',').map((x) => x.trim()).filter(Boolean));
const want = (name: string) => only.size === 0 || only.has(name);
const out: Record<string, unknown> = { database: db.kind };

const user = project.users.MEMBER;

// Warm up (module loading, first queries, JIT).
script = { chunks: 5, delayMs: 0, stamp: false };
for (let i = 0; i < 5; i++) await post(user.cookie, 'warm up');
for (let i = 0; i < 5; i++) await bare();

// BENCH_CPU_PROFILE=<file>: a CPU profile of the measured short answers (after the warm-up),
// readable in Chrome DevTools, to see where a run's set-up spends its time.
const { Session } = await import('node:inspector/promises');
const profiler = process.env.BENCH_CPU_PROFILE ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}

// 1. Added latency, POST to first SSE byte, and POST to the first model request (the set-up:
// run row, key mint, replay, MCP tool listing, history), both with an instant model.
if (want('firstByte') || want('firstModelRequest')) {
  script = { chunks: 1, delayMs: 0, stamp: false };
  const firstBytes: number[] = [];
  const firstModel: number[] = [];
  const bareFirst: number[] = [];
  const bareModel: number[] = [];
  const phases: Record<keyof Timings, number[]> = { opened: [], keyMinted: [], historyLoaded: [], toolsListed: [], agentStarted: [] };
  for (let i = 0; i < 40; i++) {
    lastTimings = undefined;
    const r = await post(user.cookie, 'hello');
    firstBytes.push(r.firstByte);
    firstModel.push(r.firstModelRequest);
    if (lastTimings) for (const k of Object.keys(phases) as Array<keyof Timings>) phases[k].push(lastTimings[k]);
  }
  for (let i = 0; i < 40; i++) {
    const r = await bare();
    bareFirst.push(r.first);
    bareModel.push(r.modelRequest);
  }
  out.firstByteMs = { p50: round(pct(firstBytes, 50)), p95: round(pct(firstBytes, 95)), bareMastraP50: round(pct(bareFirst, 50)), budgetP50: 25 };
  out.firstModelRequestMs = { p50: round(pct(firstModel, 50)), p95: round(pct(firstModel, 95)), bareMastraP50: round(pct(bareModel, 50)) };
  // When each set-up step ended, after the route received the request (p50; key, history and
  // tools overlap).
  out.setupPhasesMs = Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, round(pct(v, 50))]));
}
if (profiler) {
  const { profile } = await profiler.post('Profiler.stop');
  (await import('node:fs')).writeFileSync(process.env.BENCH_CPU_PROFILE!, JSON.stringify(profile));
  profiler.disconnect();
}

// 2. Added latency, model chunk to client.
if (want('chunkToClient')) {
  script = { chunks: 200, delayMs: 2, stamp: true };
  const chunkDelays: number[] = [];
  const bareChunkDelays: number[] = [];
  for (let i = 0; i < 3; i++) await post(user.cookie, 'stamped', (t, at) => stampDelays(t, at, chunkDelays));
  for (let i = 0; i < 3; i++) await bare((d, at) => stampDelays(d, at, bareChunkDelays));
  out.chunkToClientMs = { p50: round(pct(chunkDelays, 50)), p99: round(pct(chunkDelays, 99)), bareMastraP50: round(pct(bareChunkDelays, 50)), budgetP50: 1 };
}

// 3. Pipeline throughput with an instant model (median of three runs each: the machine is shared).
if (want('throughput')) {
  script = { chunks: 20_000, delayMs: 0, stamp: false };
  const rates: number[] = [];
  const bareRates: number[] = [];
  for (let i = 0; i < 3; i++) {
    const big = await post(user.cookie, 'throughput');
    const events = parseSse(big.body);
    const assistant = new Set(events.flatMap((e) => (e.type === 'TEXT_MESSAGE_START' && e.role === 'assistant' ? [e.messageId] : [])));
    const deltas = events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT' && assistant.has(e.messageId)).length;
    if (deltas !== 20_000) throw new Error(`throughput run lost deltas: ${deltas}`);
    rates.push(deltas / (big.total / 1000));
    const b = await bare();
    bareRates.push(b.deltas / (b.total / 1000));
  }
  const rate = pct(rates, 50);
  const bareRate = pct(bareRates, 50);
  out.throughput = { deltasPerSecond: Math.round(rate), bareMastraDeltasPerSecond: Math.round(bareRate), ratio: round(rate / bareRate), budget: 20_000 };
}

// 4. Database writes for one 2,000-token answer.
if (want('statementsFor2000TokenAnswer')) {
  script = { chunks: 2_000, delayMs: 0, stamp: false };
  const before = { ...queryStats };
  await post(user.cookie, 'two thousand tokens');
  out.statementsFor2000TokenAnswer = { total: queryStats.total - before.total, writes: queryStats.writes - before.writes, budgetWrites: 10 };
}

// 5. Replay of a 1,000-message conversation.
if (want('replay1000MessagesMs')) {
  const conv = await prisma.agentConversation.create({ data: { id: newId('cv_'), projectId: project.id, userId: user.id, title: 'replay bench' } });
  const runRow = await prisma.agentRun.create({ data: { id: newId('run_'), conversationId: conv.id, userId: user.id, status: 'COMPLETED' } });
  const rows = [];
  let seq = 0;
  rows.push({ type: 'RUN_STARTED', runId: runRow.id, threadId: conv.id });
  for (let i = 0; i < 1000; i++) {
    rows.push({ type: 'TEXT_MESSAGE', messageId: `m${i}`, role: i % 2 ? 'assistant' : 'user', content: `message ${i} `.repeat(20), complete: true });
  }
  rows.push({ type: 'RUN_FINISHED', runId: runRow.id, threadId: conv.id, outcome: { type: 'success' } });
  await prisma.agentEvent.createMany({
    data: rows.map((p) => ({ id: newId('ev_'), conversationId: conv.id, runId: runRow.id, seq: ++seq, type: p.type, payload: { v: 1, ...p } })),
  });
  const replayTimes: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t0 = performance.now();
    const view = await replayConversation(prisma, conv.id);
    replayTimes.push(performance.now() - t0);
    if (view.messages.length !== 1000) throw new Error('replay lost messages');
  }
  out.replay1000MessagesMs = { p50: round(pct(replayTimes, 50)), max: round(Math.max(...replayTimes)), budget: 100 };
}

// 6. 100 concurrent streaming runs: every stamped delta's arrival minus its send time.
if (want('concurrent100')) {
  script = { chunks: 50, delayMs: 20, stamp: true };
  const users = await Promise.all(
    Array.from({ length: 100 }, async () => {
      const u = await createUser('Load');
      await prisma.projectMembership.create({ data: { id: newId('m_'), projectId: project.id, userId: u.id, role: 'MEMBER' } });
      return u;
    }),
  );
  const delays: number[] = [];
  const stamps: number[] = [];
  const started: number[] = [];
  let errors = 0;
  await Promise.all(
    users.map(async (u) => {
      let first = true;
      const res = await post(u.cookie, 'concurrent', (t, at) => {
        if (first && t.includes('<')) {
          first = false;
          started.push(at);
        }
        stampDelays(t, at, delays, stamps);
      }).catch(() => ({ status: 0, body: '' }));
      if (res.status !== 200 || !res.body.includes('RUN_FINISHED')) errors += 1;
    }),
  );
  // Once every run streams (the set-ups of the 100 runs no longer compete with the streams).
  const allStreaming = Math.max(...started);
  const steady = delays.filter((_, i) => stamps[i]! > allStreaming);
  const bareDelays: number[] = [];
  await Promise.all(Array.from({ length: 100 }, () => bare((d, at) => stampDelays(d, at, bareDelays))));
  out.concurrent100 = {
    errors,
    deltas: delays.length,
    addedChunkDelayMs: { p50: round(pct(delays, 50)), p99: round(pct(delays, 99)) },
    onceAllStreaming: { deltas: steady.length, addedChunkDelayMs: { p50: round(pct(steady, 50)), p99: round(pct(steady, 99)) } },
    bareMastraChunkDelayMs: { p50: round(pct(bareDelays, 50)), p99: round(pct(bareDelays, 99)) },
    budgetP99: 50,
  };
}

await server.close();
await closeDb();
console.log(JSON.stringify(out));
process.exit(0);
