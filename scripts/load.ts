/**
 * `npm run load`: how many users do two production instances carry? Drives LOAD_USERS simulated
 * users (default 200) through the real HTTP routes: next-auth sign-in, the assistant's three routes
 * (start, follow, cancel), tRPC and the MCP endpoint with a project key. Each user runs the script
 * in `userScript` (plain chat, a read tool, an approval approved, a batch rejected, a Stop
 * mid-answer, a reconnect mid-answer with Last-Event-ID, MCP reads), thinking between turns, until
 * LOAD_DURATION_SECONDS (default 90) have passed or LOAD_TURNS_PER_USER turns are done, pausing
 * LOAD_THINK_MS on average between turns (default 10 s: reading the answer, typing the next
 * message). Users start over LOAD_RAMP_SECONDS (default 10), so once the ramp is over all of them
 * are active at once. Before the measured load one user per instance goes once through the mix,
 * unmeasured (a fresh process loads its route modules on first use).
 *
 * Targets: LOAD_BASE_URLS (comma-separated) names running instances, for example nginx with
 * deploy/nginx.conf in front of two; they must run the demo model and hold the demo data
 * (AUTO_SEED=1). Without it the script starts two production instances itself (`npm start`; run
 * `npm run build` first) on the PostgreSQL database LOAD_DATABASE_URL, with the demo model and
 * limits high enough for the mix (INSTANCE_LIMITS), and stops them at the end.
 *
 * Users: with LOAD_DATABASE_URL the script creates LOAD_USERS accounts (load-user-N@example.com,
 * the demo password; kept for the next run), adds them to the demo project as members through
 * tRPC as the demo owner, and signs each in through next-auth. Without it the simulated users
 * share the demo owner, admin and member accounts.
 *
 * Prints one JSON object (see docs/operations.md, "Load"). Exits non-zero when the script fails, or when
 * LOAD_ENFORCE=1 and a budget is exceeded.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { TRPCClientError } from '@trpc/client';
import pg from 'pg';
import { z } from 'zod';
import { READ_ONLY_KEY_SCOPES } from '@/features/mcp/key-scopes';
import { DEMO_PASSWORD, DEMO_PROJECT_SLUG } from '@/server/seed';
import { trpcClient } from '../tests/helpers/trpc';
import { freePort, signIn, type Session } from './lib/session';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ------------------------------------------------------------------------------------------------
// Configuration
// ------------------------------------------------------------------------------------------------

const unsetIfBlank = (v: unknown) => (typeof v === 'string' && v.trim() === '' ? undefined : v);
const ConfigSchema = z.object({
  LOAD_USERS: z.preprocess(unsetIfBlank, z.coerce.number().int().min(1).max(5000).default(200)),
  LOAD_DURATION_SECONDS: z.preprocess(unsetIfBlank, z.coerce.number().int().min(5).max(3600).default(90)),
  LOAD_TURNS_PER_USER: z.preprocess(unsetIfBlank, z.coerce.number().int().min(1).max(100_000).optional()),
  LOAD_RAMP_SECONDS: z.preprocess(unsetIfBlank, z.coerce.number().min(0).max(600).default(10)),
  // A user pauses between turns (reads the answer, types): uniformly 0.5x to 1.5x this long.
  LOAD_THINK_MS: z.preprocess(unsetIfBlank, z.coerce.number().int().min(0).max(600_000).default(10_000)),
  LOAD_BASE_URLS: z.preprocess(
    unsetIfBlank,
    z
      .string()
      .transform((s) =>
        s
          .split(',')
          .map((u) => u.trim().replace(/\/+$/, ''))
          .filter(Boolean),
      )
      .pipe(z.array(z.url({ protocol: /^https?$/ })).min(1))
      .optional(),
  ),
  LOAD_DATABASE_URL: z.preprocess(unsetIfBlank, z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  LOAD_ENFORCE: z.preprocess(unsetIfBlank, z.enum(['0', '1']).default('0')),
});
type Config = z.infer<typeof ConfigSchema>;

function readConfig(): Config {
  const parsed = ConfigSchema.safeParse(process.env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    fail(`Invalid load settings:\n${lines.join('\n')}`);
  }
  if (!parsed.data.LOAD_BASE_URLS && !parsed.data.LOAD_DATABASE_URL) {
    fail(
      'Set LOAD_DATABASE_URL (a PostgreSQL database: two instances are started on it) ' +
        'or LOAD_BASE_URLS (running instances).',
    );
  }
  return parsed.data;
}

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

/**
 * Settings of self-started instances, beyond the defaults (an operator's environment wins). A user
 * of the mix starts about 34 runs a minute at LOAD_THINK_MS=1000 (an approval is two runs), all on
 * one instance, and more without pauses: the default of 20 runs per user and minute would refuse
 * most of them.
 */
const INSTANCE_LIMITS = {
  AGENT_RATE_LIMIT_PER_MINUTE: process.env.AGENT_RATE_LIMIT_PER_MINUTE ?? '600',
  // The demo owner adds every load account to the project (one mutation each) before the load.
  TRPC_MUTATIONS_PER_MINUTE: process.env.TRPC_MUTATIONS_PER_MINUTE ?? '10000',
  DATABASE_POOL_MAX: process.env.DATABASE_POOL_MAX ?? '10',
};

/** A new conversation every this many turns, as a user pressing New (replay reads 40 runs a page). */
const TURNS_PER_CONVERSATION = 8;
/** The order of a user's turns; user n starts at position n, so every kind runs at every moment. */
const MIX = ['chat', 'read', 'mcp', 'approve', 'reconnect', 'chat', 'read', 'stop', 'mcp', 'reject'] as const;
type Kind = (typeof MIX)[number];

// ------------------------------------------------------------------------------------------------
// What is measured
// ------------------------------------------------------------------------------------------------

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : null;
};
const round = (n: number | null, d = 1) =>
  n === null || !Number.isFinite(n) ? null : Math.round(n * 10 ** d) / 10 ** d;
const summary = (xs: number[]) => ({
  count: xs.length,
  p50: round(pct(xs, 50)),
  p99: round(pct(xs, 99)),
  max: round(pct(xs, 100)),
});
const bump = (m: Map<string, number>, key: string) => m.set(key, (m.get(key) ?? 0) + 1);

class Metrics {
  /** Failures by "<HTTP status> <code>" (or "stream <code>", "network <code>", "client <what>"). */
  readonly errors = new Map<string, number>();
  /** 429 answers: the product's limits refusing, expected under load. */
  readonly refusals = new Map<string, number>();
  readonly errorSamples: string[] = [];
  readonly turns = new Map<string, number>();
  readonly ttfbMs: number[] = [];
  readonly reconnectFirstByteMs: number[] = [];
  readonly mcpMs: number[] = [];
  runsStarted = 0;
  deltaEvents = 0;
  deltaChars = 0;

  error(key: string, detail?: string): void {
    bump(this.errors, key);
    if (this.errorSamples.length < 10) this.errorSamples.push(detail ? `${key}: ${detail.slice(0, 300)}` : key);
  }
}

// ------------------------------------------------------------------------------------------------
// The client side of the routes
// ------------------------------------------------------------------------------------------------

interface LoadUser {
  index: number;
  session: Session;
  /** The instance the user's browser talks to, and the one a reconnect or a Stop lands on. */
  home: string;
  other: string;
}

/** One conversation of one user, and the text its user saw live, per assistant message. */
interface Conversation {
  id: string;
  user: LoadUser;
  assistantIds: Set<string>;
  live: Map<string, string>;
  /** Why its live text cannot be compared with replay (a stream the network broke), or null. */
  tainted: string | null;
}

interface Shared {
  projectId: string;
  mcpKey: string;
  metrics: Metrics;
  conversations: Conversation[];
}

interface SseEvent {
  id: number | null;
  type: string;
  data: Record<string, unknown>;
}

/** What a client saw of a run on one connection. */
interface Watched {
  runId: string | null;
  lastId: number | null;
  deltas: number;
  terminal: SseEvent | null;
}

const agentUrl = (base: string, projectId: string) => `${base}/api/projects/${projectId}/in-app-agent`;
const runUrl = (base: string, projectId: string, runId: string, action: 'events' | 'cancel') =>
  `${agentUrl(base, projectId)}/runs/${encodeURIComponent(runId)}/${action}`;
const networkCode = (err: unknown) => {
  const e = err as { cause?: { code?: string }; code?: string; name?: string };
  return e.cause?.code ?? e.code ?? e.name ?? 'ERROR';
};

/** "<HTTP status> <code>" of a failed tRPC call (the product's appCode when it sent one). */
function trpcRefusal(err: unknown): string {
  if (!(err instanceof TRPCClientError)) return `network ${networkCode(err)}`;
  const data = err.data as { httpStatus?: number; appCode?: string | null; code?: string } | undefined;
  return `${data?.httpStatus ?? '?'} ${data?.appCode ?? data?.code ?? '?'}`;
}

/** The `{error: {code}}` of a refused request (status and code, "?" when the body is not ours). */
async function refusalOf(res: Response): Promise<string> {
  const body = (await res.json().catch(() => null)) as { error?: { code?: unknown } } | null;
  return `${res.status} ${typeof body?.error?.code === 'string' ? body.error.code : '?'}`;
}

/**
 * Reads an SSE answer event by event into the conversation (assistant text per message id) and
 * the counters. `onEvent` may return 'drop' to close the connection (a reconnect). The events are
 * JSON-parsed only: validating each with the product's zod schema would spend the client's CPU,
 * which shares the machine with the instances and would show up in the figures.
 */
async function watch(
  conv: Conversation,
  res: Response,
  shared: Shared,
  controller: AbortController,
  onEvent?: (w: Watched) => 'drop' | undefined,
  onFirstByte?: () => void,
): Promise<Watched & { dropped: boolean }> {
  const w: Watched = { runId: res.headers.get('x-in-app-agent-run-id'), lastId: null, deltas: 0, terminal: null };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { ...w, dropped: false };
      if (onFirstByte) {
        onFirstByte();
        onFirstByte = undefined;
      }
      buf += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buf.indexOf('\n\n')) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const event = parseBlock(block);
        if (!event) continue;
        record(conv, event, w, shared.metrics);
        if (onEvent?.(w) === 'drop') {
          controller.abort();
          await reader.cancel().catch(() => undefined);
          return { ...w, dropped: true };
        }
      }
    }
  } catch (err) {
    if (controller.signal.aborted) return { ...w, dropped: true };
    conv.tainted ??= `stream broke: ${networkCode(err)}`;
    shared.metrics.error(`network ${networkCode(err)}`, `stream of run ${w.runId}`);
    return { ...w, dropped: true };
  }
}

function parseBlock(block: string): SseEvent | null {
  let id: number | null = null;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('id:')) id = Number(line.slice(3).trim());
    else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
  }
  if (!data.length) return null;
  const parsed = JSON.parse(data.join('\n')) as Record<string, unknown>;
  return { id, type: String(parsed.type), data: parsed };
}

function record(conv: Conversation, e: SseEvent, w: Watched, metrics: Metrics): void {
  if (e.id !== null) w.lastId = e.id;
  const messageId = String(e.data.messageId ?? '');
  if (e.type === 'TEXT_MESSAGE_START' && e.data.role === 'assistant') conv.assistantIds.add(messageId);
  else if (e.type === 'TEXT_MESSAGE_CONTENT' && conv.assistantIds.has(messageId)) {
    const delta = String(e.data.delta ?? '');
    conv.live.set(messageId, (conv.live.get(messageId) ?? '') + delta);
    metrics.deltaEvents += 1;
    metrics.deltaChars += delta.length;
    w.deltas += 1;
  } else if (e.type === 'TOOL_CALL_START') {
    // A tool call belongs to an assistant message (the panel shows it there, with text or not).
    conv.assistantIds.add(String(e.data.parentMessageId ?? `msg_${String(e.data.toolCallId)}`));
  } else if (e.type === 'RUN_STARTED') w.runId = String(e.data.runId);
  else if (e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR') w.terminal = e;
}

/**
 * Starts a run (`POST …/in-app-agent`) and watches it. A 429 is counted as a refusal and retried
 * after its Retry-After (at most three tries); any other refusal is an error. Null when no run
 * started.
 */
async function startRun(
  conv: Conversation,
  body: Record<string, unknown>,
  shared: Shared,
  onEvent?: (w: Watched) => 'drop' | undefined,
): Promise<(Watched & { dropped: boolean }) | null> {
  const { home, session } = conv.user;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const controller = new AbortController();
    const t0 = performance.now();
    let res: Response;
    try {
      res = await fetch(agentUrl(home, shared.projectId), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: home, cookie: session.cookie },
        body: JSON.stringify({ threadId: conv.id, runId: 'load', messages: [], tools: [], context: [], ...body }),
        signal: controller.signal,
      });
    } catch (err) {
      // The run may have started without the client seeing it: its text cannot be compared.
      conv.tainted ??= `start failed: ${networkCode(err)}`;
      shared.metrics.error(`network ${networkCode(err)}`, 'POST in-app-agent');
      return null;
    }
    if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
      const key = await refusalOf(res);
      if (res.status !== 429) {
        shared.metrics.error(key, `POST in-app-agent (${conv.id})`);
        return null;
      }
      bump(shared.metrics.refusals, key);
      await sleep(Math.min(10, Number(res.headers.get('retry-after')) || 1) * 1000);
      continue;
    }
    shared.metrics.runsStarted += 1;
    const firstByte = () => shared.metrics.ttfbMs.push(performance.now() - t0);
    const watched = await watch(conv, res, shared, controller, onEvent, firstByte);
    if (!watched.dropped && !watched.terminal) {
      conv.tainted ??= 'stream ended without a terminal event';
      shared.metrics.error('client STREAM_ENDED_EARLY', `run ${watched.runId}`);
    }
    if (watched.terminal?.type === 'RUN_ERROR') {
      shared.metrics.error(`stream ${String(watched.terminal.data.code)}`, `run ${watched.runId}`);
    }
    return watched;
  }
  return null;
}

/** Reconnects to a run (`GET …/runs/:runId/events` with Last-Event-ID) and watches it to its end. */
async function followRun(conv: Conversation, runId: string, lastId: number, shared: Shared): Promise<Watched | null> {
  const { other, session } = conv.user;
  const controller = new AbortController();
  const t0 = performance.now();
  let res: Response;
  try {
    res = await fetch(runUrl(other, shared.projectId, runId, 'events'), {
      headers: { cookie: session.cookie, 'last-event-id': String(lastId) },
      signal: controller.signal,
    });
  } catch (err) {
    conv.tainted ??= `reconnect failed: ${networkCode(err)}`;
    shared.metrics.error(`network ${networkCode(err)}`, 'GET runs/:runId/events');
    return null;
  }
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    conv.tainted ??= 'reconnect refused';
    shared.metrics.error(await refusalOf(res), `GET runs/${runId}/events`);
    return null;
  }
  const firstByte = () => shared.metrics.reconnectFirstByteMs.push(performance.now() - t0);
  const watched = await watch(conv, res, shared, controller, undefined, firstByte);
  if (!watched.terminal) {
    conv.tainted ??= 'reconnected stream ended without a terminal event';
    shared.metrics.error('client STREAM_ENDED_EARLY', `follow of run ${runId}`);
  }
  return watched;
}

/** Stop: `POST …/runs/:runId/cancel` (202 stopping, or 200 when the run had already ended). */
async function cancelRun(conv: Conversation, runId: string, shared: Shared): Promise<void> {
  const { other, session } = conv.user;
  try {
    const res = await fetch(runUrl(other, shared.projectId, runId, 'cancel'), {
      method: 'POST',
      headers: { origin: other, cookie: session.cookie },
    });
    if (res.status === 202 || res.status === 200) await res.body?.cancel();
    else shared.metrics.error(await refusalOf(res), `cancel of run ${runId}`);
  } catch (err) {
    shared.metrics.error(`network ${networkCode(err)}`, 'POST runs/:runId/cancel');
  }
}

/** One read tool through the product's MCP endpoint (JSON-RPC over HTTP) with the project key. */
async function mcpRead(user: LoadUser, call: number, shared: Shared): Promise<void> {
  const tools = [
    { name: 'list_issues', arguments: { status: 'OPEN' } },
    { name: 'get_issue', arguments: { number: 1 + (call % 5) } },
    { name: 'get_project_summary', arguments: {} },
    { name: 'list_members', arguments: { pageSize: 20 } },
  ];
  const t0 = performance.now();
  try {
    const res = await fetch(`${user.home}/api/public/mcp`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${shared.mcpKey}`,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: call, method: 'tools/call', params: tools[call % tools.length] }),
    });
    const body = (await res.json().catch(() => null)) as {
      result?: { isError?: boolean; structuredContent?: { error?: { code?: string } } };
      error?: { data?: { code?: string } };
    } | null;
    if (res.status === 429) bump(shared.metrics.refusals, `429 ${body?.error?.data?.code ?? '?'} (mcp)`);
    else if (res.status !== 200 || body?.error) {
      shared.metrics.error(`${res.status} ${body?.error?.data?.code ?? '?'} (mcp)`);
    } else if (body?.result?.isError) {
      shared.metrics.error(`mcp tool ${body.result.structuredContent?.error?.code ?? '?'}`);
    } else shared.metrics.mcpMs.push(performance.now() - t0);
  } catch (err) {
    shared.metrics.error(`network ${networkCode(err)}`, 'POST /api/public/mcp');
  }
}

// ------------------------------------------------------------------------------------------------
// A user
// ------------------------------------------------------------------------------------------------

interface Schedule {
  /** Whether the user starts another turn (the duration has not passed, or turns are left). */
  more(turn: number): boolean;
  thinkMs(): number;
}

/**
 * One simulated user, from its start in the ramp to its last turn: every turn is one thing a person
 * does in the assistant panel (or an MCP client of the project does), then a pause to think.
 */
async function userScript(user: LoadUser, schedule: Schedule, shared: Shared): Promise<void> {
  const { metrics } = shared;
  let conv = newConversation(user, shared);
  // Issue numbers of the demo project (it has 13): approvals close 1-8, rejections name 9-13.
  const issue = (from: number, count: number) => from + Math.floor(Math.random() * count);
  const expect = (w: Watched | null, outcome: string) => {
    const finished = w?.terminal?.type === 'RUN_FINISHED' ? w.terminal : null;
    const got = finished ? String((finished.data.outcome as { type?: string } | undefined)?.type) : null;
    // A RUN_ERROR is already counted by its code.
    if (w?.terminal && got !== outcome && w.terminal.type !== 'RUN_ERROR') {
      metrics.error(`client UNEXPECTED_OUTCOME ${got}`, `wanted ${outcome}`);
    }
    return got === outcome;
  };
  const say = (text: string) => ({ messages: [{ id: 'm', role: 'user', content: text }] });
  /** A message, the held calls it asks for, and the answer to each (one resume request). */
  const approvals = async (text: string, payload: { approved: boolean; feedback?: string }) => {
    const asked = await startRun(conv, say(text), shared);
    if (!asked || !expect(asked, 'interrupt')) return;
    const interrupts = (asked.terminal!.data.outcome as { interrupts: Array<{ id: string }> }).interrupts;
    const resume = interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload }));
    expect(await startRun(conv, { resume }, shared), 'success');
  };

  for (let turn = 0; schedule.more(turn); turn++) {
    if (turn > 0 && turn % TURNS_PER_CONVERSATION === 0) conv = newConversation(user, shared);
    const kind: Kind = MIX[(user.index + turn) % MIX.length]!;
    bump(metrics.turns, kind);
    switch (kind) {
      case 'chat': // the demo model's help text, ~110 words streamed
        expect(await startRun(conv, say('hello'), shared), 'success');
        break;
      case 'read': // list_issues runs on its own, then the answer
        expect(await startRun(conv, say('list open issues'), shared), 'success');
        break;
      case 'approve':
        await approvals(`close issue ${issue(1, 8)}`, { approved: true });
        break;
      case 'reject': // a batch of two held calls, both rejected with a note
        await approvals(`close issues ${issue(1, 4)} and ${issue(9, 5)}`, { approved: false, feedback: 'Not now.' });
        break;
      case 'stop': {
        // The slow long answer; Stop (on the other instance) after a few words; read to the end.
        let stopping: Promise<void> | null = null;
        const run = await startRun(conv, say('write a long answer'), shared, (w) => {
          if (w.deltas >= 3 && w.runId && !stopping) stopping = cancelRun(conv, w.runId, shared);
          return undefined;
        });
        await stopping;
        if (run?.terminal) expect(run, 'cancelled');
        break;
      }
      case 'reconnect': {
        // Drop the connection after a few words, reconnect (to the other instance) from the last
        // position seen, and read the answer to its end.
        const run = await startRun(conv, say('hello'), shared, (w) => (w.deltas >= 5 ? 'drop' : undefined));
        if (run?.dropped && run.runId && run.lastId !== null && !run.terminal) {
          expect(await followRun(conv, run.runId, run.lastId, shared), 'success');
        } else if (run) expect(run, 'success');
        break;
      }
      case 'mcp':
        await mcpRead(user, user.index + turn, shared);
        break;
    }
    if (schedule.more(turn + 1)) await sleep(schedule.thinkMs());
  }
}

function newConversation(user: LoadUser, shared: Shared): Conversation {
  // A client-chosen conversation id (the product accepts 8-100 letters, digits, - and _).
  const id = `load_${randomBytes(10).toString('hex')}`;
  const conv: Conversation = { id, user, assistantIds: new Set(), live: new Map(), tainted: null };
  shared.conversations.push(conv);
  return conv;
}

// ------------------------------------------------------------------------------------------------
// Replay: what the client saw live against what `conversations.get` returns afterwards
// ------------------------------------------------------------------------------------------------

interface ReplayMessage {
  id: string;
  role: string;
  content?: string;
}

async function checkReplay(shared: Shared) {
  type Mismatch = { conversationId: string; messageId: string; liveChars: number | null; replayedChars: number | null };
  const mismatches: Mismatch[] = [];
  let checked = 0;
  let skipped = 0;
  const queue = shared.conversations.filter((c) => c.live.size > 0 || c.assistantIds.size > 0);
  const worker = async () => {
    for (let conv = queue.shift(); conv; conv = queue.shift()) {
      if (conv.tainted) {
        skipped += 1;
        continue;
      }
      const client = trpcClient(conv.user.home, conv.user.session.cookie);
      const replayed = new Map<string, string>();
      try {
        const which = { projectId: shared.projectId, conversationId: conv.id };
        const page = await client.agent.conversations.get.query(which);
        let older = page.olderBefore;
        const collect = (messages: ReplayMessage[]) => {
          for (const m of messages) if (m.role === 'assistant') replayed.set(m.id, m.content ?? '');
        };
        collect(page.view.messages);
        while (older) {
          const more = await client.agent.conversations.older.query({ ...which, before: older });
          collect(more.view.messages);
          older = more.olderBefore;
        }
      } catch (err) {
        shared.metrics.error(`${trpcRefusal(err)} (conversations.get)`, conv.id);
        skipped += 1;
        continue;
      }
      checked += 1;
      // Messages the client saw start but never got text for are empty on both sides.
      const ids = new Set([...replayed.keys(), ...conv.assistantIds]);
      for (const id of ids) {
        const live = conv.live.get(id) ?? (conv.assistantIds.has(id) ? '' : undefined);
        const again = replayed.get(id);
        if (live !== again) {
          const lengths = { liveChars: live?.length ?? null, replayedChars: again?.length ?? null };
          mismatches.push({ conversationId: conv.id, messageId: id, ...lengths });
        }
      }
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  const mismatchedConversations = new Set(mismatches.map((m) => m.conversationId));
  return { checked, skipped, mismatches: mismatchedConversations.size, samples: mismatches.slice(0, 5) };
}

// ------------------------------------------------------------------------------------------------
// Instances and accounts
// ------------------------------------------------------------------------------------------------

interface Instances {
  urls: string[];
  selfStarted: boolean;
  /** The Next.js server processes (self-started only), for their CPU time. */
  pids: number[];
  /** Stops self-started instances; their logs are kept (and named) when `keepLogs`. */
  stop(keepLogs: boolean): Promise<void>;
}

/** Two production instances (`npm start`) on `databaseUrl`, sharing their secrets, logs to files. */
async function startInstances(databaseUrl: string, count: number): Promise<Instances> {
  if (!existsSync(path.join(root, '.next', 'BUILD_ID'))) fail('No production build: run `npm run build` first.');
  const logDir = mkdtempSync(path.join(os.tmpdir(), 'load-instances-'));
  const shared = {
    NEXTAUTH_SECRET: randomBytes(32).toString('base64'),
    MCP_OVERRIDE_SECRET: randomBytes(32).toString('base64'),
  };
  const started: Array<{ url: string; launcher: ChildProcess; log: string }> = [];
  const stop = async (keepLogs: boolean) => {
    await Promise.all(
      started.map(({ launcher }) =>
        launcher.exitCode !== null || launcher.signalCode !== null
          ? undefined
          : new Promise((r) => {
              launcher.once('exit', r);
              launcher.kill('SIGTERM');
            }),
      ),
    );
    if (keepLogs) process.stderr.write(`[load] the instances' logs: ${started.map((s) => s.log).join(', ')}\n`);
    else rmSync(logDir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < count; i++) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const log = path.join(logDir, `instance-${i + 1}.log`);
      const fd = openSync(log, 'a');
      const launcher = spawn(process.execPath, [path.join(root, 'scripts/start.mjs')], {
        cwd: root,
        env: {
          ...process.env,
          ...shared,
          ...INSTANCE_LIMITS,
          DATABASE_URL: databaseUrl,
          PORT: String(port),
          HOST: '127.0.0.1',
          NEXTAUTH_URL: url,
          AUTO_SEED: '1',
          AGENT_MODEL_PROVIDER: 'demo',
          NEXT_TELEMETRY_DISABLED: '1',
        },
        stdio: ['ignore', fd, fd],
      });
      closeSync(fd);
      started.push({ url, launcher, log });
    }
    await Promise.all(started.map(({ url, launcher, log }) => waitForReady(url, launcher, log)));
  } catch (err) {
    await stop(true);
    throw err;
  }
  return { urls: started.map((s) => s.url), selfStarted: true, pids: started.map((s) => serverPid(s.launcher)), stop };
}

async function waitForReady(url: string, launcher: ChildProcess, log: string): Promise<void> {
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (launcher.exitCode !== null) {
      throw new Error(`the instance at ${url} exited:\n${readFileSync(log, 'utf8').slice(-3000)}`);
    }
    const res = await fetch(`${url}/api/ready`).catch(() => null);
    if (res?.status === 200) return;
    await sleep(500);
  }
  throw new Error(`the instance at ${url} was not ready within 180 s:\n${readFileSync(log, 'utf8').slice(-3000)}`);
}

/** The Next.js server process: the `next start` child of `npm start`'s launcher. */
function serverPid(launcher: ChildProcess): number {
  const pgrep = spawnSync('pgrep', ['-P', String(launcher.pid)], { encoding: 'utf8' });
  const out = pgrep.stdout.trim().split('\n').filter(Boolean);
  return Number(out.at(-1) ?? launcher.pid);
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;
function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** Runs `fn` over `items`, `concurrency` at a time. */
async function pool<T, R>(items: T[], concurrency: number, fn: (item: T, i: number) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      for (let i = next++; i < items.length; i = next++) out[i] = await fn(items[i]!, i);
    }),
  );
  return out;
}

/** Signs in through next-auth, retrying while the password-hash gate says busy (503). */
async function signInRetrying(base: string, email: string): Promise<Session> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await signIn(base, email, DEMO_PASSWORD);
    } catch (err) {
      if (attempt >= 8) throw err;
      await sleep(500 * attempt);
    }
  }
}

interface Prepared {
  projectId: string;
  owner: Session;
  mcpKey: { id: string; secret: string };
  users: LoadUser[];
  accounts: 'created' | 'demo';
}

/**
 * The demo owner's session, the demo project, a read-only project key for the MCP calls, and the
 * users: LOAD_USERS accounts created in the database and added as members through tRPC, or the
 * demo accounts shared, each signed in on the instance it will talk to.
 */
async function prepare(cfg: Config, urls: string[], db: pg.Client | null): Promise<Prepared> {
  const home = (i: number) => urls[i % urls.length]!;
  const other = (i: number) => urls[(i + 1) % urls.length]!;
  const owner = await signInRetrying(urls[0]!, 'owner@example.com');
  const owners = trpcClient(urls[0]!, owner.cookie);
  const projects = (await owners.tracker.projects.list.query()) as Array<{ id: string; slug: string }>;
  const project = projects.find((p) => p.slug === DEMO_PROJECT_SLUG);
  if (!project) {
    const hint = 'start the instances with AUTO_SEED=1 on an empty database';
    throw new Error(`The demo project (${DEMO_PROJECT_SLUG}) is missing: ${hint}.`);
  }
  const keyInput = { projectId: project.id, name: 'load test', scopes: [...READ_ONLY_KEY_SCOPES] };
  const created = await owners.tracker.apiKeys.create.mutate(keyInput);

  let emails: string[];
  let accounts: Prepared['accounts'];
  if (db) {
    // The product has no sign-up: accounts come from the seed or an identity provider. These are
    // made like the seed makes them (the demo password's hash, copied from the demo owner), then
    // joined to the project through the product's own members.add.
    emails = Array.from({ length: cfg.LOAD_USERS }, (_, i) => `load-user-${i + 1}@example.com`);
    await db.query(
      `INSERT INTO "User" (id, email, name, "passwordHash", "updatedAt")
       SELECT 'u_load_' || md5(u.email), u.email, 'Load User ' || u.n, o."passwordHash", now()
       FROM unnest($1::text[]) WITH ORDINALITY AS u(email, n)
       CROSS JOIN (SELECT "passwordHash" FROM "User" WHERE email = 'owner@example.com') o
       ON CONFLICT (email) DO NOTHING`,
      [emails],
    );
    await pool(emails, 8, async (email) => {
      try {
        await owners.tracker.members.add.mutate({ projectId: project.id, email, role: 'MEMBER' });
      } catch (err) {
        if (trpcRefusal(err) !== '409 ALREADY_MEMBER') throw err;
      }
    });
    accounts = 'created';
  } else {
    emails = ['owner@example.com', 'admin@example.com', 'member@example.com'];
    accounts = 'demo';
  }
  // Password checks are scrypt at 128 MiB: two at a time per instance, as the product's gate allows.
  const sessions = new Map<string, Session>();
  const distinct = Array.from({ length: Math.min(cfg.LOAD_USERS, emails.length * urls.length) }, (_, i) => i);
  await pool(distinct, 2 * urls.length, async (i) => {
    const email = emails[i % emails.length]!;
    sessions.set(`${email} ${home(i)}`, await signInRetrying(home(i), email));
  });
  const users = Array.from({ length: cfg.LOAD_USERS }, (_, i) => ({
    index: i,
    session: sessions.get(`${emails[i % emails.length]!} ${home(i)}`)!,
    home: home(i),
    other: other(i),
  }));
  return { projectId: project.id, owner, mcpKey: { id: created.key.id, secret: created.secret }, users, accounts };
}

// ------------------------------------------------------------------------------------------------
// The run
// ------------------------------------------------------------------------------------------------

function redact(url: string): string {
  const u = new URL(url);
  if (u.password) u.password = '***';
  return u.toString();
}

async function main(): Promise<number> {
  const cfg = readConfig();
  // The instances' logs are worth keeping when something failed.
  let keepLogs = true;
  const db = cfg.LOAD_DATABASE_URL ? new pg.Client({ connectionString: cfg.LOAD_DATABASE_URL }) : null;
  await db?.connect();
  const instances: Instances = cfg.LOAD_BASE_URLS
    ? { urls: cfg.LOAD_BASE_URLS, selfStarted: false, pids: [], stop: async () => undefined }
    : await startInstances(cfg.LOAD_DATABASE_URL!, 2);
  try {
    process.stderr.write(`[load] instances ready: ${instances.urls.join(', ')}; signing in ${cfg.LOAD_USERS} users\n`);
    const prepared = await prepare(cfg, instances.urls, db);
    const shared: Shared = {
      projectId: prepared.projectId,
      mcpKey: prepared.mcpKey.secret,
      metrics: new Metrics(),
      conversations: [],
    };

    // Warm-up, not measured: one user per instance goes once through the mix (the first requests
    // of a fresh process load its route modules and compile its hot paths).
    const warmUp: Shared = { ...shared, metrics: new Metrics(), conversations: [] };
    const once: Schedule = { more: (turn) => turn < MIX.length, thinkMs: () => 0 };
    const warmUsers = instances.urls.map((_, i) => prepared.users[i % prepared.users.length]!);
    await Promise.all(warmUsers.map((user) => userScript(user, once, warmUp)));
    if (warmUp.metrics.errors.size) {
      process.stderr.write(`[load] warm-up errors: ${JSON.stringify(warmUp.metrics.errorSamples)}\n`);
    }

    // Database connections in use, sampled while the users run (the sampler's own excluded).
    const peak = { connections: null as number | null, active: null as number | null };
    let sampling = true;
    const sampler = (async () => {
      while (db && sampling) {
        const r = await db.query<{ n: string; active: string }>(
          `SELECT count(*) AS n, count(*) FILTER (WHERE state = 'active') AS active
           FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`,
        );
        peak.connections = Math.max(peak.connections ?? 0, Number(r.rows[0]!.n));
        peak.active = Math.max(peak.active ?? 0, Number(r.rows[0]!.active));
        await sleep(250);
      }
    })();

    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const cpuBefore = { client: process.cpuUsage(), instances: instances.pids.map(cpuSeconds) };
    const t0 = performance.now();
    const deadline = t0 + cfg.LOAD_DURATION_SECONDS * 1000;
    const schedule: Schedule = {
      more: (turn) =>
        cfg.LOAD_TURNS_PER_USER !== undefined ? turn < cfg.LOAD_TURNS_PER_USER : performance.now() < deadline,
      thinkMs: () => cfg.LOAD_THINK_MS * (0.5 + Math.random()),
    };
    process.stderr.write(`[load] ${cfg.LOAD_USERS} users ramping over ${cfg.LOAD_RAMP_SECONDS} s\n`);
    await Promise.all(
      prepared.users.map(async (user) => {
        await sleep((user.index / prepared.users.length) * cfg.LOAD_RAMP_SECONDS * 1000);
        await userScript(user, schedule, shared);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    loopDelay.disable();
    sampling = false;
    await sampler;
    const clientCpu = process.cpuUsage(cpuBefore.client);
    const instanceCpu = instances.pids.map((pid, i) => {
      const after = cpuSeconds(pid);
      const before = cpuBefore.instances[i];
      return after !== null && before !== null && before !== undefined ? round(after - before) : null;
    });

    const conversations = shared.conversations.length;
    process.stderr.write(`[load] done in ${seconds.toFixed(1)} s; checking replay of ${conversations} conversations\n`);
    const replay = await checkReplay(shared);
    await trpcClient(instances.urls[0]!, prepared.owner.cookie)
      .tracker.apiKeys.revoke.mutate({ projectId: prepared.projectId, keyId: prepared.mcpKey.id })
      .catch((err: unknown) => {
        process.stderr.write(`[load] could not revoke the load key: ${(err as Error).message}\n`);
      });

    const m = shared.metrics;
    const errorsTotal = [...m.errors.values()].reduce((a, b) => a + b, 0);
    const ttfbP99 = round(pct(m.ttfbMs, 99));
    const budget = {
      errors: { value: errorsTotal, budget: 0, ok: errorsTotal === 0 },
      replayMismatches: { value: replay.mismatches, budget: 0, ok: replay.mismatches === 0 },
      ttfbP99Ms: { value: ttfbP99, budget: 250, ok: ttfbP99 !== null && ttfbP99 <= 250 },
    };
    const ok = Object.values(budget).every((b) => b.ok);
    const out = {
      config: {
        users: cfg.LOAD_USERS,
        accounts: prepared.accounts,
        instances: instances.urls,
        selfStarted: instances.selfStarted,
        ...(cfg.LOAD_TURNS_PER_USER !== undefined
          ? { turnsPerUser: cfg.LOAD_TURNS_PER_USER }
          : { durationSeconds: cfg.LOAD_DURATION_SECONDS }),
        rampSeconds: cfg.LOAD_RAMP_SECONDS,
        thinkMs: cfg.LOAD_THINK_MS,
        database: cfg.LOAD_DATABASE_URL ? redact(cfg.LOAD_DATABASE_URL) : null,
        instanceSettings: instances.selfStarted ? { ...INSTANCE_LIMITS, AGENT_MODEL_PROVIDER: 'demo' } : null,
        machine: { cpus: os.cpus().length, node: process.version, loadAverage: os.loadavg().map((l) => round(l, 2)) },
        date: new Date().toISOString(),
      },
      wallSeconds: round(seconds),
      turns: Object.fromEntries(m.turns),
      runs: m.runsStarted,
      runsPerSecond: round(m.runsStarted / seconds, 2),
      errors: Object.fromEntries(m.errors),
      errorsTotal,
      errorSamples: m.errorSamples,
      limitRefusals: Object.fromEntries(m.refusals),
      ttfbMs: summary(m.ttfbMs),
      reconnectFirstByteMs: summary(m.reconnectFirstByteMs),
      mcpCallMs: summary(m.mcpMs),
      deltas: {
        events: m.deltaEvents,
        chars: m.deltaChars,
        eventsPerSecond: round(m.deltaEvents / seconds),
        charsPerSecond: round(m.deltaChars / seconds),
      },
      // Peaks of the connections to the database, and of those running a statement at that moment.
      databaseConnections: { peak: peak.connections, peakActive: peak.active },
      replayChecked: replay.checked,
      replaySkipped: replay.skipped,
      replayMismatches: replay.mismatches,
      replayMismatchSamples: replay.samples,
      cpuSeconds: {
        client: round((clientCpu.user + clientCpu.system) / 1e6),
        instances: instances.selfStarted ? instanceCpu : null,
      },
      clientEventLoopDelayMs: { p99: round(loopDelay.percentile(99) / 1e6), max: round(loopDelay.max / 1e6) },
      budget: { ...budget, ok },
    };
    console.log(JSON.stringify(out, null, 2));
    keepLogs = errorsTotal > 0;
    return cfg.LOAD_ENFORCE === '1' && !ok ? 2 : 0;
  } finally {
    await instances.stop(keepLogs);
    await db?.end();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`[load] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
