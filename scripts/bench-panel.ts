/**
 * The panel's cost while an answer streams, measured in Chromium against the production build
 * (`next start`, embedded PGlite in a temp dir, the demo data) with a scripted OpenAI-compatible
 * model on 127.0.0.1 (tests/helpers/fake-models.ts). Each round starts a new conversation, asks a
 * few short questions (two of them call `list_issues`, so earlier answers carry tool cards), then
 * asks for a long Markdown answer with code blocks streamed as BENCH_PANEL_DELTAS text deltas
 * (default 1,000), BENCH_PANEL_DELAY_MS apart (default 8), and measures, from Enter to the Send
 * button coming back:
 *   - main-thread time (Chrome's `Performance.getMetrics`: TaskDuration, ScriptDuration), per
 *     1,000 deltas;
 *   - React commits, and renders of message rows (the `assistant-message` elements React mounted
 *     or gave new props), per delta and per commit (tests/e2e/react-renders.ts).
 * BENCH_PANEL_ROUNDS (default 3) rounds; the JSON line printed last gives the median round and
 * every round. BENCH_PANEL_CPU_PROFILE=<file> writes the page's CPU profile of the last round's
 * answer (open it in Chrome DevTools). Builds the app first when the build is missing or older than its sources
 * (BENCH_SKIP_BUILD=1 uses the existing build). Run alone: `tsx scripts/bench-panel.ts`; also a
 * part of `npm run bench` (`panel`).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { buildReason } from '../tests/e2e/global-setup';
import { RENDER_COUNTER_SCRIPT, startCountingRenders, stopCountingRenders } from '../tests/e2e/react-renders';
import { startFakeOpenAI, type ScriptedTurn } from '../tests/helpers/fake-models';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DELTAS = Number(process.env.BENCH_PANEL_DELTAS ?? 1000);
const DELAY_MS = Number(process.env.BENCH_PANEL_DELAY_MS ?? 8);
const ROUNDS = Number(process.env.BENCH_PANEL_ROUNDS ?? 3);
const LONG_PROMPT = 'bench: a long answer with code';
/** Asked before the measured answer in each round (the rows that should not render again). */
const EARLIER = [
  'bench: hello',
  'bench: list the issues',
  'bench: what is a good title',
  'bench: list the issues again',
  'bench: one more question',
  'bench: and a last one',
];

/** A long Markdown answer: sections of a paragraph, a list and a TypeScript block, cut into `n` word deltas. */
function longAnswer(n: number): string[] {
  const section = (i: number) =>
    `## Step ${i}\n\nThis step keeps the work visible, owned and small enough to finish; each issue states the ` +
    `problem, the expected outcome and how to check it.\n\n- read the issue\n- write the check first\n- make it pass\n\n` +
    '```ts\n' +
    `export function step${i}(issues: Array<{ id: number; open: boolean }>): number[] {\n` +
    '  const open = issues.filter((issue) => issue.open);\n' +
    '  return open.map((issue) => issue.id).sort((a, b) => a - b);\n' +
    '}\n```\n\n';
  const words: string[] = [];
  for (let i = 1; words.length < n; i++) words.push(...(section(i).match(/\S+\s*/g) ?? []));
  return words.slice(0, n);
}

function scriptFor(body: Record<string, unknown>): ScriptedTurn {
  const messages = (body.messages ?? []) as Array<{ role: string; content?: unknown }>;
  const last = messages.at(-1);
  if (last?.role === 'tool') return { text: ['Here are ', 'the issues ', 'I found: **three** open.'] };
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  if (text.includes(LONG_PROMPT)) return { text: longAnswer(DELTAS), delayMs: DELAY_MS };
  if (text.includes('list the issues')) return { toolCalls: [{ name: 'list_issues', args: { status: 'OPEN' } }] };
  return { text: ['A short ', 'answer with ', '`code` and a ', '[link](https://example.com).'] };
}

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

async function waitForServer(url: string, server: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`the app server exited (${server.exitCode})`);
    try {
      const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the app server did not answer ${url} within ${timeoutMs / 1000} s`);
}

const PANEL = '[data-testid="assistant-panel"]';

async function ask(page: Page, text: string): Promise<void> {
  const input = page.locator(`${PANEL} [data-testid="assistant-input"]`);
  await input.fill(text);
  await input.press('Enter');
  await page.locator(`${PANEL} [data-testid="assistant-stop"]`).waitFor({ state: 'visible', timeout: 15_000 });
  await page.waitForFunction(() => document.querySelector('[data-testid="assistant-send"]') !== null, undefined, {
    polling: 200,
    timeout: 120_000,
  });
}

interface Round {
  deltas: number;
  mainThreadMsPer1000Deltas: number;
  scriptMsPer1000Deltas: number;
  commits: number;
  rowRendersPerDelta: number;
  rowRendersPerCommit: number;
  rowsShown: number;
  streamSeconds: number;
}

async function main(): Promise<void> {
  const reason = buildReason(root);
  if (reason && process.env.BENCH_SKIP_BUILD !== '1') {
    process.stderr.write(`[bench-panel] ${reason}: running \`next build\`…\n`);
    const res = spawnSync(process.execPath, [require.resolve('next/dist/bin/next'), 'build'], {
      cwd: root,
      stdio: ['ignore', process.stderr, process.stderr],
      env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
    });
    if (res.status !== 0) throw new Error(`next build failed (exit ${res.status ?? res.signal})`);
  }

  const model = await startFakeOpenAI((body) => scriptFor(body));
  const tempDir = mkdtempSync(path.join(os.tmpdir(), 'bench-panel-'));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: NodeJS.ProcessEnv = { NODE_ENV: 'production' };
  for (const [k, v] of Object.entries(process.env))
    if (!/^(DATABASE_URL|AWS_.*|BEDROCK_.*|OPENAI_COMPATIBLE_.*|OTEL_.*|AGENT_MODEL_.*)$/.test(k)) env[k] = v;
  Object.assign(env, {
    NODE_ENV: 'production',
    NEXT_TELEMETRY_DISABLED: '1',
    NEXTAUTH_SECRET: 'bench-panel-nextauth-secret-0123456789abcdef',
    MCP_OVERRIDE_SECRET: 'bench-panel-mcp-override-secret-0123456789abcdef',
    NEXTAUTH_URL: baseUrl,
    AUTO_SEED: '1',
    PORT: String(port),
    PGLITE_DIR: path.join(tempDir, 'pglite'),
    AGENT_MODEL_PROVIDER: 'openai-compatible',
    OPENAI_COMPATIBLE_BASE_URL: model.url,
    OPENAI_COMPATIBLE_MODEL: 'bench',
    AGENT_RATE_LIMIT_PER_MINUTE: '1000',
  });
  let server: ChildProcess | null = null;
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const prep = spawnSync(process.execPath, [require.resolve('tsx/cli'), 'scripts/prepare-db.ts'], {
      cwd: root,
      env,
      encoding: 'utf8',
    });
    if (prep.status !== 0) throw new Error(`preparing the database failed:\n${prep.stdout}${prep.stderr}`);
    server = spawn(
      process.execPath,
      [require.resolve('next/dist/bin/next'), 'start', '--hostname', '127.0.0.1', '--port', String(port)],
      { cwd: root, env, stdio: 'ignore', detached: true },
    );
    await waitForServer(`${baseUrl}/login`, server, 120_000);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: baseUrl });
    await context.addInitScript(RENDER_COUNTER_SCRIPT);
    const page = await context.newPage();
    await page.goto(`${baseUrl}/login`);
    await page.getByLabel('Email').fill('owner@example.com');
    await page.getByLabel('Password').fill('demo-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((url) => url.pathname.startsWith('/projects'), { timeout: 30_000 });
    await page.goto(`${baseUrl}/projects`);
    const href = await page.$$eval('a[href^="/projects/"]', (as) =>
      as.map((a) => a.getAttribute('href') ?? '').find((h) => /^\/projects\/[^/?#]+/.test(h)),
    );
    if (!href) throw new Error('no project link on /projects');
    await page.goto(`${baseUrl}/projects/${href.split(/[/?#]/)[2]}/issues`);
    await page.getByTestId('assistant-toggle').click();
    await page.locator(PANEL).waitFor();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    const metrics = async () => {
      const { metrics: list } = await cdp.send('Performance.getMetrics');
      const get = (name: string) => list.find((m) => m.name === name)?.value ?? 0;
      return { task: get('TaskDuration'), script: get('ScriptDuration') };
    };

    const rounds: Round[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      if (r > 0) {
        await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
        await page.waitForFunction(() => document.querySelectorAll('[data-testid="assistant-message"]').length === 0);
      }
      for (const text of EARLIER) await ask(page, text);
      await startCountingRenders(page);
      const profile = process.env.BENCH_PANEL_CPU_PROFILE && r === ROUNDS - 1;
      if (profile) {
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.start');
      }
      const before = await metrics();
      const started = Date.now();
      await ask(page, LONG_PROMPT);
      const after = await metrics();
      if (profile) {
        const { profile: recorded } = await cdp.send('Profiler.stop');
        writeFileSync(process.env.BENCH_PANEL_CPU_PROFILE!, JSON.stringify(recorded));
      }
      const counts = await stopCountingRenders(page);
      const shown = await page.$$eval(`${PANEL} [data-testid="assistant-message"]`, (els) => ({
        rows: els.length,
        lastLength: (els.at(-1)?.textContent ?? '').length,
      }));
      if (shown.lastLength < DELTAS)
        throw new Error(`the long answer did not arrive whole (${shown.lastLength} chars)`);
      const renders = Object.values(counts.rows).reduce((sum, n) => sum + n, 0);
      rounds.push({
        deltas: DELTAS,
        mainThreadMsPer1000Deltas: Math.round(((after.task - before.task) * 1e6) / DELTAS),
        scriptMsPer1000Deltas: Math.round(((after.script - before.script) * 1e6) / DELTAS),
        commits: counts.commits,
        rowRendersPerDelta: Math.round((renders / DELTAS) * 1000) / 1000,
        rowRendersPerCommit: Math.round((renders / Math.max(1, counts.commits)) * 100) / 100,
        rowsShown: shown.rows,
        streamSeconds: Math.round((Date.now() - started) / 100) / 10,
      });
    }
    const median = [...rounds].sort((a, b) => a.mainThreadMsPer1000Deltas - b.mainThreadMsPer1000Deltas)[
      Math.floor(rounds.length / 2)
    ]!;
    console.log(JSON.stringify({ deltas: DELTAS, delayMs: DELAY_MS, median, rounds }));
  } finally {
    await browser.close().catch(() => undefined);
    if (server?.pid) {
      const pid = server.pid;
      const exited = new Promise((r) => server!.once('exit', r));
      try {
        process.kill(-pid, 'SIGTERM');
      } catch {
        // gone already
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await model.close();
    rmSync(tempDir, { recursive: true, force: true });
  }
}

await main();
