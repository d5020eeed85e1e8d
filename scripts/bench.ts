/**
 * `npm run bench`: the performance figures and budgets of docs/architecture.md ("Budgets"), printed
 * as JSON. Every workload runs through the real routes over HTTP on 127.0.0.1 with a scripted
 * in-process model (and the product's real MCP server), and the same workload runs through a floor:
 * a plain Node HTTP server streaming the same Mastra agent (no tools) as AG-UI, with no auth and no
 * database, so each figure is also a ratio against the runtime's own floor. PGlite always;
 * PostgreSQL too when BENCH_DATABASE_URL names a server (then also the cross-instance figures,
 * with a second app instance in its own process). BENCH_ONLY=firstByte,throughput,... runs a
 * subset (names as in the JSON). `panel`: the panel's main-thread time and message-row renders
 * while an answer streams, in Chromium against the production build (scripts/bench-panel.ts).
 * `next`: the production server against a Next.js floor and a plain Node floor, each in its own
 * process (scripts/bench-next.ts).
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { benchSelection } from './lib/bench-selection';
import { pct } from './lib/stats';

const isChild = process.argv.includes('--child');

if (!isChild) {
  const results: Record<string, unknown> = {};
  const { names: wanted, want: wantSection } = benchSelection('BENCH_ONLY');
  // The in-process workloads run unless only the sections with scripts of their own were asked for.
  const inProcess = wanted.length === 0 || wanted.some((w) => w !== 'panel' && w !== 'next');
  const run = (label: string, env: Record<string, string | undefined>) => {
    if (!inProcess) return;
    const res = spawnSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', fileURLToPath(import.meta.url), '--child'],
      {
        env: { ...process.env, ...env, NODE_ENV: 'test', PRISMA_COUNT_QUERIES: '1', AUTO_SEED: '0' },
        encoding: 'utf8',
        maxBuffer: 64 * 1024 * 1024,
      },
    );
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
  if (pgUrl && inProcess) {
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
  /** A bench of its own process (its JSON is the last line it prints). */
  const subBench = (file: string, name: string) => {
    const res = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(file, import.meta.url))], {
      env: process.env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 16 * 1024 * 1024,
    });
    return res.status === 0
      ? JSON.parse(res.stdout.trim().split('\n').pop() ?? '{}')
      : { error: `${name} bench failed (exit ${res.status ?? res.signal})` };
  };
  // The panel in Chromium against the production build (scripts/bench-panel.ts; builds when stale).
  if (wantSection('panel')) results.panel = subBench('./bench-panel.ts', 'panel');
  // The production server against the Next.js and plain Node floors (scripts/bench-next.ts).
  if (wantSection('next')) results.next = subBench('./bench-next.ts', 'next');
  console.log(
    JSON.stringify(
      { node: process.version, cpus: (await import('node:os')).cpus().length, date: new Date().toISOString(), results },
      null,
      2,
    ),
  );
  process.exit(0);
}

// ------------------------------------------------------------------------------------------------
// Child: one database kind
// ------------------------------------------------------------------------------------------------

const http = await import('node:http');
const { EventEncoder } = await import('@ag-ui/encoder');
const { Agent } = await import('@mastra/core/agent');
const { getDb, closeDb, queryStats } = await import('@/server/db');
const { createAgentRoutes } = await import('@/features/in-app-agent/server/handler');
const { replayConversation } = await import('@/features/in-app-agent/server/persistence');
const { newId } = await import('@/server/ids');
const { startTestServer } = await import('../tests/helpers/http');
const { createProject, createUser } = await import('../tests/helpers/fixtures');
const { parseSse } = await import('../tests/helpers/agent');

process.env.AGENT_RATE_LIMIT_PER_MINUTE = '10000';
// The burst workloads start 100 runs of one user at once.
process.env.AGENT_MAX_CONCURRENT_RUNS_PER_USER = '1000';
const db = await getDb();
const prisma = db.prisma;
const rssAtStart = process.memoryUsage().rss;

type Part = Record<string, unknown>;
interface ModelScript {
  chunks: number;
  delayMs: number;
  stamp: boolean;
}
let script: ModelScript = { chunks: 1, delayMs: 0, stamp: false };
/** When the model was last asked to stream (performance.now()). */
let modelCalledAt = -1;
/** Bytes of the files in the newest message of the model's last request. */
let modelFileBytes = 0;
/** Stamps are wall-clock milliseconds (shared by every process of the machine). */
const wallNow = () => performance.timeOrigin + performance.now();

/**
 * Text deltas an instant model's stream gives at once: what one 64 KB read of an OpenAI-compatible
 * stream's socket holds (about 110 bytes a delta). A model over the network is read this way, one
 * read a turn of the event loop; a stream that held all of a long answer from the start would
 * measure how its consumers queue 20,000 parts, not how fast they stream.
 */
const DELTAS_PER_READ = 500;

/**
 * A scripted model: `chunks` text deltas, `delayMs` apart (with no delay, `DELTAS_PER_READ` a turn);
 * stamped deltas carry their send time.
 */
function benchModel() {
  return {
    specificationVersion: 'v2' as const,
    provider: 'bench',
    modelId: 'bench',
    supportedUrls: {},
    async doGenerate(): Promise<never> {
      throw new Error('stream only');
    },
    async doStream(options?: { prompt?: Array<{ content: unknown }> }) {
      modelCalledAt = performance.now();
      // The bytes of the files the newest message carried (the attachment workload checks them).
      const newest = options?.prompt?.at(-1)?.content;
      modelFileBytes = Array.isArray(newest)
        ? newest.reduce(
            (n: number, p: { type?: string; data?: unknown }) =>
              n +
              (p.type !== 'file'
                ? 0
                : p.data instanceof Uint8Array
                  ? p.data.byteLength
                  : typeof p.data === 'string'
                    ? Buffer.byteLength(p.data, 'base64')
                    : 0),
            0,
          )
        : 0;
      const s = script;
      const stream = new ReadableStream<Part>({
        async start(c) {
          c.enqueue({ type: 'stream-start', warnings: [] });
          c.enqueue({ type: 'text-start', id: 't' });
          for (let i = 0; i < s.chunks; i++) {
            if (s.delayMs) await new Promise((r) => setTimeout(r, s.delayMs));
            else if (i > 0 && i % DELTAS_PER_READ === 0) await new Promise((r) => setImmediate(r));
            c.enqueue({ type: 'text-delta', id: 't', delta: s.stamp ? `<${wallNow().toFixed(3)}>` : 'tok ' });
          }
          c.enqueue({ type: 'text-end', id: 't' });
          c.enqueue({
            type: 'finish',
            finishReason: 'stop',
            usage: { inputTokens: 1, outputTokens: s.chunks, totalTokens: s.chunks + 1 },
          });
          c.close();
        },
      });
      return { stream };
    },
  };
}

type Timings = { opened: number; historyLoaded: number; toolsListed: number; agentStarted: number };
let lastTimings: Timings | undefined;
const benchHandle = {
  model: benchModel(),
  info: { provider: 'demo' as const, modelId: 'bench', label: 'bench', demo: true },
};
const routes = createAgentRoutes({ model: () => benchHandle as never, onRunTimings: (t) => (lastTimings = t) });
const server = await startTestServer({ agentRoutes: routes as never });
const project = await createProject('Bench');
const agentUrl = `${server.url}/api/projects/${project.id}/in-app-agent`;

/**
 * The floor: the same agent (no tools, a short system prompt) streamed as AG-UI by a plain Node
 * HTTP server, with no auth, no database and no persistence.
 */
const encoder = new EventEncoder();
const floorServer = http.createServer(async (req, res) => {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: Array<{ content: string }> };
  const threadId = newId('cv_');
  const runId = newId('run_');
  const messageId = newId('msg_');
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(encoder.encodeSSE({ type: 'RUN_STARTED', threadId, runId } as never));
  const agent = new Agent({ id: 'floor', name: 'floor', instructions: 'bench', model: benchModel() as never });
  const out = await agent.stream([{ role: 'user', content: body.messages.at(-1)!.content }] as never);
  res.write(encoder.encodeSSE({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' } as never));
  for await (const c of out.fullStream as unknown as AsyncIterable<{ type: string; payload?: { text?: string } }>) {
    if (c.type === 'text-delta')
      res.write(
        `data: ${JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: c.payload?.text ?? '' })}\n\n`,
      );
  }
  res.write(encoder.encodeSSE({ type: 'TEXT_MESSAGE_END', messageId } as never));
  res.end(encoder.encodeSSE({ type: 'RUN_FINISHED', threadId, runId } as never));
});
await new Promise<void>((r) => floorServer.listen(0, '127.0.0.1', r));
const floorUrl = `http://127.0.0.1:${(floorServer.address() as { port: number }).port}/`;

const round = (n: number) => Math.round(n * 1000) / 1000;

/** POSTs one AG-UI request and reads the SSE answer to its end. */
async function stream(
  url: string,
  cookie: string | null,
  text: string | unknown[],
  onChunk?: (text: string, at: number) => void,
) {
  modelCalledAt = -1;
  const t0 = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(cookie ? { origin: server.url, cookie } : {}) },
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
const ours = (cookie: string, text: string, onChunk?: (text: string, at: number) => void) =>
  stream(agentUrl, cookie, text, onChunk);
const floor = (text: string, onChunk?: (text: string, at: number) => void) => stream(floorUrl, null, text, onChunk);

/** Arrival (wall clock) minus send time of every stamp in a chunk (a chunk may carry several). */
const stampDelays = (text: string, atPerf: number, into: number[], stamps?: number[]) => {
  const at = performance.timeOrigin + atPerf;
  for (const m of text.matchAll(/<(\d+\.\d+)>/g)) {
    into.push(at - Number(m[1]));
    stamps?.push(Number(m[1]));
  }
};
const { want } = benchSelection('BENCH_ONLY');
const out: Record<string, unknown> = { database: db.kind };

const user = project.users.MEMBER;

// Warm up (module loading, first queries, JIT).
script = { chunks: 5, delayMs: 0, stamp: false };
for (let i = 0; i < 5; i++) await ours(user.cookie, 'warm up');
for (let i = 0; i < 5; i++) await floor('warm up');

// BENCH_CPU_PROFILE=<file>: a CPU profile of the measured short answers (after the warm-up),
// readable in Chrome DevTools, to see where a run's set-up spends its time.
const { Session } = await import('node:inspector/promises');
const profiler = process.env.BENCH_CPU_PROFILE ? new Session() : undefined;
if (profiler) {
  profiler.connect();
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.start');
}

// 1. POST to first SSE byte and POST to the model's first request (the set-up: run and key,
// history, tools, agent), with an instant model; and when each set-up step ended.
if (want('firstByte') || want('firstModelRequest')) {
  script = { chunks: 1, delayMs: 0, stamp: false };
  const firstBytes: number[] = [];
  const firstModel: number[] = [];
  const floorFirst: number[] = [];
  const floorModel: number[] = [];
  const phases: Record<keyof Timings, number[]> = {
    opened: [],
    historyLoaded: [],
    toolsListed: [],
    agentStarted: [],
  };
  for (let i = 0; i < 40; i++) {
    lastTimings = undefined;
    const r = await ours(user.cookie, 'hello');
    firstBytes.push(r.firstByte);
    firstModel.push(r.firstModelRequest);
    if (lastTimings) for (const k of Object.keys(phases) as Array<keyof Timings>) phases[k].push(lastTimings[k]);
    const f = await floor('hello');
    floorFirst.push(f.firstByte);
    floorModel.push(f.firstModelRequest);
  }
  const modelP50 = pct(firstModel, 50);
  const floorModelP50 = pct(floorModel, 50);
  out.firstByteMs = {
    p50: round(pct(firstBytes, 50)),
    p95: round(pct(firstBytes, 95)),
    floorP50: round(pct(floorFirst, 50)),
    budgetP50: 5,
  };
  out.firstModelRequestMs = {
    p50: round(modelP50),
    p95: round(pct(firstModel, 95)),
    floorP50: round(floorModelP50),
    aboveFloorP50: round(modelP50 - floorModelP50),
    budgetAboveFloorP50: 8,
  };
  // When each set-up step ended, after the route received the request (p50; the run's key is
  // stored by the statement that opens it; the history and the tools overlap).
  out.setupPhasesMs = Object.fromEntries(Object.entries(phases).map(([k, v]) => [k, round(pct(v, 50))]));
}
// 1b. POST to the model's first request when the message attaches one 1 MB image (uploaded before,
// not timed): the run reads its row, binds it, reads its bytes for the model and encodes them.
if (want('firstModelRequestWithImage')) {
  script = { chunks: 1, delayMs: 0, stamp: false };
  const sharp = (await import('sharp')).default;
  // Noise does not compress: a 600 x 580 PNG is about 1 MB, stored as it is (no scaling, under 3.5 MB).
  const raw = randomBytes(600 * 580 * 3);
  const image = await sharp(raw, { raw: { width: 600, height: 580, channels: 3 } })
    .png()
    .toBuffer();
  const upload = async () => {
    const res = await fetch(`${agentUrl}/attachments?name=bench.png`, {
      method: 'POST',
      headers: { origin: server.url, cookie: user.cookie, 'content-type': 'image/png' },
      body: image,
    });
    const json = (await res.json()) as { attachment: { attachmentId: string; size: number } };
    return json.attachment;
  };
  const times: number[] = [];
  let bytes = 0;
  let sentToModel = 0;
  for (let i = 0; i < 23; i++) {
    const attachment = await upload();
    bytes = attachment.size;
    const r = await ours(user.cookie, [
      { type: 'text', text: 'what is this?' },
      { type: 'image', source: { type: 'file', value: attachment.attachmentId } },
    ] as never);
    if (r.status === 200 && modelFileBytes === attachment.size) sentToModel += 1;
    if (i >= 3) times.push(r.firstModelRequest); // the first three warm the path up
  }
  const textOnly = (out.firstModelRequestMs as { p50: number } | undefined)?.p50;
  out.firstModelRequestWithImageMs = {
    p50: round(pct(times, 50)),
    p95: round(pct(times, 95)),
    imageBytes: bytes,
    runs: times.length,
    /** Runs whose model request carried the image's bytes (all of them, or the figure means nothing). */
    imageReachedModel: sentToModel,
    ...(textOnly === undefined ? {} : { textOnlyP50: textOnly, aboveTextOnlyP50: round(pct(times, 50) - textOnly) }),
  };
}

if (profiler) {
  const { profile } = await profiler.post('Profiler.stop');
  (await import('node:fs')).writeFileSync(process.env.BENCH_CPU_PROFILE!, JSON.stringify(profile));
  profiler.disconnect();
}

// 2. Server CPU per short answer (this process's CPU: route, database, runtime and the client
// reading the answer, the same client for both).
if (want('cpuPerShortAnswer')) {
  script = { chunks: 5, delayMs: 0, stamp: false };
  const cpu = async (fn: () => Promise<unknown>, n: number) => {
    const c0 = process.cpuUsage();
    for (let i = 0; i < n; i++) await fn();
    const d = process.cpuUsage(c0);
    return (d.user + d.system) / 1000 / n;
  };
  const oursMs = await cpu(() => ours(user.cookie, 'short'), 60);
  const floorMs = await cpu(() => floor('short'), 60);
  out.cpuPerShortAnswerMs = {
    ours: round(oursMs),
    floor: round(floorMs),
    ratio: round(oursMs / floorMs),
    budgetRatio: 2,
  };
}

// 3. Model chunk to client.
if (want('chunkToClient')) {
  script = { chunks: 200, delayMs: 2, stamp: true };
  const delays: number[] = [];
  const floorDelays: number[] = [];
  for (let i = 0; i < 3; i++) await ours(user.cookie, 'stamped', (t, at) => stampDelays(t, at, delays));
  for (let i = 0; i < 3; i++) await floor('stamped', (t, at) => stampDelays(t, at, floorDelays));
  out.chunkToClientMs = {
    p50: round(pct(delays, 50)),
    p99: round(pct(delays, 99)),
    floorP50: round(pct(floorDelays, 50)),
    budgetP50: 1,
  };
}

// 4. Pipeline throughput with an instant model (median of three runs each: the machine is shared).
if (want('throughput')) {
  script = { chunks: 20_000, delayMs: 0, stamp: false };
  const rates: number[] = [];
  const floorRates: number[] = [];
  for (let i = 0; i < 3; i++) {
    const big = await ours(user.cookie, 'throughput');
    const events = parseSse(big.body);
    const assistant = new Set(
      events.flatMap((e) => (e.type === 'TEXT_MESSAGE_START' && e.role === 'assistant' ? [e.messageId] : [])),
    );
    const deltas = events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT' && assistant.has(e.messageId)).length;
    if (deltas !== 20_000) throw new Error(`throughput run lost deltas: ${deltas}`);
    rates.push(deltas / (big.total / 1000));
    const f = await floor('throughput');
    floorRates.push(20_000 / (f.total / 1000));
  }
  const rate = pct(rates, 50);
  const floorRate = pct(floorRates, 50);
  out.throughput = {
    deltasPerSecond: Math.round(rate),
    floorDeltasPerSecond: Math.round(floorRate),
    ratio: round(rate / floorRate),
    budgetRatio: 0.9,
    budget: 20_000,
  };
}

// 5. Database writes for one 2,000-token answer.
if (want('statementsFor2000TokenAnswer')) {
  script = { chunks: 2_000, delayMs: 0, stamp: false };
  const before = { ...queryStats };
  await ours(user.cookie, 'two thousand tokens');
  await new Promise((r) => setTimeout(r, 200)); // the run's last writes follow the stream's end
  out.statementsFor2000TokenAnswer = {
    total: queryStats.total - before.total,
    writes: queryStats.writes - before.writes,
    budgetWrites: 10,
  };
}

// 6. Replay of a 1,000-message conversation.
if (want('replay1000MessagesMs')) {
  const conv = await prisma.agentConversation.create({
    data: { id: newId('cv_'), projectId: project.id, userId: user.id, title: 'replay bench' },
  });
  const runRow = await prisma.agentRun.create({
    data: { id: newId('run_'), conversationId: conv.id, userId: user.id, status: 'COMPLETED' },
  });
  const rows = [];
  let seq = 0;
  rows.push({ type: 'RUN_STARTED', runId: runRow.id, threadId: conv.id });
  for (let i = 0; i < 1000; i++) {
    rows.push({
      type: 'TEXT_MESSAGE',
      messageId: `m${i}`,
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i} `.repeat(20),
      complete: true,
    });
  }
  rows.push({ type: 'RUN_FINISHED', runId: runRow.id, threadId: conv.id, outcome: { type: 'success' } });
  await prisma.agentEvent.createMany({
    data: rows.map((p) => ({
      id: newId('ev_'),
      conversationId: conv.id,
      runId: runRow.id,
      seq: ++seq,
      type: p.type,
      payload: { v: 1, ...p },
    })),
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

/** `n` users of the project, each with a session. */
async function members(n: number) {
  return Promise.all(
    Array.from({ length: n }, async () => {
      const u = await createUser('Load');
      await prisma.projectMembership.create({
        data: { id: newId('m_'), projectId: project.id, userId: u.id, role: 'MEMBER' },
      });
      return u;
    }),
  );
}

// 7. 100 runs started at once: every stamped delta's arrival minus its send time, for the burst
// and once every run is streaming; the floor under the same load.
if (want('concurrent100')) {
  script = { chunks: 50, delayMs: 20, stamp: true };
  const users = await members(100);
  const delays: number[] = [];
  const stamps: number[] = [];
  const started: number[] = [];
  let errors = 0;
  await Promise.all(
    users.map(async (u) => {
      let first = true;
      const res = await ours(u.cookie, 'concurrent', (t, at) => {
        if (first && t.includes('<')) {
          first = false;
          started.push(performance.timeOrigin + at);
        }
        stampDelays(t, at, delays, stamps);
      }).catch(() => ({ status: 0, body: '' }));
      if (res.status !== 200 || !res.body.includes('RUN_FINISHED')) errors += 1;
    }),
  );
  // Once every run streams (the set-ups of the 100 runs no longer compete with the streams).
  const allStreaming = Math.max(...started);
  const steady = delays.filter((_, i) => stamps[i]! > allStreaming);
  const floorDelays: number[] = [];
  await Promise.all(Array.from({ length: 100 }, () => floor('concurrent', (t, at) => stampDelays(t, at, floorDelays))));
  out.concurrent100 = {
    errors,
    deltas: delays.length,
    addedChunkDelayMs: { p50: round(pct(delays, 50)), p99: round(pct(delays, 99)) },
    onceAllStreaming: {
      deltas: steady.length,
      addedChunkDelayMs: { p50: round(pct(steady, 50)), p99: round(pct(steady, 99)) },
    },
    floorChunkDelayMs: { p50: round(pct(floorDelays, 50)), p99: round(pct(floorDelays, 99)) },
    budgetP99: 50,
    budgetSteadyP99: 25,
  };
}

/** Starts a run and reads its SSE until `until` says so; resolves with what came and the rest's reader. */
async function startFollowable(cookie: string) {
  const res = await fetch(agentUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: server.url, cookie },
    body: JSON.stringify({ threadId: 'new', messages: [{ role: 'user', content: 'a long one' }] }),
  });
  const runId = res.headers.get('x-in-app-agent-run-id')!;
  return { runId, res };
}

/** Reads an SSE response, reporting each chunk; returns when it ends. */
async function drain(res: Response, onChunk?: (text: string, at: number) => void) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    onChunk?.(decoder.decode(value, { stream: true }), performance.now());
  }
}

// 8. Reattach: from the follow request to its first event, a run streaming on this instance.
if (want('reattach')) {
  script = { chunks: 600, delayMs: 5, stamp: false };
  const times: number[] = [];
  const { runId, res } = await startFollowable(user.cookie);
  let position = 0;
  const direct = drain(res, (t) => {
    for (const m of t.matchAll(/^id: (\d+)$/gm)) position = Number(m[1]);
  });
  await new Promise((r) => setTimeout(r, 200));
  for (let i = 0; i < 40; i++) {
    const controller = new AbortController();
    const t0 = performance.now();
    const follow = await fetch(`${agentUrl}/runs/${runId}/events?after=${Math.max(0, position - 3)}`, {
      headers: { cookie: user.cookie },
      signal: controller.signal,
    });
    const reader = follow.body!.getReader();
    await reader.read();
    times.push(performance.now() - t0);
    controller.abort();
    await reader.cancel().catch(() => undefined);
  }
  await direct;
  out.reattachFirstEventMs = { p50: round(pct(times, 50)), p99: round(pct(times, 99)), budgetP50: 30 };
}

// 9. Across instances (PostgreSQL): a second instance in its own process follows runs of this
// one; the added delay is its arrival minus the arrival on the run's own connection, per delta.
if (want('crossInstance') && db.kind === 'postgres') {
  const { startInstance } = await import('../tests/helpers/instances');
  const other = await startInstance({ AGENT_MCP_URL: undefined, NEXTAUTH_URL: undefined });
  try {
    script = { chunks: 300, delayMs: 5, stamp: true };
    const added: number[] = [];
    for (let i = 0; i < 3; i++) {
      const direct = new Map<string, number>();
      const remote = new Map<string, number>();
      const { runId, res } = await startFollowable(user.cookie);
      const record = (into: Map<string, number>) => (t: string, at: number) => {
        for (const m of t.matchAll(/<(\d+\.\d+)>/g)) into.set(m[1]!, at);
      };
      const follow = await fetch(`${other.url}/api/projects/${project.id}/in-app-agent/runs/${runId}/events?after=0`, {
        headers: { cookie: user.cookie },
      });
      await Promise.all([drain(res, record(direct)), drain(follow, record(remote))]);
      for (const [stamp, at] of remote) {
        const d = direct.get(stamp);
        if (d !== undefined) added.push(at - d);
      }
    }
    out.crossInstanceAddedDelayMs = {
      deltas: added.length,
      p50: round(pct(added, 50)),
      p99: round(pct(added, 99)),
      budgetP99: 25,
    };
  } finally {
    await other.kill('SIGKILL');
  }
}

// 10. Memory: at start, now, and after 150 answers at once.
if (want('memory')) {
  const afterBench = process.memoryUsage().rss;
  script = { chunks: 20, delayMs: 10, stamp: false };
  const users = await members(150);
  await Promise.all(users.map((u) => ours(u.cookie, 'many at once')));
  (globalThis as { gc?: () => void }).gc?.();
  out.memoryMB = {
    rssAtStart: round(rssAtStart / 1e6),
    rssAfterBench: round(afterBench / 1e6),
    rssAfter150Concurrent: round(process.memoryUsage().rss / 1e6),
    heapUsedAfter150Concurrent: round(process.memoryUsage().heapUsed / 1e6),
  };
}

await server.close();
await new Promise<void>((r) => floorServer.close(() => r()));
const { closeFanOut } = await import('@/features/in-app-agent/server/fan-out');
await closeFanOut();
await closeDb();
console.log(JSON.stringify(out));
process.exit(0);
