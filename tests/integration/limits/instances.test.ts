// The limits hold across instances: two app processes on one PostgreSQL database, over real HTTP,
// requests alternated between them and sent at once. Runs per user and minute, answers running at
// once per user, and MCP tool calls per key and minute each let exactly their limit through, in
// total, not per instance (a limit counted in process memory lets twice as many through and fails
// here). PostgreSQL only (the embedded database belongs to one process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { cancelRun, postAgent, startRunStream, userMessageBody } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startInstance, type AppInstance } from '../../helpers/instances';
import { projectKey, rawPost } from '../mcp/mcp-client';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
let model: FakeServer;
let project: TestProject;

/** "slow" questions get a ten-second answer; anything else a short one. */
function turnFor(body: Record<string, unknown>): ScriptedTurn {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  if (text.includes('slow')) return { text: Array.from({ length: 400 }, (_, i) => `w${i} `), delayMs: 25 };
  return { text: ['Done.'] };
}

beforeAll(async () => {
  if (!onPostgres) return;
  model = await startFakeOpenAI((body) => turnFor(body));
  project = await createProject('Shared limits');
});
afterAll(async () => {
  await model?.close();
});

/** Two instances with these limits (the rest generous), started together and stopped after the block. */
function pairWith(limits: Record<string, string>): { a: () => AppInstance; b: () => AppInstance } {
  let a: AppInstance | undefined;
  let b: AppInstance | undefined;
  beforeAll(async () => {
    const env = {
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: model.url,
      OPENAI_COMPATIBLE_MODEL: 'scripted-model',
      AGENT_MODEL_MAX_RETRIES: '0',
      AGENT_RATE_LIMIT_PER_MINUTE: '1000',
      AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
      MCP_CALLS_PER_KEY_PER_MINUTE: '100000',
      AGENT_MCP_URL: undefined,
      NEXTAUTH_URL: undefined,
      ...limits,
    };
    [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
  }, 120_000);
  afterAll(async () => {
    await a?.kill('SIGKILL');
    await b?.kill('SIGKILL');
  });
  return { a: () => a!, b: () => b! };
}

/** The instance for the n-th request: alternately the first and the second. */
const alternate = (pair: { a: () => AppInstance; b: () => AppInstance }, n: number) =>
  (n % 2 === 0 ? pair.a() : pair.b()).url;

/** How many answers had each status. */
function tally(statuses: number[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
  return counts;
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!onPostgres)('runs per user and minute, and MCP calls per key and minute, on two instances', () => {
  const RUNS = 5;
  const CALLS = 6;
  const pair = pairWith({ AGENT_RATE_LIMIT_PER_MINUTE: String(RUNS), MCP_CALLS_PER_KEY_PER_MINUTE: String(CALLS) });

  it(`lets exactly ${RUNS} of twelve runs sent at once to both instances through`, async () => {
    const user = project.users.MEMBER;
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        postAgent(alternate(pair, n), project.id, user.cookie, userMessageBody(`question ${n}`)),
      ),
    );
    expect(tally(answers.map((r) => r.status))).toEqual({ 200: RUNS, 429: 12 - RUNS });
    for (const r of answers.filter((x) => x.status === 429)) {
      expect(r.error?.code).toBe('RATE_LIMITED');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
    }
    for (const r of answers.filter((x) => x.status === 200)) {
      expect(r.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    }
    // Each instance got six requests and refused at least one: neither counted on its own.
    const refusedOn = (i: number) => answers.filter((r, n) => n % 2 === i && r.status === 429).length;
    expect(refusedOn(0)).toBeGreaterThan(0);
    expect(refusedOn(1)).toBeGreaterThan(0);
    // Both keep refusing afterwards.
    for (let n = 0; n < 2; n++) {
      expect((await postAgent(alternate(pair, n), project.id, user.cookie, userMessageBody('again'))).status).toBe(429);
    }
    const prisma = await getPrisma();
    expect(await prisma.agentRun.count({ where: { userId: user.id } })).toBe(RUNS);
  });

  it(`lets exactly ${CALLS} MCP tool calls of one key through, then 429 with JSON-RPC -32029`, async () => {
    const { key, secret } = await projectKey(project);
    const headers = { authorization: `Bearer ${secret}`, 'mcp-protocol-version': '2025-06-18' };
    const body = (id: number) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'list_issues', arguments: {} } });
    const answers = await Promise.all(
      Array.from({ length: 14 }, (_, n) => rawPost(alternate(pair, n), body(n + 1), headers)),
    );
    expect(tally(answers.map((r) => r.status))).toEqual({ 200: CALLS, 429: 14 - CALLS });
    for (const r of answers.filter((x) => x.status === 200)) expect(r.json.result).toBeDefined();
    for (const r of answers.filter((x) => x.status === 429)) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.json.error).toMatchObject({ code: -32029, data: { code: 'RATE_LIMITED' } });
    }
    for (let n = 0; n < 2; n++) expect((await rawPost(alternate(pair, n), body(100 + n), headers)).status).toBe(429);
    // Every refused call is in the audit trail (counted, one row per key and minute).
    const prisma = await getPrisma();
    const rows = await prisma.toolCallAudit.findMany({ where: { apiKeyId: key.id } });
    expect(rows.filter((r) => r.status === 'OK')).toHaveLength(CALLS);
    const refused = rows.filter((r) => r.errorCode === 'RATE_LIMITED').reduce((s, r) => s + r.callCount, 0);
    expect(refused).toBe(14 - CALLS + 2);
  });
});

describe.skipIf(!onPostgres)('answers running at once per user, on two instances', () => {
  const RUNNING = 2;
  const pair = pairWith({ AGENT_MAX_CONCURRENT_RUNS_PER_USER: String(RUNNING) });

  it(`runs exactly ${RUNNING} of six slow answers sent at once to both, and a new one once they end`, async () => {
    const user = project.users.ADMIN;
    const prisma = await getPrisma();
    const running = () => prisma.agentRun.count({ where: { userId: user.id, status: 'RUNNING' } });
    // Each request returns once its first event arrived (or with its refusal); the answers go on.
    const started = await Promise.all(
      Array.from({ length: 6 }, async (_, n) => {
        const base = alternate(pair, n);
        const body = userMessageBody(`slow ${n}`);
        const res = await startRunStream(base, project.id, user.cookie, body, (ev) => ev.length > 0);
        return { base, ...res };
      }),
    );
    expect(tally(started.map((r) => r.status))).toEqual({ 200: RUNNING, 429: 6 - RUNNING });
    expect(await running()).toBe(RUNNING);

    // The refusals, as a client sees them (a stream reader gets no events from a JSON answer).
    const refused = await Promise.all(
      [0, 1].map((n) => postAgent(alternate(pair, n), project.id, user.cookie, userMessageBody('slow again'))),
    );
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(r.headers.get('retry-after')).toBe('5');
      expect(r.error?.code).toBe('TOO_MANY_RUNS');
    }
    expect(await running()).toBe(RUNNING);

    // Once they end, a new one is taken (on either instance).
    for (const r of started.filter((x) => x.status === 200)) {
      const runId = (r.events[0]!.event as { runId: string }).runId;
      expect((await cancelRun(r.base, project.id, runId, user.cookie)).status).toBe(202);
    }
    await until('the stopped answers to end', async () => (await running()) === 0);
    const next = await postAgent(pair.b().url, project.id, user.cookie, userMessageBody('a short one'));
    expect(next.status).toBe(200);
    expect(next.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
  });
});
