// Two app instances on one PostgreSQL database, as separate processes over real HTTP: a run started
// on the first is followed and stopped from the second; when the first is killed (-9) mid-answer,
// the second takes the run over once its lease expires and finishes it (the step cut off asked
// again, once), and the watcher on the second sees one answer and one end. PostgreSQL only (the
// embedded database belongs to one process). The deploy suite kills at every point of a run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { foldEvents } from '@/features/in-app-agent/fold';
import {
  cancelRun,
  followRun,
  followToEnd,
  postAgent,
  startRunStream,
  userMessageBody,
  type PositionedSse,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startInstance, type AppInstance } from '../../helpers/instances';
import { trpcClient } from '../../helpers/trpc';
import { getPrisma } from '@/server/db';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
let model: FakeServer;
let a: AppInstance;
let b: AppInstance;
let project: TestProject;
let turns: ScriptedTurn[] = [];
const STALE_SECONDS = 5;

beforeAll(async () => {
  if (!onPostgres) return;
  model = await startFakeOpenAI((_b, i) => turns[i] ?? { text: ['(no more turns)'] });
  const env = {
    AGENT_MODEL_PROVIDER: 'openai-compatible',
    OPENAI_COMPATIBLE_BASE_URL: model.url,
    OPENAI_COMPATIBLE_MODEL: 'scripted-model',
    AGENT_MODEL_MAX_RETRIES: '0',
    AGENT_RATE_LIMIT_PER_MINUTE: '1000',
    AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
    AGENT_RUN_STALE_SECONDS: String(STALE_SECONDS),
    AGENT_RUN_LEASE_SECONDS: '3',
    AGENT_MCP_URL: undefined,
    NEXTAUTH_URL: undefined,
  };
  [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
  project = await createProject('Two instances');
}, 300_000);

afterAll(async () => {
  await a?.kill('SIGKILL');
  await b?.kill('SIGKILL');
  await model?.close();
});

const member = () => project.users.MEMBER;
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);
const text = (events: PositionedSse[]) =>
  events.flatMap((e) => (e.event.type === 'TEXT_MESSAGE_CONTENT' ? [e.event.delta] : [])).join('');

describe.skipIf(!onPostgres)('two instances on one PostgreSQL database', () => {
  it('follows a run of the first instance from the second, exactly, and stops it from there', async () => {
    turns = [{ text: words(400), delayMs: 10 }];
    model.requests.length = 0;
    const started = await startRunStream(
      a.url,
      project.id,
      member().cookie,
      userMessageBody('long answer'),
      (ev) => ev.length >= 20,
    );
    const runId = (started.events[0]!.event as { runId: string }).runId;
    const position = started.events.at(-1)!.id!;
    let stopped = false;
    const followed = await followRun(b.url, project.id, runId, member().cookie, {
      after: position,
      until: (ev) => {
        // Once the second instance has delivered some of the rest, Stop from there.
        if (!stopped && ev.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length >= 20) {
          stopped = true;
          void cancelRun(b.url, project.id, runId, member().cookie).then((r) => expect(r.status).toBe(202));
        }
        return false;
      },
    });
    expect(stopped).toBe(true);
    // Exactly the events after the position, in order, then the end Stop caused.
    expect(followed.events[0]!.id).toBeGreaterThan(position);
    const ids = followed.events.map((e) => e.id!).filter((id) => id !== null);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(followed.events.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    const received = text(started.events) + text(followed.events);
    const prisma = await getPrisma();
    const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('ABORTED');
    const stored = await prisma.agentEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
    const storedText = stored
      .flatMap((r) =>
        (r.payload as { type: string }).type === 'TEXT_MESSAGE' ? [(r.payload as { content: string }).content] : [],
      )
      .join('');
    expect(received).toBe(storedText);
    expect(storedText.length).toBeLessThan(`long answer${words(400).join('')}`.length);
  });

  it('takes a run over on the second instance when the first dies mid-answer, and the watcher sees one answer', async () => {
    // The first request is cut off by the kill; the second is the same step asked again.
    turns = [
      { text: words(2000), delayMs: 10 },
      { text: ['The ', 'whole ', 'answer.'] },
      { text: ['Still ', 'here.'] },
    ];
    model.requests.length = 0;
    const started = await startRunStream(
      a.url,
      project.id,
      member().cookie,
      userMessageBody('very long answer'),
      (ev) => ev.length >= 10,
    );
    const { runId, threadId } = started.events[0]!.event as { runId: string; threadId: string };
    let killedAt = 0;
    const events = await followToEnd([b.url], project.id, runId, member().cookie, {
      onEvents: (ev) => {
        // Past the first flush of the long message (it is stored every second while it streams).
        if (!killedAt && ev.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length >= 150) {
          killedAt = Date.now();
          a.process.kill('SIGKILL');
        }
      },
    });
    // An upper bound: the lease runs out AGENT_RUN_LEASE_SECONDS after the last heartbeat.
    const resumedAfterMs = Date.now() - killedAt;
    const terminals = events.filter((e) => e.event.type === 'RUN_FINISHED' || e.event.type === 'RUN_ERROR');
    expect(terminals).toHaveLength(1);
    expect(terminals[0]!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(events.some((e) => e.event.type === 'CUSTOM' && e.event.name === 'in-app-agent.resuming')).toBe(true);
    const resumed = events.find((e) => e.event.type === 'CUSTOM' && e.event.name === 'in-app-agent.resumed')!;
    expect(resumed.id).toBe(2 ** 32 + 1);
    const ids = events.flatMap((e) => (e.id === null ? [] : [e.id]));
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1]!);
    // The step cut off was asked again, once; the cut-off text is replaced, not kept beside it.
    expect(model.requests).toHaveLength(2);
    const prisma = await getPrisma();
    const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
    // Both model calls are counted: the one cut off (estimated from what it had streamed) and the one asked again.
    expect(run).toMatchObject({ status: 'COMPLETED', generation: 2, takeovers: 1, usageEstimated: true });
    expect(run.outputTokens).toBeGreaterThan(7);
    const view = foldEvents(events.map((e) => e.event));
    const answer = view.messages.filter((m) => m.role === 'assistant').map((m) => m.content);
    expect(answer).toEqual(['The whole answer.']);
    const got = await trpcClient(b.url, member().cookie).agent.conversations.get.query({
      projectId: project.id,
      conversationId: threadId,
    });
    expect(got.view.messages.map((m) => [m.role, m.role === 'tool' ? '' : m.content])).toEqual([
      ['user', 'very long answer'],
      ['assistant', 'The whole answer.'],
    ]);
    expect(resumedAfterMs).toBeLessThan(30_000);
    const next = await postAgent(b.url, project.id, member().cookie, userMessageBody('are you there?', threadId));
    expect(next.status).toBe(200);
    expect(next.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
  });
});
