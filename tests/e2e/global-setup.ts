/**
 * Browser tests run against the real production server (`next start`) with the seeded demo data
 * and the offline demo model. This global setup builds the app when there is no build yet or when
 * a source file is newer than the build (it says which), then starts the app servers of
 * tests/e2e/servers.ts (two on a machine with two cores or more), each on a free port of 127.0.0.1
 * with a fresh database of its own, and stops them afterwards. Test files run side by side, one
 * per server: a server sees one file at a time. E2E_SKIP_BUILD=1 uses the existing build as it is.
 *
 * Each database gets the demo data and the fixtures of tests/e2e/fixtures.ts (long conversations,
 * the budget lab project); the model is priced (AGENT_MODEL_PRICE_*) so answers show their cost.
 *
 * Database: a fresh embedded PGlite in a temp dir; with E2E_DATABASE_URL (a PostgreSQL server URL
 * whose user may create databases) a fresh database on that server, dropped afterwards.
 * E2E_BASE_URL points the tests at an app that is already running instead (nothing is started, the
 * files run one after another). The servers' output goes to test-artifacts/e2e-server.log (with two
 * servers or more, e2e-server-1.log, e2e-server-2.log, …).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  rmSync,
  type Stats,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { nextBuildArgs, runNextBuild } from '../../scripts/lib/next-build';
import { waitForServer } from '../../scripts/lib/wait-for-server';
import { e2eServerCount } from './servers';

declare module 'vitest' {
  export interface ProvidedContext {
    /** One app per worker (tests/e2e/servers.ts). */
    e2eBaseUrls: string[];
  }
}

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const artifacts = path.join(root, 'test-artifacts');
const logFile = path.join(artifacts, 'e2e-server.log');

/** Fixed secrets for the test server only (production mode requires them). */
const TEST_NEXTAUTH_SECRET = 'e2e-test-nextauth-secret-0123456789abcdef';
const TEST_MCP_OVERRIDE_SECRET = 'e2e-test-mcp-override-secret-0123456789abcdef';

/** Model configuration is dropped so the server uses the offline demo model. */
const MODEL_ENV = /^(AGENT_MODEL_PROVIDER|AWS_.*|BEDROCK_.*|OPENAI_COMPATIBLE_.*|OTEL_.*)$/;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function log(msg: string): void {
  process.stdout.write(`[e2e] ${msg}\n`);
}

function stopServer(server: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null || !server.pid) return resolve();
    const pid = server.pid;
    const kill = (sig: NodeJS.Signals) => {
      try {
        process.kill(-pid, sig); // the whole process group: next start and anything it spawned
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => kill('SIGKILL'), 10_000);
    server.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    kill('SIGTERM');
  });
}

/** What the production build is made from (relative to the root): folders walked, and single files. */
const BUILD_INPUTS = [
  'src',
  'public',
  'next.config.mjs',
  'package.json',
  'package-lock.json',
  'postcss.config.mjs',
  'tsconfig.json',
  'prisma/schema.prisma',
];

/** The most recently modified build input, or null when none exists. */
export function newestSource(dir: string, inputs = BUILD_INPUTS): { file: string; mtimeMs: number } | null {
  let best: { file: string; mtimeMs: number } | null = null;
  const visit = (p: string) => {
    let st: Stats;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(p))
        if (!name.startsWith('.') && name !== 'node_modules') visit(path.join(p, name));
    } else if (st.isFile() && (!best || st.mtimeMs > best.mtimeMs)) {
      best = { file: path.relative(dir, p), mtimeMs: st.mtimeMs };
    }
  };
  for (const input of inputs) visit(path.join(dir, input));
  return best;
}

/** Why the build must be (re)made, or null when the existing build is current. */
export function buildReason(dir: string): string | null {
  const id = path.join(dir, '.next', 'BUILD_ID');
  if (!existsSync(id)) return 'no production build found';
  const built = statSync(id).mtimeMs;
  const newest = newestSource(dir);
  if (newest && newest.mtimeMs > built) {
    const ahead = Math.round((newest.mtimeMs - built) / 1000);
    return `the build is older than its sources (${newest.file} changed ${ahead} s after .next/BUILD_ID was written)`;
  }
  return null;
}

async function withAdmin<T>(adminUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: adminUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

interface App {
  baseUrl: string;
  stop: () => Promise<void>;
}

/** Runs a script of the repository with tsx and resolves with its output, or rejects with it. */
function runScript(script: string, env: NodeJS.ProcessEnv, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [require.resolve('tsx/cli'), script], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.once('error', reject);
    child.once('close', (code, signal) =>
      code === 0 ? resolve(output.trim()) : reject(new Error(`${what} failed (${signal ?? code}):\n${output}`)),
    );
  });
}

/**
 * Starts app server `index` of `count`: a fresh database (embedded, or on E2E_DATABASE_URL's
 * server), migrated, seeded and given the fixtures, then `next start` on a free port.
 */
async function startApp(index: number, count: number): Promise<App> {
  const name = count > 1 ? `server ${index + 1}: ` : '';
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const tempDir = mkdtempSync(path.join(os.tmpdir(), 'e2e-app-'));
  const logPath = count > 1 ? path.join(artifacts, `e2e-server-${index + 1}.log`) : logFile;

  const env: NodeJS.ProcessEnv = { NODE_ENV: 'production' };
  for (const [k, v] of Object.entries(process.env)) if (!MODEL_ENV.test(k)) env[k] = v;
  Object.assign(env, {
    NODE_ENV: 'production',
    NEXT_TELEMETRY_DISABLED: '1',
    NEXTAUTH_SECRET: TEST_NEXTAUTH_SECRET,
    MCP_OVERRIDE_SECRET: TEST_MCP_OVERRIDE_SECRET,
    NEXTAUTH_URL: baseUrl,
    AUTO_SEED: '1',
    PORT: String(port),
    // Prices ($ per million tokens, like a typical hosted model), so every answer records its cost
    // and the panel and the review show it; a price set in the environment wins.
    AGENT_MODEL_PRICE_INPUT: process.env.AGENT_MODEL_PRICE_INPUT || '3',
    AGENT_MODEL_PRICE_OUTPUT: process.env.AGENT_MODEL_PRICE_OUTPUT || '15',
    // Uploads above 10 MB (tests/e2e/attachments.test.ts: a file larger than what Next.js copies
    // for a proxy arrives whole).
    AGENT_ATTACHMENT_MAX_BYTES: String(16 * 1024 * 1024),
    // Tests ask many questions in a minute as one user; the default of 20 answers a minute per
    // user would make them wait.
    AGENT_RATE_LIMIT_PER_MINUTE: '120',
  });
  delete env.DATABASE_URL;
  delete env.TEST_DATABASE_URL;

  const adminUrl = process.env.E2E_DATABASE_URL;
  let dbName: string | undefined;
  if (adminUrl) {
    dbName = `e2e_${randomBytes(6).toString('hex')}`;
    await withAdmin(adminUrl, (c) => c.query(`CREATE DATABASE "${dbName}"`));
    const u = new URL(adminUrl);
    u.pathname = `/${dbName}`;
    env.DATABASE_URL = u.toString();
  } else {
    env.PGLITE_DIR = path.join(tempDir, 'pglite');
  }

  const cleanupStorage = async () => {
    rmSync(tempDir, { recursive: true, force: true });
    if (adminUrl && dbName) {
      const db = dbName;
      await withAdmin(adminUrl, (c) => c.query(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`)).catch((err) =>
        log(`could not drop database ${db}: ${(err as Error).message}`),
      );
    }
  };

  try {
    // Migrate and seed in a process of its own, which closes the database before the server opens it.
    log(name + (await runScript('scripts/prepare-db.ts', env, 'Preparing the e2e database')));
    // Conversations too long to create through the panel in a test (tests/e2e/fixtures.ts).
    log(name + (await runScript('tests/e2e/fixtures.ts', env, 'Writing the e2e fixtures')));
  } catch (err) {
    await cleanupStorage();
    throw err;
  }

  const out = openSync(logPath, 'w');
  const server = spawn(
    process.execPath,
    [require.resolve('next/dist/bin/next'), 'start', '--hostname', '127.0.0.1', '--port', String(port)],
    { cwd: root, env, stdio: ['ignore', out, out], detached: true },
  );
  const started = Date.now();
  const stop = async () => {
    await stopServer(server);
    closeSync(out);
    await cleanupStorage();
  };
  try {
    await waitForServer(`${baseUrl}/login`, server, { log: logPath, timeoutMs: 120_000 });
  } catch (err) {
    await stop();
    throw err;
  }
  log(
    `${name}app ready at ${baseUrl} in ${((Date.now() - started) / 1000).toFixed(1)} s (log: ${path.relative(root, logPath)})`,
  );
  return { baseUrl, stop };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (process.env.E2E_BASE_URL) {
    const url = process.env.E2E_BASE_URL.replace(/\/+$/, '');
    log(`using the running app at ${url}`);
    project.provide('e2eBaseUrls', [url]);
    return async () => undefined;
  }

  mkdirSync(artifacts, { recursive: true });
  const reason = buildReason(root);
  if (reason && process.env.E2E_SKIP_BUILD === '1') {
    log(`${reason}; E2E_SKIP_BUILD=1, so testing the existing build anyway`);
  } else if (reason) {
    log(`${reason}: running \`next ${nextBuildArgs(root).join(' ')}\` (one to two minutes)…`);
    const started = Date.now();
    runNextBuild(root, { stdio: 'inherit' });
    log(`built in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  } else {
    const newest = newestSource(root);
    log(`using the existing build (newer than every source${newest ? `; newest: ${newest.file}` : ''})`);
  }

  const count = e2eServerCount();
  const results = await Promise.allSettled(Array.from({ length: count }, (_, i) => startApp(i, count)));
  const apps = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async () => {
    await Promise.all(apps.map((app) => app.stop()));
  };
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  project.provide(
    'e2eBaseUrls',
    apps.map((app) => app.baseUrl),
  );
  return stopAll;
}
