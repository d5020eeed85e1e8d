/**
 * The panel's cost while an answer streams, measured in Chromium against the production build
 * (`next start`, embedded PGlite in a temp dir, the demo data) with a scripted OpenAI-compatible
 * model on 127.0.0.1 (tests/helpers/fake-models.ts). After one answer that is not measured (the
 * server's first run loads the agent's code), each round starts a new conversation, asks a few short
 * questions (two of them call `list_issues`, so earlier answers carry tool cards), then asks for a
 * long Markdown answer with code blocks streamed as BENCH_PANEL_DELTAS text deltas (default 1,000),
 * BENCH_PANEL_DELAY_MS apart (default 8), and measures:
 *   - Enter to the first painted token, for each plain answer (the four short ones without a tool
 *     call and the long one): from the Enter keydown in the composer (the event's time stamp) to the
 *     end of the first frame rendered after the answer's first text reached the DOM. A
 *     MutationObserver on the panel sees the text arrive in a new answer's Markdown; the page's
 *     `requestAnimationFrame` is wrapped (an init script) so a frame's callbacks know they run in
 *     it, and a message posted from that frame runs after its rendering task (style, layout,
 *     paint): the frame running when the text came (React commits the store's snapshot inside a
 *     frame), else the next one. Median and p95 over every round's plain answers;
 *   - from Enter to the Send button coming back after the long answer, main-thread time (Chrome's
 *     `Performance.getMetrics`: TaskDuration, and of it ScriptDuration, LayoutDuration and
 *     RecalcStyleDuration), per 1,000 deltas;
 *   - React commits, and renders of message rows (the `assistant-message` elements React mounted
 *     or gave new props), per delta and per commit (tests/e2e/react-renders.ts).
 * BENCH_PANEL_ROUNDS (default 3) rounds; the JSON line printed last gives each figure with its
 * budget (`BUDGETS`) and whether it was met (the bench reports, it does not fail), the median round
 * (by main-thread time) and every round. BENCH_PANEL_CPU_PROFILE=<file> writes the page's CPU
 * profile of the last round's long answer, BENCH_PANEL_TRACE=<file> its trace (style, layout, paint
 * and the rest of each frame; both open in Chrome DevTools' Performance panel). Builds the app first when
 * the build is missing or older than its sources (BENCH_SKIP_BUILD=1 uses the existing build). Run
 * alone: `tsx scripts/bench-panel.ts`; also a part of `npm run bench` (`panel`).
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
import { nextBuildArgs, runNextBuild } from './lib/next-build';
import { waitForServer } from './lib/wait-for-server';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DELTAS = Number(process.env.BENCH_PANEL_DELTAS ?? 1000);
const DELAY_MS = Number(process.env.BENCH_PANEL_DELAY_MS ?? 8);
const ROUNDS = Number(process.env.BENCH_PANEL_ROUNDS ?? 3);
const LONG_PROMPT = 'bench: a long answer with code';
/** The short questions whose answer calls a tool (`list_issues`) first. */
const TOOL_PROMPT = /list the issues/;
/**
 * Budgets of the figures, from the measurement on a shared 2-core machine (docs/performance.md,
 * "The panel while an answer streams"): the bench reports each figure with its budget and whether
 * it was met; it does not fail.
 */
const BUDGETS = {
  enterToFirstPaintMsP50: 150,
  enterToFirstPaintMsP95: 300,
  mainThreadMsPer1000Deltas: 4500,
  scriptMsPer1000Deltas: 1600,
};

/** The value at quantile `q` of sorted values (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  if (!sorted.length) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

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
  if (TOOL_PROMPT.test(text)) return { toolCalls: [{ name: 'list_issues', args: { status: 'OPEN' } }] };
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

const PANEL = '[data-testid="assistant-panel"]';

/**
 * Installed before the page's own scripts: marks each frame the page renders (the rAF callbacks of a
 * frame all see its timestamp) and, after that frame's rendering task (style, layout, paint), calls
 * whoever waits for it. `__benchFirstPaint.arm()` then measures one answer: the keydown of Enter in
 * the composer (its event time), the first DOM change that puts text into a new answer's Markdown
 * (a MutationObserver on the panel), and the end of the first frame rendered with that change: the
 * frame running when the change came (React commits the store's snapshot inside a frame), else the
 * next one. Frames are marked only while a measurement waits, so the streaming itself pays nothing.
 */
const FIRST_PAINT_SCRIPT = `(() => {
  const raf = window.requestAnimationFrame.bind(window);
  let frame = null;
  let armed = false;
  const waiters = [];
  const mark = (t) => {
    if (!armed || frame === t) return;
    frame = t;
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      frame = null;
      const at = performance.now();
      for (const fn of waiters.splice(0)) fn(at);
    };
    channel.port2.postMessage(0);
  };
  window.requestAnimationFrame = (cb) => raf((t) => { mark(t); cb(t); });
  const afterPaint = (fn) => {
    waiters.push(fn);
    if (frame === null) raf(mark);
  };
  const disarm = () => { armed = false; };
  window.__benchFirstPaint = {
    arm(panelSelector) {
      armed = true;
      const probe = { enter: null, text: null, painted: null };
      const panel = document.querySelector(panelSelector);
      const answers = () => panel.querySelectorAll('[data-testid="assistant-message"][data-role="assistant"]');
      const before = answers().length;
      const onKey = (e) => {
        if (probe.enter === null && e.key === 'Enter' && e.target && e.target.dataset.testid === 'assistant-input')
          probe.enter = e.timeStamp;
      };
      document.addEventListener('keydown', onKey, true);
      const observer = new MutationObserver(() => {
        const rows = answers();
        for (let i = before; i < rows.length; i++) {
          const md = rows[i].querySelector('.assistant-markdown');
          if (md && md.textContent.length > 0) {
            observer.disconnect();
            document.removeEventListener('keydown', onKey, true);
            probe.text = performance.now();
            afterPaint((at) => { probe.painted = at; disarm(); });
            return;
          }
        }
      });
      observer.observe(panel, { childList: true, subtree: true, characterData: true });
      window.__benchProbe = probe;
    },
  };
})();`;

/**
 * Asks a question and waits until its answer ended (the Send button back, no row streaming);
 * returns the time from Enter to the first frame painted with the answer's first text (ms).
 */
async function ask(page: Page, text: string): Promise<number> {
  const input = page.locator(`${PANEL} [data-testid="assistant-input"]`);
  await input.fill(text);
  await page.evaluate((panel) => (window as unknown as BenchWindow).__benchFirstPaint.arm(panel), PANEL);
  await input.press('Enter');
  await page.waitForFunction(
    () => {
      const probe = (window as unknown as BenchWindow).__benchProbe;
      return (
        probe.painted !== null &&
        document.querySelector('[data-testid="assistant-send"]') !== null &&
        document.querySelector('[data-testid="assistant-message"][data-streaming="true"]') === null
      );
    },
    undefined,
    { polling: 200, timeout: 120_000 },
  );
  const probe = await page.evaluate(() => (window as unknown as BenchWindow).__benchProbe);
  if (probe.enter === null) throw new Error('the Enter keydown was not seen in the composer');
  return probe.painted! - probe.enter;
}

interface BenchWindow {
  __benchFirstPaint: { arm(panel: string): void };
  __benchProbe: { enter: number | null; text: number | null; painted: number | null };
}

interface Round {
  deltas: number;
  mainThreadMsPer1000Deltas: number;
  scriptMsPer1000Deltas: number;
  /** Of the main-thread time: layout (`LayoutDuration`) and style recalculation (`RecalcStyleDuration`). */
  layoutMsPer1000Deltas: number;
  styleMsPer1000Deltas: number;
  commits: number;
  rowRendersPerDelta: number;
  rowRendersPerCommit: number;
  rowsShown: number;
  streamSeconds: number;
  /** Enter to the first painted token, per plain answer of the round (the short ones, then the long one). */
  enterToFirstPaintMs: number[];
}

async function main(): Promise<void> {
  const reason = buildReason(root);
  if (reason && process.env.BENCH_SKIP_BUILD !== '1') {
    process.stderr.write(`[bench-panel] ${reason}: running \`next ${nextBuildArgs(root).join(' ')}\`…\n`);
    runNextBuild(root, { stdio: ['ignore', process.stderr, process.stderr] });
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
    await waitForServer(`${baseUrl}/login`, server);

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: baseUrl });
    await context.addInitScript(RENDER_COUNTER_SCRIPT);
    await context.addInitScript(FIRST_PAINT_SCRIPT);
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
      return {
        task: get('TaskDuration'),
        script: get('ScriptDuration'),
        layout: get('LayoutDuration'),
        style: get('RecalcStyleDuration'),
      };
    };

    const rounds: Round[] = [];
    // A first answer, not measured: the server's first run loads the agent's code.
    await ask(page, 'bench: warm up');
    for (let r = 0; r < ROUNDS; r++) {
      await page.locator(`${PANEL} [data-testid="assistant-new"]`).click();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="assistant-message"]').length === 0);
      const firstPaintMs: number[] = [];
      for (const text of EARLIER) {
        const ms = await ask(page, text);
        // Answers after a tool call wait for the tool: only the plain answers count here.
        if (!TOOL_PROMPT.test(text)) firstPaintMs.push(ms);
      }
      await startCountingRenders(page);
      const profile = process.env.BENCH_PANEL_CPU_PROFILE && r === ROUNDS - 1;
      if (profile) {
        await cdp.send('Profiler.enable');
        await cdp.send('Profiler.start');
      }
      const trace = process.env.BENCH_PANEL_TRACE && r === ROUNDS - 1;
      if (trace)
        await browser.startTracing(page, {
          path: process.env.BENCH_PANEL_TRACE,
          categories: ['devtools.timeline', 'disabled-by-default-devtools.timeline', 'blink', 'cc', 'gpu'],
        });
      const before = await metrics();
      const started = Date.now();
      firstPaintMs.push(await ask(page, LONG_PROMPT));
      const after = await metrics();
      if (profile) {
        const { profile: recorded } = await cdp.send('Profiler.stop');
        writeFileSync(process.env.BENCH_PANEL_CPU_PROFILE!, JSON.stringify(recorded));
      }
      if (trace) await browser.stopTracing();
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
        layoutMsPer1000Deltas: Math.round(((after.layout - before.layout) * 1e6) / DELTAS),
        styleMsPer1000Deltas: Math.round(((after.style - before.style) * 1e6) / DELTAS),
        commits: counts.commits,
        rowRendersPerDelta: Math.round((renders / DELTAS) * 1000) / 1000,
        rowRendersPerCommit: Math.round((renders / Math.max(1, counts.commits)) * 100) / 100,
        rowsShown: shown.rows,
        streamSeconds: Math.round((Date.now() - started) / 100) / 10,
        enterToFirstPaintMs: firstPaintMs.map((ms) => Math.round(ms * 10) / 10),
      });
    }
    const median = [...rounds].sort((a, b) => a.mainThreadMsPer1000Deltas - b.mainThreadMsPer1000Deltas)[
      Math.floor(rounds.length / 2)
    ]!;
    const paints = rounds.flatMap((r) => r.enterToFirstPaintMs).sort((a, b) => a - b);
    const p50 = quantile(paints, 0.5);
    const p95 = quantile(paints, 0.95);
    const within = (value: number, budget: number) => ({ value, budget, met: value <= budget });
    const figures = {
      enterToFirstPaintMsP50: within(p50, BUDGETS.enterToFirstPaintMsP50),
      enterToFirstPaintMsP95: within(p95, BUDGETS.enterToFirstPaintMsP95),
      mainThreadMsPer1000Deltas: within(median.mainThreadMsPer1000Deltas, BUDGETS.mainThreadMsPer1000Deltas),
      scriptMsPer1000Deltas: within(median.scriptMsPer1000Deltas, BUDGETS.scriptMsPer1000Deltas),
    };
    console.log(
      JSON.stringify({
        deltas: DELTAS,
        delayMs: DELAY_MS,
        figures,
        met: Object.values(figures).every((f) => f.met),
        firstPaintSamples: paints.length,
        median,
        rounds,
      }),
    );
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
