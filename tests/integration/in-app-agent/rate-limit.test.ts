// The assistant's run limits in one process, on the test file's database: runs per user and minute
// (429 RATE_LIMITED with Retry-After, counted in the limits store) and answers running at once per
// user (429 TOO_MANY_RUNS with Retry-After: 5), as a user and an operator see them. The same limits
// across two instances: tests/integration/limits/instances.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeError } from '@/features/in-app-agent/components/errors';
import { runLimitKey } from '@/features/in-app-agent/server/handler';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { resetEnvCache } from '@/server/env';
import { cancelRun, postAgent, startRunStream, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let model: FakeServer;
let project: TestProject;

/** The newest user message decides the model's answer: slow, a held tool call, or a short one. */
function turnFor(body: Record<string, unknown>): ScriptedTurn {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  if (messages.at(-1)?.role === 'tool') return { text: ['Understood.'] };
  const last = [...messages].reverse().find((m) => m.role === 'user');
  const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
  if (text.includes('slow')) return { text: Array.from({ length: 400 }, (_, i) => `w${i} `), delayMs: 25 };
  if (text.includes('approve')) return { toolCalls: [{ name: 'create_issue', args: { title: 'Held' } }] };
  return { text: ['Done.'] };
}

beforeAll(async () => {
  model = await startFakeOpenAI((body) => turnFor(body));
  server = await startTestServer();
  project = await createProject('Limits');
});
afterAll(async () => {
  await server?.close();
  await model?.close();
});

async function storedCount(key: string): Promise<number> {
  const prisma = await getPrisma();
  const rows = await prisma.limitCounter.findMany({ where: { key } });
  return rows.reduce((sum, r) => sum + r.count, 0);
}

async function runningOf(userId: string): Promise<number> {
  return (await getPrisma()).agentRun.count({ where: { userId, status: 'RUNNING' } });
}

async function until(what: string, check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('runs per user and minute', () => {
  beforeAll(() => {
    useScriptedModelEnv(model.url, { AGENT_RATE_LIMIT_PER_MINUTE: '2' });
  });

  it('limits each user with a clear 429 and Retry-After, counted in the database', async () => {
    const member = project.users.MEMBER;
    expect((await postAgent(server.url, project.id, member.cookie, userMessageBody('one'))).status).toBe(200);
    expect((await postAgent(server.url, project.id, member.cookie, userMessageBody('two'))).status).toBe(200);
    const third = await postAgent(server.url, project.id, member.cookie, userMessageBody('three'));
    expect(third.status).toBe(429);
    expect(third.error?.code).toBe('RATE_LIMITED');
    expect(third.error?.message).toMatch(/^Too many requests\. Try again in \d+ s\.$/);
    const wait = Number(third.headers.get('retry-after'));
    expect(wait).toBeGreaterThan(0);
    // A sliding minute: a run counted now weighs on the window for up to a minute and a half.
    expect(wait).toBeLessThanOrEqual(120);
    // The counter lives in the limits store (shared by every instance), not in this process: the
    // refused run was not counted.
    expect(await storedCount(runLimitKey(member.id))).toBe(2);
    // Another user is not affected.
    const admin = project.users.ADMIN;
    expect((await postAgent(server.url, project.id, admin.cookie, userMessageBody('hi'))).status).toBe(200);
  });
});

describe('answers running at once per user', () => {
  beforeAll(() => {
    useScriptedModelEnv(model.url, { AGENT_MAX_CONCURRENT_RUNS_PER_USER: '2' });
  });

  it('refuses a third running answer (429 TOO_MANY_RUNS, Retry-After: 5), takes one once an answer ends', async () => {
    const user = project.users.OWNER;
    // An answer waiting for an approval has ended (INTERRUPTED): it is not running.
    const held = await postAgent(server.url, project.id, user.cookie, userMessageBody('please approve this'));
    expect(held.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    const threadId = (held.events[0] as { threadId: string }).threadId;
    const interrupts = (held.events.at(-1) as { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;

    const started = (text: string) =>
      startRunStream(server.url, project.id, user.cookie, userMessageBody(text), (ev) =>
        ev.some((e) => e.event.type === 'TEXT_MESSAGE_CONTENT'),
      );
    const first = await started('slow one');
    const second = await started('slow two');
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(await runningOf(user.id)).toBe(2);

    const third = await postAgent(server.url, project.id, user.cookie, userMessageBody('a third question'));
    expect(third.status).toBe(429);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(third.error).toEqual({
      code: 'TOO_MANY_RUNS',
      message: 'You already have 2 answers being written at once. Wait for one to finish, then try again.',
    });
    // What the panel shows for it.
    const shown = describeError(third.error!.code, third.error!.message);
    expect(shown.message).toBe(
      'The assistant is already writing as many answers for you as it can at once (in other conversations ' +
        'or tabs). Wait for one of them to finish, then retry.',
    );
    expect(shown.retryable).toBe(true);

    // Answering the approval starts a run too: refused the same way, and the approval stays open.
    const resume = {
      threadId,
      messages: [],
      resume: interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: false } })),
    };
    const refusedResume = await postAgent(server.url, project.id, user.cookie, resume);
    expect(refusedResume.status).toBe(429);
    expect(refusedResume.error?.code).toBe('TOO_MANY_RUNS');
    const prisma = await getPrisma();
    expect(await prisma.agentPendingApproval.count({ where: { conversationId: threadId, status: 'PENDING' } })).toBe(1);

    // Nothing was opened for the refusals, and they did not use up the user's runs per minute.
    expect(await runningOf(user.id)).toBe(2);
    expect(await storedCount(runLimitKey(user.id))).toBe(3);
    // Another user is not affected.
    const viewer = project.users.VIEWER;
    expect((await postAgent(server.url, project.id, viewer.cookie, userMessageBody('hello'))).status).toBe(200);

    // One answer ends: the next one is taken.
    const firstRunId = (first.events[0]!.event as { runId: string }).runId;
    expect((await cancelRun(server.url, project.id, firstRunId, user.cookie)).status).toBe(202);
    await until('the stopped answer to end', async () => (await runningOf(user.id)) === 1);
    const answered = await postAgent(server.url, project.id, user.cookie, resume);
    expect(answered.status).toBe(200);
    expect(answered.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });

    const secondRunId = (second.events[0]!.event as { runId: string }).runId;
    await cancelRun(server.url, project.id, secondRunId, user.cookie);
    await until('every answer to end', async () => (await runningOf(user.id)) === 0);
  });

  it('does not count a run whose instance stopped sending heartbeats (the stale sweep closes it)', async () => {
    const user = project.users.ADMIN;
    const prisma = await getPrisma();
    const long = new Date(Date.now() - 10 * 60_000);
    for (let n = 0; n < 2; n++) {
      const conversationId = newId('cv_');
      await prisma.agentConversation.create({
        data: { id: conversationId, projectId: project.id, userId: user.id, title: 't' },
      });
      await prisma.agentRun.create({
        data: {
          id: newId('run_'),
          conversationId,
          userId: user.id,
          status: 'RUNNING',
          startedAt: long,
          lastHeartbeatAt: long,
        },
      });
    }
    const res = await postAgent(server.url, project.id, user.cookie, userMessageBody('still here?'));
    expect(res.status).toBe(200);
    expect(res.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
  });
});

afterAll(() => {
  for (const k of ['AGENT_MAX_CONCURRENT_RUNS_PER_USER', 'AGENT_RATE_LIMIT_PER_MINUTE']) delete process.env[k];
  resetEnvCache();
});
