// A PostgreSQL outage during a slow streaming answer, on a throw-away cluster this test stops and
// starts: readiness turns false and true again, the agent route and a tRPC query are refused with
// 503 DATABASE_UNAVAILABLE and Retry-After (never 500) while the server is down, and the answer
// that was streaming completes and is stored whole once the database is back. PostgreSQL only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeFanOut } from '@/features/in-app-agent/server/fan-out';
import { stopStaleSweep } from '@/features/in-app-agent/server/persistence';
import { closeDb, getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import {
  postAgent,
  startRunStream,
  userMessageBody,
  useScriptedModelEnv,
  type PositionedSse,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { captureLog } from '../../helpers/log-capture';
import { pgBinariesAvailable, startPgCluster, type PgCluster } from '../../helpers/pg-cluster';

const enabled = Boolean(process.env.TEST_DATABASE_URL) && pgBinariesAvailable();

let cluster: PgCluster;
let server: TestServer;
let model: FakeServer;
let project: TestProject;
const WORDS = Array.from({ length: 70 }, (_, i) => `w${i} `);

beforeAll(async () => {
  if (!enabled) return;
  cluster = await startPgCluster();
  // This file's app uses the throw-away cluster, not the shared server the suite set up.
  await closeDb();
  process.env.DATABASE_URL = cluster.url;
  model = await startFakeOpenAI(() => ({ text: WORDS, delayMs: 100 }));
  // biome-ignore lint/correctness/useHookAtTopLevel: a test helper that sets environment variables, not a React hook
  useScriptedModelEnv(model.url);
  resetEnvCache();
  server = await startTestServer();
  project = await createProject('Outage');
}, 120_000);

afterAll(async () => {
  if (!enabled) return;
  await server?.close();
  await model?.close();
  stopStaleSweep();
  await closeFanOut();
  await closeDb();
  cluster?.destroy();
});

async function getJson(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}

async function waitFor<T>(what: string, probe: () => Promise<T | null>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== null) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const textOf = (events: PositionedSse[]) =>
  events.flatMap((e) => (e.event.type === 'TEXT_MESSAGE_CONTENT' ? [e.event.delta] : [])).join('');

describe.runIf(enabled)('a database outage', () => {
  it('is a 503 DATABASE_UNAVAILABLE while it lasts, and the answer streaming through it is stored whole', {
    timeout: 90_000,
  }, async () => {
    const cookie = project.users.MEMBER.cookie;
    expect((await getJson(`${server.url}/api/ready`)).status).toBe(200);

    let outage: Promise<void> | undefined;
    const during: Record<string, { status: number; headers: Headers; body: unknown }> = {};
    const streaming = startRunStream(server.url, project.id, cookie, userMessageBody('a slow answer'), (events) => {
      // Late in the answer, stop the server, look around, start it again: the outage covers the
      // answer's last words and its end, so the final writes are made while the database is away.
      if (!outage && events.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length >= WORDS.length - 12) {
        outage = (async () => {
          cluster.stop('fast');
          const downAt = Date.now();
          during.ready = await getJson(`${server.url}/api/ready`);
          const agent = await postAgent(server.url, project.id, cookie, userMessageBody('while down'));
          during.agent = { status: agent.status, headers: agent.headers, body: agent.error };
          const trpc = await fetch(`${server.url}/api/trpc/tracker.projects.list`, { headers: { cookie } });
          during.trpc = { status: trpc.status, headers: trpc.headers, body: await trpc.json() };
          // A few seconds down in all (past the answer's end), then back.
          await new Promise((r) => setTimeout(r, Math.max(0, 3_500 - (Date.now() - downAt))));
          cluster.start();
        })();
      }
      return false;
    });
    const log = captureLog();
    let streamed: Awaited<typeof streaming>;
    try {
      streamed = await streaming;
      await outage;
    } finally {
      log.stop();
    }
    const { status, events } = streamed;
    expect(outage).toBeDefined();
    expect(status).toBe(200);

    // While down: not ready, and every refusal is a 503 with a stable code and Retry-After.
    expect(during.ready!.status).toBe(503);
    expect(during.ready!.body).toMatchObject({ status: 'unavailable', checks: { database: { ok: false } } });
    expect(during.agent!.status).toBe(503);
    expect(during.agent!.body).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    expect(Number(during.agent!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(during.trpc!.status).toBe(503);
    expect(JSON.stringify(during.trpc!.body)).toContain('DATABASE_UNAVAILABLE');
    expect(Number(during.trpc!.headers.get('retry-after'))).toBeGreaterThan(0);

    // Ready again once the server is back.
    await waitFor('readiness', async () => ((await getJson(`${server.url}/api/ready`)).status === 200 ? true : null));

    // The answer completed, and what is stored is exactly what streamed.
    expect(events.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(textOf(events)).toBe(`a slow answer${WORDS.join('')}`);
    const runId = (events[0]!.event as { runId: string }).runId;
    const prisma = await getPrisma();
    const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('COMPLETED');
    const rows = await prisma.agentEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
    const stored = rows.flatMap((r) =>
      (r.payload as { type: string }).type === 'TEXT_MESSAGE' ? [(r.payload as { content: string }).content] : [],
    );
    expect(stored.join('')).toBe(`a slow answer${WORDS.join('')}`);
    expect(rows.at(-1)!.payload).toMatchObject({ type: 'RUN_FINISHED' });
    // The run's key was revoked once the database was back.
    const key = await prisma.apiKey.findFirstOrThrow({ where: { runId } });
    expect(key.revokedAt).not.toBeNull();
    // The writes that waited for it said so, each retry a warning with the run's id.
    const retried = log.events('run.write_retried');
    expect(retried.length).toBeGreaterThan(0);
    for (const line of retried) expect(line).toMatchObject({ level: 'warn', runId, error: expect.any(String) });
  });
});
