// Budgets through the real route and tRPC: admins set them ("Budgets" in the settings), every
// finished answer adds its tokens and cost to the member's day and month and the project's month,
// and once a budget's window has spent it, the next answer is refused with BUDGET_EXCEEDED (429),
// Retry-After = the window's end and a sentence naming the budget, nothing written or counted. An
// answer already streaming is never cut; answers admitted at once overshoot by at most the
// concurrency limit times one answer. The run reports the budgets as they stand before its end,
// which the panel's 80 % warning reads.
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BudgetEventValueSchema } from '@/features/in-app-agent/budgets';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { getPrisma } from '@/server/db';
import { postAgent, startRunStream, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';

/** Every scripted answer reports 11 input and 7 output tokens. */
const TOKENS_PER_ANSWER = 18;
const PRICES = { AGENT_MODEL_PRICE_INPUT: '3', AGENT_MODEL_PRICE_OUTPUT: '15' };
const COST_PER_ANSWER = (11 * 3 + 7 * 15) / 1_000_000;
const UNPRICED = { AGENT_MODEL_PRICE_INPUT: '', AGENT_MODEL_PRICE_OUTPUT: '' };

let server: TestServer;
let model: FakeServer;
let project: TestProject;

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
}

beforeAll(async () => {
  // "slow" questions get an answer of several seconds (200 chunks).
  model = await startFakeOpenAI(
    (body): ScriptedTurn =>
      lastUserText(body).includes('slow')
        ? { text: Array.from({ length: 200 }, (_, i) => `w${i} `), delayMs: 25 }
        : { text: ['Spent.'] },
  );
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
  await model?.close();
});
beforeEach(async () => {
  // Windows are UTC days and months: a test never straddles a midnight (it waits past one).
  const toMidnight = nextUtcMidnight().getTime() - Date.now();
  if (toMidnight < 60_000) await new Promise((r) => setTimeout(r, toMidnight + 1_000));
  // A fresh project per test: its budgets and spend start empty.
  project = await createProject('Budgets');
  useScriptedModelEnv(model.url, UNPRICED);
});

const admin = () => trpcClient(server.url, project.users.ADMIN.cookie).agent;
const ask = (text: string, cookie = project.users.MEMBER.cookie) =>
  postAgent(server.url, project.id, cookie, userMessageBody(text));
const budgetEvent = (events: AgentEvent[]) => {
  const e = events.find((x) => x.type === 'CUSTOM' && x.name === CUSTOM_EVENTS.budget) as
    | { value: unknown }
    | undefined;
  return e ? BudgetEventValueSchema.parse(e.value) : null;
};
function nextUtcMidnight(): Date {
  const n = new Date();
  return new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth(), n.getUTCDate() + 1));
}
const secondsUntil = (d: Date) => Math.ceil((d.getTime() - Date.now()) / 1000);
const nextUtcMonth = () => {
  const n = new Date();
  return new Date(Date.UTC(n.getUTCFullYear(), n.getUTCMonth() + 1, 1));
};

describe('budgets', () => {
  it("refuses a member's next answer once their daily budget in tokens is spent, naming it", async () => {
    const set = await admin().budgets.set.mutate({ projectId: project.id, budgets: { MEMBER_DAY: 30 } });
    expect(set.unit).toBe('TOKENS');
    expect(set.budgets).toMatchObject([{ scope: 'MEMBER_DAY', unit: 'TOKENS', amount: 30 }]);

    const first = await ask('one');
    expect(first.status).toBe(200);
    // The run says where the budgets stand with its own usage: 18 of 30 (60 %).
    expect(budgetEvent(first.events)?.budgets).toEqual([
      expect.objectContaining({ scope: 'MEMBER_DAY', unit: 'TOKENS', amount: 30, spent: TOKENS_PER_ANSWER }),
    ]);
    // The event comes right before the terminal event.
    expect(first.events.at(-2)).toMatchObject({ type: 'CUSTOM', name: CUSTOM_EVENTS.budget });
    const second = await ask('two');
    expect(second.status).toBe(200);
    expect(budgetEvent(second.events)?.budgets[0]?.spent).toBe(2 * TOKENS_PER_ANSWER);

    const prisma = await getPrisma();
    const runsBefore = await prisma.agentRun.count({ where: { userId: project.users.MEMBER.id } });
    const countersBefore = await prisma.limitCounter.findMany({
      where: { key: `agent:run:${project.users.MEMBER.id}` },
    });
    const refused = await ask('three');
    expect(refused.status).toBe(429);
    expect(refused.error?.code).toBe('BUDGET_EXCEEDED');
    expect(refused.error?.message).toMatch(/your daily assistant budget in this project \(30 tokens\)/);
    expect(refused.error?.message).toMatch(/renews at 00:00 UTC/);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Math.abs(retryAfter - secondsUntil(nextUtcMidnight()))).toBeLessThanOrEqual(2);
    // Nothing written, nothing counted: no run, no conversation, no unit of the per-minute limit.
    expect(await prisma.agentRun.count({ where: { userId: project.users.MEMBER.id } })).toBe(runsBefore);
    expect(await prisma.limitCounter.findMany({ where: { key: `agent:run:${project.users.MEMBER.id}` } })).toEqual(
      countersBefore,
    );

    // Another member has a budget of their own.
    expect((await ask('mine', project.users.OWNER.cookie)).status).toBe(200);
    // Raising it lets the member go on at once; clearing it too.
    await admin().budgets.set.mutate({ projectId: project.id, budgets: { MEMBER_DAY: 1000 } });
    expect((await ask('four')).status).toBe(200);
    await admin().budgets.set.mutate({ projectId: project.id, budgets: { MEMBER_DAY: 40 } });
    expect((await ask('five')).error?.code).toBe('BUDGET_EXCEEDED');
    await admin().budgets.set.mutate({ projectId: project.id, budgets: { MEMBER_DAY: null } });
    expect((await ask('six')).status).toBe(200);
    expect((await admin().budgets.get.query({ projectId: project.id })).budgets).toEqual([]);
  });

  it("counts spend per window, and refuses everyone once the project's monthly budget in dollars is spent", async () => {
    useScriptedModelEnv(model.url, PRICES);
    const set = await admin().budgets.set.mutate({
      projectId: project.id,
      budgets: { PROJECT_MONTH: 2.5 * COST_PER_ANSWER, MEMBER_MONTH: 100 },
    });
    expect(set.unit).toBe('USD');
    expect((await ask('a', project.users.MEMBER.cookie)).status).toBe(200);
    expect((await ask('b', project.users.OWNER.cookie)).status).toBe(200);
    const third = await ask('c', project.users.VIEWER.cookie);
    expect(third.status).toBe(200);
    const state = budgetEvent(third.events)?.budgets ?? [];
    expect(state.map((b) => b.scope)).toEqual(['MEMBER_MONTH', 'PROJECT_MONTH']);
    expect(state[1]?.spent).toBeCloseTo(3 * COST_PER_ANSWER, 12);

    for (const user of [project.users.MEMBER, project.users.ADMIN]) {
      const refused = await ask('again', user.cookie);
      expect(refused.status).toBe(429);
      expect(refused.error?.code).toBe('BUDGET_EXCEEDED');
      expect(refused.error?.message).toMatch(/^This project has used its monthly assistant budget \(\$0\.000/);
      const month = nextUtcMonth();
      expect(refused.error?.message).toContain(
        `renews on 1 ${month.toLocaleString('en-GB', { month: 'long', timeZone: 'UTC' })}`,
      );
      expect(Math.abs(Number(refused.headers.get('retry-after')) - secondsUntil(month))).toBeLessThanOrEqual(2);
    }

    // What the windows spent, from the counters: the usage page's figures.
    const usage = await admin().budgets.get.query({ projectId: project.id });
    expect(usage.project.runs).toBe(3);
    expect(usage.project.tokens).toBe(3 * TOKENS_PER_ANSWER);
    expect(usage.project.costUsd).toBeCloseTo(3 * COST_PER_ANSWER, 12);
    expect(usage.members.map((m) => [m.user.id, m.day.runs, m.month.tokens]).sort()).toEqual(
      [project.users.MEMBER, project.users.OWNER, project.users.VIEWER].map((u) => [u.id, 1, TOKENS_PER_ANSWER]).sort(),
    );
    const prisma = await getPrisma();
    const rows = await prisma.agentSpend.findMany({ where: { projectId: project.id } });
    expect(rows).toHaveLength(3 * 2 + 1);
    const today = new Date();
    const dayStart = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()));
    expect(rows.filter((r) => r.period === 'DAY').every((r) => r.windowStart.getTime() === dayStart.getTime())).toBe(
      true,
    );
    // The review's usage per run agrees with the counters.
    const review = await admin().review.usage.query({ projectId: project.id, days: 1 });
    expect(review.total.inputTokens + review.total.outputTokens).toBe(usage.project.tokens);
  });

  it('never cuts an answer already streaming; runs admitted at once overshoot by at most the concurrency limit', async () => {
    useScriptedModelEnv(model.url, { ...UNPRICED, AGENT_MAX_CONCURRENT_RUNS_PER_USER: '2' });
    // One answer spent already: 18 of a 20-token daily budget.
    await admin().budgets.set.mutate({ projectId: project.id, budgets: { MEMBER_DAY: 20 } });
    expect((await ask('warm up')).status).toBe(200);
    // Four at once at the edge: the concurrency limit (2) lets two through; both open below budget.
    const started = await Promise.all(
      [1, 2, 3, 4].map((i) =>
        startRunStream(server.url, project.id, project.users.MEMBER.cookie, userMessageBody(`slow ${i}`), (ev) =>
          ev.some((e) => e.event.type === 'RUN_STARTED'),
        ).catch(() => ({ status: 0, events: [] })),
      ),
    );
    const statuses = started.map((s) => s.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429]);
    // The budget is now cut to nothing while the two answers stream: they are not cut.
    await admin().budgets.set.mutate({ projectId: project.id, budgets: { MEMBER_DAY: 1 } });
    const prisma = await getPrisma();
    expect(await prisma.agentRun.count({ where: { userId: project.users.MEMBER.id, status: 'RUNNING' } })).toBe(2);
    const deadline = Date.now() + 20_000;
    while ((await prisma.agentRun.count({ where: { userId: project.users.MEMBER.id, status: 'RUNNING' } })) > 0) {
      if (Date.now() > deadline) throw new Error('the answers did not finish');
      await new Promise((r) => setTimeout(r, 100));
    }
    const runs = await prisma.agentRun.findMany({
      where: { userId: project.users.MEMBER.id, conversation: { projectId: project.id } },
    });
    expect(runs.map((r) => r.status).sort()).toEqual(['COMPLETED', 'COMPLETED', 'COMPLETED']);
    // (Two answers that ended together may have counted in two slots of the window: the usage
    // page's figure is their sum.)
    const usage = await admin().budgets.get.query({ projectId: project.id });
    const spent = usage.members.find((m) => m.user.id === project.users.MEMBER.id)!.day.tokens;
    // 20-token budget: overshoot bounded by 2 (the limit) answers after the one at 18.
    expect(spent).toBe(3 * TOKENS_PER_ANSWER);
    expect(spent).toBeLessThanOrEqual(20 + 2 * TOKENS_PER_ANSWER);
    expect((await ask('after')).error?.code).toBe('BUDGET_EXCEEDED');
  });

  // Every answer's end adds to its windows' counters; with one row per window, the end of each
  // answer of a project waited for the one before it to commit (the project's month is every
  // answer's), holding a connection of the pool meanwhile. A lock held elsewhere on every counter
  // of the project stands for those ends. PostgreSQL only: the embedded database has one
  // connection, so nothing else can hold a lock while a run ends.
  it.skipIf(!process.env.TEST_DATABASE_URL)(
    "counts an answer's spend without waiting for another transaction that holds the windows' counters",
    async () => {
      await admin().budgets.set.mutate({ projectId: project.id, budgets: { PROJECT_MONTH: 1_000 } });
      expect((await ask('first')).status).toBe(200);
      const other = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await other.connect();
      try {
        await other.query('BEGIN');
        const held = await other.query('SELECT 1 FROM "AgentSpend" WHERE "projectId" = $1 FOR UPDATE', [project.id]);
        expect(held.rowCount).toBe(3);
        // The answer ends (RUN_FINISHED only follows its last statement) while the lock is held.
        let guard: ReturnType<typeof setTimeout> | undefined;
        const answered = await Promise.race([
          ask('second'),
          new Promise<never>((_, reject) => {
            guard = setTimeout(
              () => reject(new Error("the answer's end waited for the lock on the project's counters")),
              20_000,
            );
          }),
        ]).finally(() => clearTimeout(guard));
        expect(answered.status).toBe(200);
        expect(answered.events.at(-1)?.type).toBe('RUN_FINISHED');
      } finally {
        await other.query('ROLLBACK').catch(() => undefined);
        await other.end();
      }
      // Both answers counted: each window's spend is the sum of its slots.
      const usage = await admin().budgets.get.query({ projectId: project.id });
      expect(usage.project).toEqual({ tokens: 2 * TOKENS_PER_ANSWER, costUsd: 0, runs: 2 });
      const member = usage.members.find((m) => m.user.id === project.users.MEMBER.id)!;
      expect([member.day.runs, member.month.tokens]).toEqual([2, 2 * TOKENS_PER_ANSWER]);
      const prisma = await getPrisma();
      const slots = () => prisma.agentSpend.count({ where: { projectId: project.id, userId: '', period: 'MONTH' } });
      expect(await slots()).toBe(2);
      // The open statement reads the sum: a budget below it refuses the next answer.
      await admin().budgets.set.mutate({ projectId: project.id, budgets: { PROJECT_MONTH: 2 * TOKENS_PER_ANSWER } });
      expect((await ask('third')).error?.code).toBe('BUDGET_EXCEEDED');
      await admin().budgets.set.mutate({ projectId: project.id, budgets: { PROJECT_MONTH: 1_000 } });
      // Nothing holds them now: the next end adds to a slot that exists.
      expect((await ask('fourth')).status).toBe(200);
      expect(await slots()).toBe(2);
      expect((await admin().budgets.get.query({ projectId: project.id })).project.runs).toBe(3);
    },
  );

  it('is set by admins and owners only, with amounts that make sense', async () => {
    const member = trpcClient(server.url, project.users.MEMBER.cookie).agent;
    expect(await errorCode(member.budgets.set.mutate({ projectId: project.id, budgets: { MEMBER_DAY: 5 } }))).toBe(
      'FORBIDDEN',
    );
    expect(await errorCode(member.budgets.get.query({ projectId: project.id }))).toBe('FORBIDDEN');
    for (const bad of [0, -1, Number.NaN, 1e13, 2.5]) {
      expect(
        await errorCode(admin().budgets.set.mutate({ projectId: project.id, budgets: { MEMBER_DAY: bad } })),
        String(bad),
      ).toBe('BAD_REQUEST');
    }
    expect(
      await errorCode(
        admin().budgets.set.mutate({ projectId: project.id, budgets: { OTHER: 5 } as unknown as { MEMBER_DAY: 5 } }),
      ),
    ).toBe('BAD_REQUEST');
    expect((await admin().budgets.get.query({ projectId: project.id })).budgets).toEqual([]);
  });
});
