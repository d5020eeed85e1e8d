// Graceful shutdown of an app instance (a child process with the production process set-up:
// SIGTERM/SIGINT handlers, housekeeping) during a slow streaming answer: new runs are refused with
// 503 DRAINING and readiness turns false at once; the answer finishes within the drain window, or
// (a window shorter than the answer) is released at the window's end and another instance takes it
// over and finishes it; the run key is revoked, nothing stays RUNNING and the process exits 0. PostgreSQL only (the instance and this
// test share the database).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { followToEnd, postAgent, startRunStream, userMessageBody, type PositionedSse } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startInstance, type AppInstance } from '../../helpers/instances';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
let model: FakeServer;
let project: TestProject;
let turn: ScriptedTurn = { text: ['hello'] };
const instances: AppInstance[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  model = await startFakeOpenAI(() => turn);
  project = await createProject('Shutdown');
}, 60_000);

afterAll(async () => {
  for (const i of instances) await i.kill('SIGKILL');
  await model?.close();
});

function instanceEnv(drainSeconds: number) {
  return {
    AGENT_MODEL_PROVIDER: 'openai-compatible',
    OPENAI_COMPATIBLE_BASE_URL: model.url,
    OPENAI_COMPATIBLE_MODEL: 'scripted-model',
    AGENT_MODEL_MAX_RETRIES: '0',
    AGENT_RATE_LIMIT_PER_MINUTE: '1000',
    AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
    SHUTDOWN_DRAIN_SECONDS: String(drainSeconds),
    LOG_LEVEL: 'info',
    AGENT_MCP_URL: undefined,
    NEXTAUTH_URL: undefined,
  };
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);
const deltas = (events: PositionedSse[]) => events.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length;
const textOf = (events: PositionedSse[]) =>
  events.flatMap((e) => (e.event.type === 'TEXT_MESSAGE_CONTENT' ? [e.event.delta] : [])).join('');

/** Streams an answer from `instance`; once `after` deltas arrived, sends SIGTERM and probes the instance. */
async function answerThroughShutdown(instance: AppInstance, after: number) {
  const cookie = project.users.MEMBER.cookie;
  let exit: Promise<number | null> | undefined;
  let probes:
    | Promise<{ agent: Awaited<ReturnType<typeof postAgent>>; ready: { status: number; body: unknown } }>
    | undefined;
  const { status, events } = await startRunStream(
    instance.url,
    project.id,
    cookie,
    userMessageBody('a slow answer'),
    (ev) => {
      if (!exit && deltas(ev) >= after) {
        exit = instance.kill('SIGTERM');
        probes = (async () => {
          // Give the signal a moment to arrive, then: no new run, not ready.
          await new Promise((r) => setTimeout(r, 150));
          const agent = await postAgent(instance.url, project.id, cookie, userMessageBody('another question'));
          const res = await fetch(`${instance.url}/api/ready`);
          return { agent, ready: { status: res.status, body: await res.json() } };
        })();
      }
      return false;
    },
  );
  expect(exit).toBeDefined();
  return { status, events, exitCode: await exit!, probes: await probes! };
}

async function expectNothingRunning(runId: string) {
  const prisma = await getPrisma();
  const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
  expect(await prisma.agentRun.count({ where: { status: 'RUNNING', conversation: { projectId: project.id } } })).toBe(
    0,
  );
  const key = await prisma.apiKey.findFirstOrThrow({ where: { runId } });
  expect(key.revokedAt).not.toBeNull();
  return run;
}

function storedText(rows: Array<{ payload: unknown }>): string {
  return rows
    .flatMap((r) =>
      (r.payload as { type: string }).type === 'TEXT_MESSAGE' ? [(r.payload as { content: string }).content] : [],
    )
    .join('');
}

describe.skipIf(!onPostgres)('graceful shutdown', () => {
  it('refuses new runs, lets the running answer finish within the window, and exits 0', {
    timeout: 60_000,
  }, async () => {
    turn = { text: words(60), delayMs: 50 };
    const instance = await startInstance(instanceEnv(20));
    instances.push(instance);
    const { status, events, exitCode, probes } = await answerThroughShutdown(instance, 5);
    expect(status).toBe(200);

    expect(probes.agent.status).toBe(503);
    expect(probes.agent.error).toMatchObject({ code: 'DRAINING' });
    expect(Number(probes.agent.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(probes.ready.status).toBe(503);
    expect(probes.ready.body).toMatchObject({ status: 'draining', checks: { draining: { ok: false } } });

    expect(events.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(textOf(events)).toBe(`a slow answer${words(60).join('')}`);
    expect(exitCode).toBe(0);
    const runId = (events[0]!.event as { runId: string }).runId;
    const run = await expectNothingRunning(runId);
    expect(run.status).toBe('COMPLETED');
    const lines = instance.output();
    expect(lines).toContain('"event":"drain.started"');
    expect(lines).toMatch(/"event":"drain.finished","finished":1,"released":0/);
    expect(lines).toContain('"event":"shutdown.complete"');
  });

  it('hands an answer longer than the window to another instance, which finishes it', {
    timeout: 120_000,
  }, async () => {
    turn = { text: words(200), delayMs: 30 };
    const instance = await startInstance(instanceEnv(1));
    const other = await startInstance(instanceEnv(20));
    instances.push(instance, other);
    const { status, events, exitCode } = await answerThroughShutdown(instance, 5);
    expect(status).toBe(200);
    expect(exitCode).toBe(0);
    // Released at the window's end, not ended: the stream stops without a terminal event.
    expect(events.some((e) => e.event.type === 'RUN_FINISHED' || e.event.type === 'RUN_ERROR')).toBe(false);
    expect(instance.output()).toMatch(/"event":"drain.finished","finished":0,"released":1/);

    // The other instance takes it over at once; a client following from where it was gets the end.
    const runId = (events[0]!.event as { runId: string }).runId;
    const rest = await followToEnd([other.url], project.id, runId, project.users.MEMBER.cookie, {
      after: events.at(-1)!.id!,
    });
    expect(rest.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    const run = await expectNothingRunning(runId);
    expect(run).toMatchObject({ status: 'COMPLETED', generation: 2, takeovers: 1 });
    expect(other.output()).toContain('"event":"run.taken_over"');
    // The cut step was asked again: the stored answer is the whole answer, once.
    const prisma = await getPrisma();
    const rows = await prisma.agentEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
    expect(storedText(rows)).toBe(`a slow answer${words(200).join('')}`);
  });
});
