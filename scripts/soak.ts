/**
 * `npm run soak`: is the production server as fast after thousands of answers as after the first
 * few hundred? Starts the production build (`npm start`; run `npm run build` first) against a
 * scripted OpenAI-compatible model, on a fresh embedded database and, when SOAK_DATABASE_URL (or
 * BENCH_DATABASE_URL) names a PostgreSQL server whose user may create databases, on a fresh
 * PostgreSQL database too. It signs in three demo users and runs SOAK_ANSWERS answers (default
 * 5,000), SOAK_CONCURRENCY at a time (default 4), cycling through four kinds: a plain answer, a
 * read tool, an approval held and answered, and a batch of two approvals (one approved, one
 * rejected). Per block of 500 answers it prints the wall time, p50 and p99 latency of the plain
 * answers, the server's CPU per answer and RSS (read from /proc), and, through
 * `GET /api/diagnostics` (enabled with a random DIAGNOSTICS_TOKEN; memory after a forced garbage
 * collection, the server runs with --expose-gc), its signal listeners, active handles and
 * async-local storages, read after 5.5 s of quiet (idle keep-alive connections close). The budgets
 * are checked at the end. JSON on stdout.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { postAgent, userMessageBody } from '../tests/helpers/agent';
import { startFakeOpenAI, type ScriptedTurn } from '../tests/helpers/fake-models';
import { trpcClient } from '../tests/helpers/trpc';
import { freePort, signIn, waitForHttp, type Session } from './lib/session';
import { pct } from './lib/stats';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ANSWERS = Number(process.env.SOAK_ANSWERS ?? 5000);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 4);
const BLOCK = Number(process.env.SOAK_BLOCK ?? 500);
const KINDS = ['plain', 'read', 'approve', 'batch'] as const;
type Kind = (typeof KINDS)[number];

if (!existsSync(path.join(root, '.next', 'BUILD_ID'))) {
  process.stderr.write('No production build: run `npm run build` first.\n');
  process.exit(1);
}

/** The scripted model: the kind is in the user's message; after a tool result it answers. */
function turnFor(body: Record<string, unknown>): ScriptedTurn {
  const messages = (body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: ['Done ', 'with ', 'that.'] };
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  if (text.includes('read'))
    return { text: ['Reading. '], toolCalls: [{ name: 'list_issues', args: { status: 'OPEN' } }] };
  if (text.includes('approve')) return { toolCalls: [{ name: 'close_issue', args: { number: 1 } }] };
  if (text.includes('batch')) {
    return {
      toolCalls: [
        { name: 'close_issue', args: { number: 2 } },
        { name: 'assign_issue', args: { number: 3, assignee: 'member@example.com' } },
      ],
    };
  }
  return { text: ['A short ', 'plain ', 'answer.'] };
}

const round = (n: number, d = 2) => Math.round(n * 10 ** d) / 10 ** d;
const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** CPU seconds and RSS bytes of a process, from /proc. */
function procStats(pid: number): { cpuSeconds: number; rssBytes: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return { cpuSeconds, rssBytes: rss ? Number(rss[1]) * 1024 : NaN };
}

/** The Next.js server process: the `next start` child of `npm start`'s launcher. */
function serverPid(launcher: ChildProcess): number {
  const children = spawnSync('pgrep', ['-P', String(launcher.pid)], { encoding: 'utf8' })
    .stdout.trim()
    .split('\n')
    .filter(Boolean);
  return Number(children.at(-1) ?? launcher.pid);
}

interface Diag {
  memory: { rssBytes: number; heapUsedBytes: number };
  processListeners: Record<string, number>;
  activeResourcesTotal: number;
  activeResources: Record<string, number>;
  asyncLocalStorages: number | null;
  registries: Record<string, number>;
}

async function diagnostics(base: string, token: string): Promise<Diag | null> {
  const res = await fetch(`${base}/api/diagnostics?gc=1`, { headers: { authorization: `Bearer ${token}` } }).catch(
    () => null,
  );
  return res?.ok ? ((await res.json()) as Diag) : null;
}

async function oneAnswer(base: string, projectId: string, session: Session, kind: Kind): Promise<number> {
  const t0 = performance.now();
  const res = await postAgent(base, projectId, session.cookie, userMessageBody(`${kind} please`));
  if (res.status !== 200) throw new Error(`${kind}: HTTP ${res.status} ${JSON.stringify(res.error)}`);
  const end = res.events.at(-1) as { type: string; outcome?: { type: string; interrupts?: Array<{ id: string }> } };
  if (kind === 'approve' || kind === 'batch') {
    if (end.outcome?.type !== 'interrupt')
      throw new Error(`${kind}: expected an interrupt, got ${JSON.stringify(end)}`);
    const threadId = (res.events[0] as { threadId: string }).threadId;
    const resume = end.outcome.interrupts!.map((i, n) => ({
      interruptId: i.id,
      status: 'resolved',
      payload: { approved: n === 0 },
    }));
    const resumed = await postAgent(base, projectId, session.cookie, { threadId, messages: [], resume });
    const last = resumed.events.at(-1) as { type: string; outcome?: { type: string } };
    if (last?.outcome?.type !== 'success') throw new Error(`${kind}: resume ended ${JSON.stringify(last)}`);
  } else if (end.type !== 'RUN_FINISHED' || end.outcome?.type !== 'success') {
    throw new Error(`${kind}: ended ${JSON.stringify(end)}`);
  }
  return performance.now() - t0;
}

async function soak(label: string, dbEnv: Record<string, string>, modelUrl: string) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const token = randomBytes(24).toString('hex');
  const logs: string[] = [];
  const launcher = spawn(process.execPath, [path.join(root, 'scripts/start.mjs')], {
    cwd: root,
    env: {
      ...process.env,
      ...dbEnv,
      NODE_ENV: 'production',
      PORT: String(port),
      HOST: '127.0.0.1',
      NEXTAUTH_URL: base,
      NEXTAUTH_SECRET: randomBytes(32).toString('base64'),
      MCP_OVERRIDE_SECRET: randomBytes(32).toString('base64'),
      AUTO_SEED: '1',
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: modelUrl,
      OPENAI_COMPATIBLE_MODEL: 'scripted-model',
      AGENT_MODEL_MAX_RETRIES: '0',
      AGENT_RATE_LIMIT_PER_MINUTE: '10000',
      AGENT_MAX_CONCURRENT_RUNS_PER_USER: '50',
      MCP_CALLS_PER_KEY_PER_MINUTE: '100000',
      DIAGNOSTICS_TOKEN: token,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --expose-gc`.trim(),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  launcher.stdout!.on('data', (d: Buffer) => logs.push(d.toString()));
  launcher.stderr!.on('data', (d: Buffer) => logs.push(d.toString()));
  try {
    await waitForHttp(`${base}/login`);
    const pid = serverPid(launcher);
    const users = await Promise.all(
      ['owner', 'admin', 'member'].map((u) => signIn(base, `${u}@example.com`, 'demo-password')),
    );
    const projects = await trpcClient(base, users[0]!.cookie).tracker.projects.list.query();
    const projectId = (projects as Array<{ id: string }>)[0]!.id;

    const blocks: Array<Record<string, unknown>> = [];
    let next = 0;
    let errors = 0;
    const errorSamples: string[] = [];
    for (let start = 0; start < ANSWERS; start += BLOCK) {
      const end = Math.min(ANSWERS, start + BLOCK);
      const plain: number[] = [];
      const before = procStats(pid);
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async (_, worker) => {
          for (;;) {
            const i = next++;
            if (i >= end) {
              next = Math.min(next, end);
              return;
            }
            const kind = KINDS[i % KINDS.length]!;
            try {
              const ms = await oneAnswer(base, projectId, users[(i + worker) % users.length]!, kind);
              if (kind === 'plain') plain.push(ms);
            } catch (err) {
              errors += 1;
              if (errorSamples.length < 5) errorSamples.push((err as Error).message.slice(0, 300));
            }
          }
        }),
      );
      next = end;
      const wallMs = performance.now() - t0;
      const after = procStats(pid);
      // Idle keep-alive sockets close after 5 s: counts read after that compare like with like.
      await new Promise((r) => setTimeout(r, 5_500));
      const diag = await diagnostics(base, token);
      blocks.push({
        answers: `${start}-${end}`,
        wallSeconds: round(wallMs / 1000),
        plainLatencyMs: { p50: round(pct(plain, 50)), p99: round(pct(plain, 99)) },
        cpuMsPerAnswer: round(((after.cpuSeconds - before.cpuSeconds) * 1000) / (end - start)),
        rssMB: round((diag?.memory.rssBytes ?? after.rssBytes) / 1e6, 1),
        ...(diag
          ? {
              heapUsedMB: round(diag.memory.heapUsedBytes / 1e6, 1),
              signalListeners: diag.processListeners,
              activeHandles: diag.activeResourcesTotal,
              asyncLocalStorages: diag.asyncLocalStorages,
              registries: diag.registries,
            }
          : {}),
      });
      process.stderr.write(`[soak ${label}] ${JSON.stringify(blocks.at(-1))}\n`);
    }
    return { blocks, errors, errorSamples, budgets: budgets(blocks) };
  } catch (err) {
    process.stderr.write(`[soak ${label}] failed: ${(err as Error).message}\n${logs.join('').slice(-4000)}\n`);
    return { error: (err as Error).message };
  } finally {
    launcher.kill('SIGTERM');
    await new Promise((r) => launcher.once('exit', r));
  }
}

/** The budgets: last block within 10% of the second (CPU per answer, p50), RSS growth, flat counts. */
function budgets(blocks: Array<Record<string, unknown>>) {
  if (blocks.length < 3) return { note: 'at least three blocks are needed' };
  const second = blocks[1]! as { cpuMsPerAnswer: number; plainLatencyMs: { p50: number }; rssMB: number };
  const last = blocks.at(-1)! as typeof second & {
    signalListeners?: unknown;
    activeHandles?: number;
    asyncLocalStorages?: number | null;
  };
  const first = blocks[0]! as typeof last;
  const answersAfterFirst = (blocks.length - 1) * BLOCK;
  const rssGrowthPer1000 = ((last.rssMB - first.rssMB) / answersAfterFirst) * 1000;
  return {
    cpuPerAnswerLastVsSecond: {
      ratio: round(last.cpuMsPerAnswer / second.cpuMsPerAnswer),
      budget: 1.1,
      ok: last.cpuMsPerAnswer <= second.cpuMsPerAnswer * 1.1,
    },
    plainP50LastVsSecond: {
      ratio: round(last.plainLatencyMs.p50 / second.plainLatencyMs.p50),
      budget: 1.1,
      ok: last.plainLatencyMs.p50 <= second.plainLatencyMs.p50 * 1.1,
    },
    rssGrowthMBPer1000Answers: { value: round(rssGrowthPer1000), budget: 5, ok: rssGrowthPer1000 <= 5 },
    listenersFlat: { ok: JSON.stringify(first.signalListeners) === JSON.stringify(last.signalListeners) },
    activeHandlesFlat: {
      first: first.activeHandles,
      last: last.activeHandles,
      ok: first.activeHandles === last.activeHandles,
    },
    asyncLocalStoragesFlat: {
      first: first.asyncLocalStorages,
      last: last.asyncLocalStorages,
      ok: first.asyncLocalStorages === last.asyncLocalStorages,
    },
  };
}

const model = await startFakeOpenAI((body) => turnFor(body));
const results: Record<string, unknown> = {};
// SOAK_ONLY=pglite or SOAK_ONLY=postgres runs one database (each takes minutes).
const only = process.env.SOAK_ONLY;
if (only !== 'postgres') {
  const pgliteDir = mkdtempSync(path.join(os.tmpdir(), 'soak-pglite-'));
  try {
    results.pglite = await soak('pglite', { DATABASE_URL: '', PGLITE_DIR: pgliteDir }, model.url);
  } finally {
    rmSync(pgliteDir, { recursive: true, force: true });
  }
}
const pgUrl = process.env.SOAK_DATABASE_URL ?? process.env.BENCH_DATABASE_URL;
if (pgUrl && only !== 'pglite') {
  const name = `soak_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: pgUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  const url = new URL(pgUrl);
  url.pathname = `/${name}`;
  try {
    results.postgres = await soak('postgres', { DATABASE_URL: url.toString() }, model.url);
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await admin.end();
  }
}
await model.close();
console.log(
  JSON.stringify(
    {
      node: process.version,
      cpus: os.cpus().length,
      date: new Date().toISOString(),
      answers: ANSWERS,
      concurrency: CONCURRENCY,
      results,
    },
    null,
    2,
  ),
);
