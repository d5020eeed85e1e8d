// Two app instances on one PostgreSQL database, as separate processes over real HTTP: a run started
// on the first is followed and stopped from the second; when the first is killed (-9) mid-answer,
// the watcher on the second learns it (RUN_STALE) within the stale window and the conversation
// goes on there. PostgreSQL only (the embedded database belongs to one process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cancelRun,
  followRun,
  postAgent,
  startRunStream,
  userMessageBody,
  type PositionedSse,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startInstance, type AppInstance } from '../../helpers/instances';
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
    AGENT_MCP_URL: undefined,
    NEXTAUTH_URL: undefined,
  };
  [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
  project = await createProject('Two instances');
}, 120_000);

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

  it('tells the watcher on the second instance when the first dies mid-answer, and the conversation goes on', async () => {
    turns = [{ text: words(2000), delayMs: 10 }, { text: ['Still ', 'here.'] }];
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
    const followed = await followRun(b.url, project.id, runId, member().cookie, {
      until: (ev) => {
        if (!killedAt && ev.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length >= 10) {
          killedAt = Date.now();
          a.process.kill('SIGKILL');
        }
        return false;
      },
    });
    const noticedAfterMs = Date.now() - killedAt;
    expect(followed.events.at(-1)!.event).toMatchObject({ type: 'RUN_ERROR', code: 'RUN_STALE' });
    // The stale window, plus the sweep and the watcher's check.
    expect(noticedAfterMs).toBeLessThan((STALE_SECONDS + 3) * 1000);
    const next = await postAgent(b.url, project.id, member().cookie, userMessageBody('are you there?', threadId));
    expect(next.status).toBe(200);
    expect(next.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
  });
});
