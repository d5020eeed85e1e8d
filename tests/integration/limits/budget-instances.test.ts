// Budgets hold across instances: two app processes on one PostgreSQL database, over real HTTP. A
// budget set through one instance refuses the next answer on the other at once (the run's open
// statement reads it; no instance keeps a copy), and answers started at once at the edge of a
// budget on both instances overshoot it by at most the concurrency limit times one answer.
// PostgreSQL only (the embedded database belongs to one process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { postAgent, startRunStream, userMessageBody } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startInstance, type AppInstance } from '../../helpers/instances';
import { trpcClient } from '../../helpers/trpc';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
/** Every scripted answer reports 11 input and 7 output tokens. */
const TOKENS_PER_ANSWER = 18;
const MAX_CONCURRENT = 2;
let model: FakeServer;
let project: TestProject;
let a: AppInstance | undefined;
let b: AppInstance | undefined;

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : '';
}

beforeAll(async () => {
  if (!onPostgres) return;
  // "slow" questions get an answer of a few seconds.
  model = await startFakeOpenAI(
    (body): ScriptedTurn =>
      lastUserText(body).includes('slow')
        ? { text: Array.from({ length: 120 }, (_, i) => `w${i} `), delayMs: 25 }
        : { text: ['Done.'] },
  );
  project = await createProject('Budgets on two instances');
  const env = {
    AGENT_MODEL_PROVIDER: 'openai-compatible',
    OPENAI_COMPATIBLE_BASE_URL: model.url,
    OPENAI_COMPATIBLE_MODEL: 'scripted-model',
    AGENT_MODEL_MAX_RETRIES: '0',
    AGENT_RATE_LIMIT_PER_MINUTE: '1000',
    AGENT_MAX_CONCURRENT_RUNS_PER_USER: String(MAX_CONCURRENT),
    AGENT_MODEL_PRICE_INPUT: undefined,
    AGENT_MODEL_PRICE_OUTPUT: undefined,
    AGENT_MCP_URL: undefined,
    NEXTAUTH_URL: undefined,
  };
  [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
}, 120_000);
afterAll(async () => {
  await a?.kill('SIGKILL');
  await b?.kill('SIGKILL');
  await model?.close();
});

async function waitForNoRunning(userId: string): Promise<void> {
  const prisma = await getPrisma();
  const deadline = Date.now() + 30_000;
  while ((await prisma.agentRun.count({ where: { userId, status: 'RUNNING' } })) > 0) {
    if (Date.now() > deadline) throw new Error('answers still running');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe.skipIf(!onPostgres)('budgets on two instances', () => {
  it('a budget set on one instance refuses the next answer on the other at once, and lifts as fast', async () => {
    const member = project.users.MEMBER;
    expect((await postAgent(b!.url, project.id, member.cookie, userMessageBody('first'))).status).toBe(200);
    // Set on A (18 tokens spent already; the budget is 10).
    await trpcClient(a!.url, project.users.ADMIN.cookie).agent.budgets.set.mutate({
      projectId: project.id,
      budgets: { MEMBER_MONTH: 10 },
    });
    const refused = await postAgent(b!.url, project.id, member.cookie, userMessageBody('second'));
    expect(refused.status).toBe(429);
    expect(refused.error?.code).toBe('BUDGET_EXCEEDED');
    expect(refused.error?.message).toContain('your monthly assistant budget in this project (10 tokens)');
    // Lifted on B: A takes answers again at once.
    await trpcClient(b!.url, project.users.OWNER.cookie).agent.budgets.set.mutate({
      projectId: project.id,
      budgets: { MEMBER_MONTH: null },
    });
    expect((await postAgent(a!.url, project.id, member.cookie, userMessageBody('third'))).status).toBe(200);
  });

  it('answers started at once on both instances at the edge overshoot by at most the concurrency limit', async () => {
    const user = project.users.VIEWER;
    // Windows are UTC days: the test never straddles a midnight (it waits past one).
    const now = new Date();
    const toMidnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - now.getTime();
    if (toMidnight < 60_000) await new Promise((r) => setTimeout(r, toMidnight + 1_000));
    // One answer spent: 18 of a 20-token daily budget.
    await trpcClient(a!.url, project.users.ADMIN.cookie).agent.budgets.set.mutate({
      projectId: project.id,
      budgets: { MEMBER_DAY: 20 },
    });
    expect((await postAgent(a!.url, project.id, user.cookie, userMessageBody('warm up'))).status).toBe(200);
    const started = await Promise.all(
      [1, 2, 3, 4, 5, 6].map((i) =>
        startRunStream((i % 2 ? a : b)!.url, project.id, user.cookie, userMessageBody(`slow ${i}`), (ev) =>
          ev.some((e) => e.event.type === 'RUN_STARTED'),
        ),
      ),
    );
    const admitted = started.filter((s) => s.status === 200).length;
    expect(admitted).toBeGreaterThan(0);
    expect(admitted).toBeLessThanOrEqual(MAX_CONCURRENT);
    await waitForNoRunning(user.id);
    // The day's spend: the sum of its slots (answers that ended together count side by side).
    const day = await (await getPrisma()).agentSpend.aggregate({
      where: { projectId: project.id, userId: user.id, period: 'DAY' },
      _sum: { tokens: true },
    });
    const spent = Number(day._sum.tokens);
    expect(spent).toBe((1 + admitted) * TOKENS_PER_ANSWER);
    expect(spent).toBeLessThanOrEqual(20 + MAX_CONCURRENT * TOKENS_PER_ANSWER);
    // Spent now, on either instance.
    for (const instance of [a!, b!]) {
      const refused = await postAgent(instance.url, project.id, user.cookie, userMessageBody('more'));
      expect(refused.error?.code).toBe('BUDGET_EXCEEDED');
    }
  });
});
