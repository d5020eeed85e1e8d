/**
 * `npm run bench:next` (also the `next` section of `npm run bench`): the product as deployed
 * against two floors, every server in a process of its own, all on ONE scripted OpenAI-compatible
 * model served over HTTP on 127.0.0.1 by this script (tests/helpers/fake-models.ts):
 *   - the product: its production build (`next start`, built first when missing or stale), on a
 *     fresh embedded database (PGlite in a temp dir) and, with BENCH_DATABASE_URL, on a fresh
 *     PostgreSQL database too; signed in as the demo member, POSTing AG-UI to the project's
 *     in-app-agent route;
 *   - the Next.js floor: bench/next-floor, a route handler that streams the bare Mastra agent as
 *     AG-UI (no auth, no database), built with the repository's `next` and started with `next start`;
 *   - the plain Node floor: the same bare agent in a `node:http` server (bench/next-floor/plain-server.ts).
 * Figures (each target; rounds alternate the targets): POST to first SSE byte and to the first
 * TEXT_MESSAGE_CONTENT (short answer), p50; server CPU per short answer (utime + stime of the
 * server's process tree from /proc over sequential answers); text deltas/s of one long answer with
 * an instant model; 50 long answers at once (wall time, longest gap between two chunks a client
 * received); RSS of the server's process tree after the warm-up. Each figure carries its budget and
 * `met`; the script reports, it does not fail.
 *
 * BENCH_NEXT_ONLY=firstByte,cpu,throughput,concurrent runs a subset (RSS is always read);
 * BENCH_NEXT_QUICK=1 fewer rounds; BENCH_SKIP_BUILD=1 uses the existing builds as they are.
 * BENCH_NEXT_CPU_PROFILE=<dir>: the Next.js servers (the product's and the floor's) run with
 * `--cpu-prof` into <dir> and `--heapsnapshot-signal=SIGUSR2`; a heap snapshot of each is taken after
 * the warm-up (<name>.heapsnapshot), the CPU profile is written when it stops (<name>.cpuprofile), and
 * the JSON gives the window of its measured short answers (`profileWindowMs`) for
 * `tsx scripts/cpu-profile-top.ts <profile> --from <ms> --to <ms>`. The same servers sample what they
 * allocate during those answers (V8's sampling heap profiler, objects already collected included;
 * scripts/lib/heap-sampling.cjs): <name>.heapprofile, for `tsx scripts/cpu-profile-top.ts
 * <name>.heapprofile`, and the figure "allocated per short answer". The profiler slows the servers:
 * take the other figures from a run without it.
 * The JSON line printed last is the result; a table of the figures goes to stderr.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import ts from 'typescript';
import { DEMO_PASSWORD, DEMO_PROJECT_SLUG } from '@/server/seed';
import { buildReason } from '../tests/e2e/global-setup';
import { startFakeOpenAI, type ScriptedTurn } from '../tests/helpers/fake-models';
import { trpcClient } from '../tests/helpers/trpc';
import { freePort, signIn } from './lib/session';
import { benchSelection } from './lib/bench-selection';
import { nextBuildArgs, runNextBuild } from './lib/next-build';
import { median, r2 } from './lib/stats';
import { waitForServer } from './lib/wait-for-server';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const floorDir = path.join(root, 'bench/next-floor');
const nextBin = require.resolve('next/dist/bin/next');
const quick = process.env.BENCH_NEXT_QUICK === '1';
const { want } = benchSelection('BENCH_NEXT_ONLY');
const profileDir = process.env.BENCH_NEXT_CPU_PROFILE ? path.resolve(process.env.BENCH_NEXT_CPU_PROFILE) : undefined;

const SHORT_ROUNDS = quick ? 15 : 40;
const CPU_ROUNDS = quick ? 3 : 5;
const CPU_ANSWERS_PER_ROUND = 20;
const LONG_DELTAS = 20_000;
const LONG_ROUNDS = quick ? 1 : 3;
const CONCURRENT = 50;
const CONCURRENT_DELTAS = 1_000;
const CONCURRENT_ROUNDS = quick ? 1 : 2;

const say = (msg: string) => process.stderr.write(`[bench-next] ${msg}\n`);

// ------------------------------------------------------------------------------------------------
// The model: one scripted OpenAI-compatible server for every target, answering by the prompt.
// ------------------------------------------------------------------------------------------------

const SHORT = ['A short ', 'answer ', 'in five ', 'text ', 'deltas.'];
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);
const LONG = words(LONG_DELTAS);
const CONCURRENT_TEXT = words(CONCURRENT_DELTAS);

function scriptFor(body: Record<string, unknown>): ScriptedTurn {
  const messages = (body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  if (text.includes('bench: long')) return { text: LONG };
  if (text.includes('bench: concurrent')) return { text: CONCURRENT_TEXT };
  return { text: SHORT };
}

// ------------------------------------------------------------------------------------------------
// Processes: /proc readings of a process tree.
// ------------------------------------------------------------------------------------------------

const TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim() || 100);

/** The fields of /proc/<pid>/stat after the command (field 3, state, is [0]). */
function statFields(pid: number): string[] | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** `pid` and every process below it. */
function processTree(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const fields = statFields(Number(name));
    if (!fields) continue;
    const ppid = Number(fields[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    for (const c of children.get(p) ?? []) visit(c);
  };
  visit(pid);
  return out;
}

/** CPU time (user + system, every thread) of a process tree, ms. */
function treeCpuMs(pid: number): number {
  let ticks = 0;
  for (const p of processTree(pid)) {
    const f = statFields(p);
    if (f) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * TICK_MS;
}

/** Resident memory of a process tree, MB. */
function treeRssMB(pid: number): number {
  let kb = 0;
  for (const p of processTree(pid)) {
    try {
      const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      kb += Number(m?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return Math.round(kb / 1024);
}

// ------------------------------------------------------------------------------------------------
// Targets
// ------------------------------------------------------------------------------------------------

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  server: ChildProcess;
  /** When its process was spawned (performance.now()). */
  spawnedAt: number;
  log: string;
  /** With BENCH_NEXT_CPU_PROFILE: the port of its heap sampling (scripts/lib/heap-sampling.cjs). */
  heapSamplingPort?: number;
}

async function stop(server: ChildProcess): Promise<void> {
  if (!server.pid || server.exitCode !== null || server.signalCode !== null) return;
  const pid = server.pid;
  const exited = new Promise((r) => server.once('exit', r));
  try {
    process.kill(-pid, 'SIGTERM');
  } catch {
    return;
  }
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // gone
  }
}

/** Every server started, stopped at the end whether or not it came up. */
const spawned: ChildProcess[] = [];

function spawnServer(args: string[], env: NodeJS.ProcessEnv, log: string): ChildProcess {
  const out = openSync(log, 'w');
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: ['ignore', out, out], detached: true });
  closeSync(out);
  spawned.push(child);
  return child;
}

/** The environment every server starts from: this one without model, database or telemetry settings. */
function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { NODE_ENV: 'production' };
  for (const [k, v] of Object.entries(process.env))
    if (!/^(DATABASE_URL|PGLITE_DIR|NODE_OPTIONS|AWS_.*|BEDROCK_.*|OPENAI_COMPATIBLE_.*|OTEL_.*|AGENT_.*)$/.test(k))
      env[k] = v;
  return { ...env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' };
}

function buildIfStale(label: string, reason: string | null): void {
  if (!reason) return;
  if (process.env.BENCH_SKIP_BUILD === '1') {
    say(`${label}: ${reason}; BENCH_SKIP_BUILD=1, so using it anyway`);
    return;
  }
  say(`${label}: ${reason}: running \`next ${nextBuildArgs(root).join(' ')}\`…`);
  runNextBuild(root, { stdio: ['ignore', process.stderr, process.stderr] });
}

/** The Next.js floor's sources, relative to bench/next-floor. */
const FLOOR_FILES = ['app/api/agent/route.ts', 'floor.ts', 'next.config.ts', 'plain-server.ts'];

/**
 * The Next.js floor, built: a copy of bench/next-floor outside the repository (inside it, Next.js
 * would take the product's src/instrumentation.ts and src/proxy.ts for the floor's own), with the
 * repository's node_modules linked in, built with the repository's `next`. The copy is kept in the
 * temp dir under a hash of its sources, Next.js's version and the lockfile, and reused while they
 * stay the same.
 */
function floorApp(): string {
  const hash = createHash('sha256');
  for (const f of [...FLOOR_FILES.map((x) => path.join(floorDir, x)), path.join(root, 'package-lock.json')])
    hash.update(f).update(readFileSync(f));
  hash.update(String((require('next/package.json') as { version: string }).version));
  hash.update(nextBuildArgs(root).join(' '));
  const dir = path.join(os.tmpdir(), `bench-next-floor-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(path.join(dir, '.next', 'BUILD_ID'))) return dir;
  say(`building the Next.js floor in ${dir}…`);
  rmSync(dir, { recursive: true, force: true });
  for (const f of FLOOR_FILES) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    cpSync(path.join(floorDir, f), path.join(dir, f));
  }
  symlinkSync(realpathSync(path.join(root, 'node_modules')), path.join(dir, 'node_modules'), 'dir');
  writeFileSync(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        lib: ['dom', 'dom.iterable', 'ES2023'],
        strict: true,
        noEmit: true,
        module: 'esnext',
        moduleResolution: 'bundler',
        esModuleInterop: true,
        skipLibCheck: true,
        isolatedModules: true,
        jsx: 'react-jsx',
      },
      include: ['**/*.ts'],
      exclude: ['node_modules'],
    }),
  );
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ private: true, type: 'module' }));
  // The plain Node floor runs as JavaScript (under a TypeScript loader it would carry the loader's
  // memory and CPU): its two files, transpiled.
  mkdirSync(path.join(dir, 'plain'));
  for (const f of ['floor.ts', 'plain-server.ts']) {
    const js = ts.transpileModule(readFileSync(path.join(floorDir, f), 'utf8'), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    writeFileSync(
      path.join(dir, 'plain', f.replace(/\.ts$/, '.js')),
      js.replace("from './floor'", "from './floor.js'"),
    );
  }
  // Built like the product: with its build script's flags.
  try {
    runNextBuild(root, { dir, stdio: ['ignore', process.stderr, process.stderr] });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`the Next.js floor: ${(err as Error).message}`);
  }
  return dir;
}

/**
 * Node's flags for a Next.js server with BENCH_NEXT_CPU_PROFILE: a CPU profile at exit, a heap
 * snapshot on SIGUSR2, and heap sampling the bench starts and stops over HTTP (`heapSampling`).
 */
function profileFlags(label: string): string[] {
  if (!profileDir) return [];
  return [
    '--cpu-prof',
    `--cpu-prof-dir=${profileDir}`,
    `--cpu-prof-name=${label}.cpuprofile`,
    '--heapsnapshot-signal=SIGUSR2',
    `--diagnostic-dir=${profileDir}`,
    '--require',
    path.join(root, 'scripts', 'lib', 'heap-sampling.cjs'),
  ];
}

/** With BENCH_NEXT_CPU_PROFILE: the port a server's heap sampling listens on (else none). */
async function heapSamplingEnv(): Promise<{ port?: number; env: Record<string, string> }> {
  if (!profileDir) return { env: {} };
  const port = await freePort();
  return { port, env: { BENCH_HEAP_SAMPLING_PORT: String(port) } };
}

type HeapNode = { callFrame: Record<string, unknown>; selfSize: number; children: HeapNode[] };

/** Starts a server's heap sampling; the returned function stops it and answers its profile's root. */
async function heapSampling(t: Target): Promise<() => Promise<HeapNode>> {
  const call = async (step: 'start' | 'stop') => {
    const res = await fetch(`http://127.0.0.1:${t.heapSamplingPort}/${step}`, { method: 'POST' });
    if (!res.ok) throw new Error(`${t.name}: heap sampling ${step}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<{ head?: HeapNode }>;
  };
  await call('start');
  return async () => {
    const { head } = await call('stop');
    if (!head) throw new Error(`${t.name}: heap sampling answered no profile`);
    return head;
  };
}

const allocatedBytes = (n: HeapNode): number => n.children.reduce((sum, c) => sum + allocatedBytes(c), n.selfSize);

async function startProduct(
  label: string,
  tempDir: string,
  modelUrl: string,
  database: { PGLITE_DIR: string } | { DATABASE_URL: string },
): Promise<Target> {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const sampling = await heapSamplingEnv();
  const env: NodeJS.ProcessEnv = {
    ...baseEnv(),
    ...sampling.env,
    ...database,
    NEXTAUTH_SECRET: 'bench-next-nextauth-secret-0123456789abcdef',
    MCP_OVERRIDE_SECRET: 'bench-next-mcp-override-secret-0123456789abcdef',
    NEXTAUTH_URL: baseUrl,
    AUTO_SEED: '1',
    PORT: String(port),
    AGENT_MODEL_PROVIDER: 'openai-compatible',
    OPENAI_COMPATIBLE_BASE_URL: modelUrl,
    OPENAI_COMPATIBLE_MODEL: 'bench',
    // The bench asks more than a person would: no limit may refuse its answers.
    AGENT_RATE_LIMIT_PER_MINUTE: '10000',
    AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
  };
  const prep = spawnSync(process.execPath, [require.resolve('tsx/cli'), 'scripts/prepare-db.ts'], {
    cwd: root,
    env,
    encoding: 'utf8',
  });
  if (prep.status !== 0) throw new Error(`${label}: preparing the database failed:\n${prep.stdout}${prep.stderr}`);
  const log = path.join(tempDir, `${label}.log`);
  const spawnedAt = performance.now();
  const server = spawnServer(
    [...profileFlags(label), nextBin, 'start', '--hostname', '127.0.0.1', '--port', String(port)],
    env,
    log,
  );
  await waitForServer(`${baseUrl}/login`, server, { log });
  const session = await signIn(baseUrl, 'member@example.com', DEMO_PASSWORD);
  const projects = (await trpcClient(baseUrl, session.cookie).tracker.projects.list.query()) as Array<{
    id: string;
    slug: string;
  }>;
  const project = projects.find((p) => p.slug === DEMO_PROJECT_SLUG);
  if (!project) throw new Error(`${label}: the demo project is missing`);
  return {
    name: label,
    url: `${baseUrl}/api/projects/${project.id}/in-app-agent`,
    headers: { origin: baseUrl, cookie: session.cookie },
    server,
    spawnedAt,
    log,
    heapSamplingPort: sampling.port,
  };
}

async function startNextFloor(appDir: string, tempDir: string, modelUrl: string): Promise<Target> {
  const port = await freePort();
  const sampling = await heapSamplingEnv();
  const env = { ...baseEnv(), ...sampling.env, OPENAI_COMPATIBLE_BASE_URL: modelUrl, OPENAI_COMPATIBLE_MODEL: 'bench' };
  const log = path.join(tempDir, 'next-floor.log');
  const spawnedAt = performance.now();
  const server = spawnServer(
    [...profileFlags('nextFloor'), nextBin, 'start', appDir, '--hostname', '127.0.0.1', '--port', String(port)],
    env,
    log,
  );
  const url = `http://127.0.0.1:${port}/api/agent`;
  await waitForServer(url, server, { log });
  return { name: 'nextFloor', url, headers: {}, server, spawnedAt, log, heapSamplingPort: sampling.port };
}

async function startPlainFloor(appDir: string, tempDir: string, modelUrl: string): Promise<Target> {
  const port = await freePort();
  const env = {
    ...baseEnv(),
    PORT: String(port),
    OPENAI_COMPATIBLE_BASE_URL: modelUrl,
    OPENAI_COMPATIBLE_MODEL: 'bench',
  };
  const log = path.join(tempDir, 'plain-floor.log');
  const spawnedAt = performance.now();
  const server = spawnServer([path.join(appDir, 'plain', 'plain-server.js')], env, log);
  const url = `http://127.0.0.1:${port}/`;
  await waitForServer(url, server, { log });
  return { name: 'plainFloor', url, headers: {}, server, spawnedAt, log };
}

/**
 * Signals the server to write a heap snapshot (`--heapsnapshot-signal=SIGUSR2`), waits until the
 * file is complete and names it after the target. The server is frozen while it writes: afterwards
 * the idle keep-alive connections it dropped meanwhile are let go before the bench goes on.
 */
async function heapSnapshot(t: Target, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  process.kill(t.server.pid!, 'SIGUSR2');
  const deadline = Date.now() + 120_000;
  let file: string | undefined;
  let size = -1;
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    file ??= readdirSync(dir).find((f) => f.endsWith('.heapsnapshot') && !before.has(f));
    if (!file) continue;
    const now = statSync(path.join(dir, file)).size;
    // Complete when it stopped growing and the server answers again.
    if (
      now === size &&
      now > 0 &&
      (await fetch(t.url, { method: 'GET' }).then(
        () => true,
        () => false,
      ))
    )
      break;
    size = now;
  }
  if (!file) throw new Error(`${t.name}: no heap snapshot was written`);
  const named = path.join(dir, `${t.name}.heapsnapshot`);
  renameSync(path.join(dir, file), named);
  await new Promise((r) => setTimeout(r, 6_000)); // past the server's keep-alive timeout (5 s)
  return named;
}

// ------------------------------------------------------------------------------------------------
// One answer over HTTP
// ------------------------------------------------------------------------------------------------

interface Answer {
  status: number;
  firstByte: number;
  firstText: number;
  total: number;
  deltas: number;
  /** Largest gap between two chunks received, ms. */
  longestGap: number;
  /** The same, once the answer's text has begun. */
  longestTextGap: number;
  /** From the chunk with the last text delta to the chunk with RUN_FINISHED, ms. */
  lastTextToFinish: number;
  finished: boolean;
}

async function ask(t: Target, prompt: string): Promise<Answer> {
  const t0 = performance.now();
  const res = await fetch(t.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...t.headers },
    body: JSON.stringify({ threadId: 'new', messages: [{ role: 'user', content: prompt }] }),
  });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let firstByte = -1;
  let firstText = -1;
  let last = -1;
  let longestGap = 0;
  let longestTextGap = 0;
  let lastTextAt = -1;
  let finishedAt = -1;
  let deltas = 0;
  let tail = '';
  let finished = false;
  /** Ids of the assistant's messages (the product also sends the user's message back). */
  const assistant = new Set<string>();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const at = performance.now();
    if (firstByte < 0) firstByte = at - t0;
    if (last >= 0) longestGap = Math.max(longestGap, at - last);
    if (last >= 0 && firstText >= 0) longestTextGap = Math.max(longestTextGap, at - last);
    last = at;
    // Count whole events only: keep the unfinished end of the text for the next chunk.
    const text = tail + decoder.decode(value, { stream: true });
    const cut = text.lastIndexOf('\n\n');
    const whole = cut < 0 ? '' : text.slice(0, cut);
    tail = cut < 0 ? text : text.slice(cut);
    let sawText = false;
    for (const event of whole.split('\n\n')) {
      const data = /^data: (.*)$/m.exec(event)?.[1];
      if (!data) continue;
      const e = JSON.parse(data) as { type: string; role?: string; messageId?: string };
      if (e.type === 'TEXT_MESSAGE_START' && e.role === 'assistant') assistant.add(e.messageId!);
      else if (e.type === 'TEXT_MESSAGE_CONTENT' && assistant.has(e.messageId!)) {
        deltas += 1;
        sawText = true;
      } else if (e.type === 'RUN_FINISHED') {
        finished = true;
        finishedAt = at;
      }
    }
    if (sawText && firstText < 0) firstText = at - t0;
    if (sawText) lastTextAt = at;
  }
  return {
    status: res.status,
    firstByte,
    firstText,
    total: performance.now() - t0,
    deltas,
    longestGap,
    longestTextGap,
    lastTextToFinish: finishedAt - lastTextAt,
    finished,
  };
}

function check(t: Target, a: Answer, deltas: number): void {
  if (a.status !== 200 || !a.finished || a.deltas !== deltas)
    throw new Error(
      `${t.name}: answer incomplete (HTTP ${a.status}, ${a.deltas} of ${deltas} deltas, finished ${a.finished}); ` +
        `the end of its log:\n${readFileSync(t.log, 'utf8').slice(-3000)}`,
    );
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

type PerTarget = Record<string, number>;
interface Figure {
  figure: string;
  unit: string;
  values: PerTarget;
  /** null where that floor has no value (the plain floor's heap is not sampled). */
  ratioToNextFloor: Record<string, number | null>;
  ratioToPlainFloor: Record<string, number | null>;
  budget?: string;
  met?: Record<string, boolean | null>;
  [extra: string]: unknown;
}

async function main(): Promise<Record<string, unknown>> {
  buildIfStale('the product', buildReason(root));
  const floorAppDir = floorApp();
  if (profileDir) mkdirSync(profileDir, { recursive: true });

  const model = await startFakeOpenAI((body) => scriptFor(body), { keepAliveMs: 10 * 60_000 });
  const tempDir = mkdtempSync(path.join(os.tmpdir(), 'bench-next-'));
  const adminUrl = process.env.BENCH_DATABASE_URL;
  const dbName = adminUrl ? `bench_next_${randomBytes(4).toString('hex')}` : undefined;
  const targets: Target[] = [];
  let admin: pg.Client | undefined;
  try {
    say('starting the servers…');
    const add = (t: Target) => targets.push(t);
    add(await startProduct('productPglite', tempDir, model.url, { PGLITE_DIR: path.join(tempDir, 'pglite') }));
    if (adminUrl && dbName) {
      admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      await admin.query(`CREATE DATABASE "${dbName}"`);
      const url = new URL(adminUrl);
      url.pathname = `/${dbName}`;
      add(await startProduct('productPostgres', tempDir, model.url, { DATABASE_URL: url.toString() }));
    }
    add(await startNextFloor(floorAppDir, tempDir, model.url));
    add(await startPlainFloor(floorAppDir, tempDir, model.url));
    const products = targets.filter((t) => t.name.startsWith('product'));
    const names = targets.map((t) => t.name);

    // Warm-up: module loading, JIT, first queries, the long path.
    say('warming up…');
    for (let i = 0; i < 20; i++) for (const t of targets) check(t, await ask(t, 'bench: short'), SHORT.length);
    for (const t of targets) check(t, await ask(t, 'bench: concurrent'), CONCURRENT_DELTAS);
    const rss: PerTarget = {};
    for (const t of targets) rss[t.name] = treeRssMB(t.server.pid!);
    const heapSnapshots: string[] = [];
    if (profileDir)
      for (const t of targets) if (t.name !== 'plainFloor') heapSnapshots.push(await heapSnapshot(t, profileDir));

    const figures: Figure[] = [];
    const figure = (
      figure: string,
      unit: string,
      values: PerTarget,
      /** `met` is null where the budget does not apply (RSS on PGlite). */
      budget?: { text: string; met: (product: string) => boolean | null },
      extra: Record<string, unknown> = {},
    ) => {
      const ratio = (floor: string) =>
        Object.fromEntries(
          products.map((p) => [p.name, values[floor] === undefined ? null : r2(values[p.name]! / values[floor])]),
        );
      figures.push({
        figure,
        unit,
        values,
        ratioToNextFloor: ratio('nextFloor'),
        ratioToPlainFloor: ratio('plainFloor'),
        ...(budget
          ? { budget: budget.text, met: Object.fromEntries(products.map((p) => [p.name, budget.met(p.name)])) }
          : {}),
        ...extra,
      });
    };

    /** Per Next.js server: when its measured short answers ran, ms after its process was spawned. */
    const profileWindowMs: Record<string, { from: number; to: number }> = {};
    if (want('firstByte')) {
      say(`short answers: ${SHORT_ROUNDS} rounds…`);
      const firstByte: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const firstText: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let i = 0; i < SHORT_ROUNDS; i++) {
        // Alternate the order each round, so no target always follows the same one.
        for (const t of i % 2 ? [...targets].reverse() : targets) {
          const a = await ask(t, 'bench: short');
          check(t, a, SHORT.length);
          firstByte[t.name]!.push(a.firstByte);
          firstText[t.name]!.push(a.firstText);
        }
      }
      const p50 = (m: Record<string, number[]>) => Object.fromEntries(names.map((n) => [n, r2(median(m[n]!))]));
      figure('POST to first SSE byte, p50', 'ms', p50(firstByte));
      const text = p50(firstText);
      figure('POST to first TEXT_MESSAGE_CONTENT, p50 (short answer)', 'ms', text, {
        text: '<= 1.3 x Next.js floor',
        met: (p) => text[p]! <= 1.3 * text.nextFloor!,
      });
    }

    if (want('cpu')) {
      say(`CPU: ${CPU_ROUNDS} rounds of ${CPU_ANSWERS_PER_ROUND} short answers per server…`);
      const perAnswer: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      // With the profiler: what each Next.js server allocates during its answers (every round's).
      const sampled: Record<string, HeapNode[]> = {};
      for (let round = 0; round < CPU_ROUNDS; round++) {
        for (const t of round % 2 ? [...targets].reverse() : targets) {
          const stopSampling = t.heapSamplingPort ? await heapSampling(t) : undefined;
          const c0 = treeCpuMs(t.server.pid!);
          const w0 = profileDir && t.name !== 'plainFloor' ? performance.now() : 0;
          for (let i = 0; i < CPU_ANSWERS_PER_ROUND; i++) await ask(t, 'bench: short');
          // The server's last writes of an answer may follow the stream's end: let them land.
          await new Promise((r) => setTimeout(r, 100));
          perAnswer[t.name]!.push((treeCpuMs(t.server.pid!) - c0) / CPU_ANSWERS_PER_ROUND);
          if (stopSampling) (sampled[t.name] ??= []).push(await stopSampling());
          if (w0) {
            const base = t.spawnedAt;
            profileWindowMs[t.name] ??= { from: w0 - base, to: 0 };
            profileWindowMs[t.name]!.to = performance.now() - base;
          }
        }
      }
      const cpu = Object.fromEntries(names.map((n) => [n, r2(median(perAnswer[n]!))]));
      figure(
        'server CPU per short answer (process tree, median of rounds)',
        'ms',
        cpu,
        { text: '<= 1.3 x Next.js floor', met: (p) => cpu[p]! <= 1.3 * cpu.nextFloor! },
        { clockTickMs: TICK_MS, answersPerRound: CPU_ANSWERS_PER_ROUND, rounds: CPU_ROUNDS },
      );
      if (profileDir) {
        // One profile per server, its rounds under one root, for scripts/cpu-profile-top.ts.
        const kb: Record<string, number> = {};
        for (const [name, heads] of Object.entries(sampled)) {
          const head: HeapNode = {
            callFrame: { functionName: '(rounds)', url: '', lineNumber: -1, columnNumber: -1 },
            selfSize: 0,
            children: heads,
          };
          writeFileSync(path.join(profileDir, `${name}.heapprofile`), JSON.stringify({ head, samples: [] }));
          kb[name] = Math.round(allocatedBytes(head) / 1024 / (CPU_ROUNDS * CPU_ANSWERS_PER_ROUND));
        }
        figure('allocated per short answer (sampled, with the profiler)', 'KB', kb);
      }
    }

    if (want('throughput')) {
      say(`one long answer of ${LONG_DELTAS} deltas, ${LONG_ROUNDS} rounds…`);
      const rates: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let i = 0; i < LONG_ROUNDS; i++) {
        for (const t of i % 2 ? [...targets].reverse() : targets) {
          const a = await ask(t, 'bench: long');
          check(t, a, LONG_DELTAS);
          rates[t.name]!.push(a.deltas / (a.total / 1000));
        }
      }
      const rate = Object.fromEntries(names.map((n) => [n, Math.round(median(rates[n]!))]));
      figure('text deltas/s, one long answer (instant model)', 'deltas/s', rate, {
        text: '>= 0.95 x plain floor',
        met: (p) => rate[p]! >= 0.95 * rate.plainFloor!,
      });
    }

    if (want('concurrent')) {
      say(`${CONCURRENT} long answers at once (${CONCURRENT_DELTAS} deltas each), ${CONCURRENT_ROUNDS} rounds…`);
      const walls: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const stalls: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const textStalls: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      const endGaps: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
      for (let i = 0; i < CONCURRENT_ROUNDS; i++) {
        for (const t of i % 2 ? [...targets].reverse() : targets) {
          const t0 = performance.now();
          const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => ask(t, 'bench: concurrent')));
          walls[t.name]!.push(performance.now() - t0);
          for (const a of answers) check(t, a, CONCURRENT_DELTAS);
          stalls[t.name]!.push(Math.max(...answers.map((a) => a.longestGap)));
          textStalls[t.name]!.push(Math.max(...answers.map((a) => a.longestTextGap)));
          endGaps[t.name]!.push(Math.max(...answers.map((a) => a.lastTextToFinish)));
          await new Promise((r) => setTimeout(r, 200));
        }
      }
      const wall = Object.fromEntries(names.map((n) => [n, Math.round(median(walls[n]!))]));
      const stall = Object.fromEntries(names.map((n) => [n, Math.round(Math.max(...stalls[n]!))]));
      figure(`${CONCURRENT} long answers at once: wall time (median of rounds)`, 'ms', wall, {
        text: '<= 1.15 x plain floor',
        met: (p) => wall[p]! <= 1.15 * wall.plainFloor!,
      });
      figure(
        `${CONCURRENT} long answers at once: longest stall (max over clients and rounds)`,
        'ms',
        stall,
        {
          text: '<= 300 ms',
          met: (p) => stall[p]! <= 300,
        },
        {
          onceTextBegan: Object.fromEntries(names.map((n) => [n, Math.round(Math.max(...textStalls[n]!))])),
          lastTextToRunFinished: Object.fromEntries(names.map((n) => [n, Math.round(Math.max(...endGaps[n]!))])),
        },
      );
    }

    figure(
      'RSS after warm-up (process tree)',
      'MB',
      rss,
      {
        text: 'on PostgreSQL <= 1.5 x Next.js floor',
        met: (p) => (p === 'productPostgres' ? rss[p]! <= 1.5 * rss.nextFloor! : null),
      },
      rss.productPostgres === undefined ? {} : { pgliteHoldsMB: rss.productPglite! - rss.productPostgres },
    );

    // Profiles and heap snapshots are written when the servers stop (below).
    return {
      node: process.version,
      cpus: os.cpus().length,
      date: new Date().toISOString(),
      quick,
      /** The machine's load average (1, 5, 15 minutes) at the end: the figures are only as quiet as it was. */
      loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
      figures,
      ...(profileDir
        ? {
            profileDir,
            cpuProfiles: targets
              .filter((t) => t.name !== 'plainFloor')
              .map((t) => path.join(profileDir, `${t.name}.cpuprofile`)),
            profileWindowMs,
            heapSnapshots,
          }
        : {}),
    };
  } finally {
    await Promise.all(spawned.map((server) => stop(server)));
    await model.close();
    if (admin && dbName) {
      await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    }
    rmSync(tempDir, { recursive: true, force: true });
  }
}

function table(result: { figures: Figure[] }): string {
  const cols = ['productPglite', 'productPostgres', 'nextFloor', 'plainFloor'].filter((c) =>
    result.figures.some((f) => f.values[c] !== undefined),
  );
  const products = cols.filter((c) => c.startsWith('product'));
  const lines = [
    `| figure | ${cols.join(' | ')} | ${products.map((p) => `${p} / next, / plain`).join(' | ')} | budget | met |`,
    `|${' --- |'.repeat(cols.length + products.length + 3)}`,
  ];
  for (const f of result.figures) {
    const cells = cols.map((c) => (f.values[c] === undefined ? '—' : `${f.values[c]} ${f.unit}`));
    const x = (r: number | null | undefined) => (r == null ? '—' : `${r} x`);
    const ratios = products.map((p) => `${x(f.ratioToNextFloor[p])}, ${x(f.ratioToPlainFloor[p])}`);
    const met = f.met
      ? Object.values(f.met)
          .map((m) => m ?? '—')
          .join(', ')
      : '—';
    lines.push(`| ${f.figure} | ${cells.join(' | ')} | ${ratios.join(' | ')} | ${f.budget ?? '—'} | ${met} |`);
  }
  return lines.join('\n');
}

const result = await main();
process.stderr.write(`${table(result as { figures: Figure[] })}\n`);
console.log(JSON.stringify(result));
