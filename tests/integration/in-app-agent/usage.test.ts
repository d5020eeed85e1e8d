// Usage: every finished answer records its tokens and, when the model's prices are configured, its
// cost; the panel's view carries them on the run, and the review sums them per conversation, per
// day and per user. An answer stopped (or failed) while the model streamed records the completed
// model calls as reported plus an estimate for the call cut off, marked as estimated.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import {
  cancelRun,
  followRun,
  postAgent,
  startRunStream,
  textOf,
  userMessageBody,
  useScriptedModelEnv,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;

beforeAll(async () => {
  // The scripted model reports 11 input and 7 output tokens per answer.
  model = await startFakeOpenAI(() => ({ text: ['counted'] }));
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  server = await startTestServer();
  project = await createProject('Usage');
});

afterAll(async () => {
  await server?.close();
  await model?.close();
});

describe('usage and cost', () => {
  it('records tokens without prices, and tokens and cost with them, and sums them for review', async () => {
    useScriptedModelEnv(model.url, { AGENT_MODEL_PRICE_INPUT: '', AGENT_MODEL_PRICE_OUTPUT: '' });
    const unpriced = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('how much?'));
    expect(unpriced.events.at(-1)).toMatchObject({
      type: 'RUN_FINISHED',
      usage: [{ inputTokens: 11, outputTokens: 7 }],
    });
    expect((unpriced.events.at(-1) as { usage: Array<Record<string, unknown>> }).usage[0]).not.toHaveProperty(
      'costUsd',
    );

    // $3 per million input tokens, $15 per million output tokens.
    useScriptedModelEnv(model.url, { AGENT_MODEL_PRICE_INPUT: '3', AGENT_MODEL_PRICE_OUTPUT: '15' });
    const threadId = (unpriced.events[0] as { threadId: string }).threadId;
    const priced = await postAgent(
      server.url,
      project.id,
      project.users.MEMBER.cookie,
      userMessageBody('and now?', threadId),
    );
    const cost = (11 * 3 + 7 * 15) / 1_000_000;
    expect(priced.events.at(-1)).toMatchObject({ usage: [{ inputTokens: 11, outputTokens: 7, costUsd: cost }] });
    const runId = (priced.events[0] as { runId: string }).runId;
    expect(await (await getPrisma()).agentRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      inputTokens: 11,
      outputTokens: 7,
      costUsd: cost,
    });

    // The panel's view shows it on the run (live and after a reload alike).
    const shown = await trpcClient(server.url, project.users.MEMBER.cookie).agent.conversations.get.query({
      projectId: project.id,
      conversationId: threadId,
    });
    expect(shown.view.runs.map((r) => r.usage)).toEqual([
      expect.objectContaining({ inputTokens: 11, outputTokens: 7 }),
      expect.objectContaining({ inputTokens: 11, outputTokens: 7, costUsd: cost }),
    ]);

    // Review: per conversation, per day and per user.
    const review = trpcClient(server.url, project.users.ADMIN.cookie).agent.review;
    const list = await review.list.query({ projectId: project.id });
    expect(list.items.find((i) => i.id === threadId)?.usage).toEqual({
      inputTokens: 22,
      outputTokens: 14,
      costUsd: cost,
      estimated: false,
    });
    const usage = await review.usage.query({ projectId: project.id, days: 7 });
    expect(usage.total).toEqual({ runs: 2, inputTokens: 22, outputTokens: 14, costUsd: cost, estimated: false });
    expect(usage.byDay).toEqual([
      {
        day: new Date().toISOString().slice(0, 10),
        runs: 2,
        inputTokens: 22,
        outputTokens: 14,
        costUsd: cost,
        estimated: false,
      },
    ]);
    expect(usage.byUser).toEqual([
      {
        user: { id: project.users.MEMBER.id, name: project.users.MEMBER.name },
        runs: 2,
        inputTokens: 22,
        outputTokens: 14,
        costUsd: cost,
        estimated: false,
      },
    ]);
  });

  it('refuses half a price pair and a price that is not a number', async () => {
    const { parseEnv } = await import('@/server/env');
    expect(() => parseEnv({ AGENT_MODEL_PRICE_INPUT: '3' })).toThrow(
      /AGENT_MODEL_PRICE_OUTPUT: is required when AGENT_MODEL_PRICE_INPUT is set/,
    );
    expect(() => parseEnv({ AGENT_MODEL_PRICE_INPUT: '-1', AGENT_MODEL_PRICE_OUTPUT: '2' })).toThrow(
      /AGENT_MODEL_PRICE_INPUT: must be a non-negative decimal/,
    );
    expect(parseEnv({ AGENT_MODEL_PRICE_INPUT: '0.25', AGENT_MODEL_PRICE_OUTPUT: '1.25' })).toMatchObject({
      AGENT_MODEL_PRICE_INPUT: 0.25,
      AGENT_MODEL_PRICE_OUTPUT: 1.25,
    });
  });
});

describe('usage of an answer that did not finish', () => {
  // The answer's words: streamed, then the model holds the rest (it would go on) until the call is dropped.
  const WORDS = Array.from({ length: 12 }, (_, i) => `word${i} `);
  const streamedTokens = Math.ceil(WORDS.join('').length / 4);
  let slow: FakeServer;
  let turns: ScriptedTurn[] = [];

  beforeAll(async () => {
    slow = await startFakeOpenAI((_body, i) => turns[i] ?? { text: ['(no more turns)'] });
  });
  afterAll(async () => {
    await slow?.close();
  });

  it('records a stopped answer: the completed call as reported, the call cut off estimated, with its cost', async () => {
    // A tool call first (a completed call: 11 in, 7 out as the provider reports), then the slow answer.
    turns = [{ toolCalls: [{ name: 'list_issues', args: {} }] }, { text: WORDS, stallMs: 120_000 }];
    slow.requests.length = 0;
    useScriptedModelEnv(slow.url, { AGENT_MODEL_PRICE_INPUT: '3', AGENT_MODEL_PRICE_OUTPUT: '15' });
    const cookie = project.users.MEMBER.cookie;
    const deltas = (events: Array<{ event: { type: string } }>) =>
      events.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length;
    const partial = await startRunStream(
      server.url,
      project.id,
      cookie,
      userMessageBody('list the issues and explain'),
      (events) => deltas(events) >= WORDS.length,
    );
    const started = partial.events[0]!.event as { runId: string; threadId: string };
    const seen = partial.events.at(-1)!.id!;
    expect(await cancelRun(server.url, project.id, started.runId, cookie)).toMatchObject({ status: 202 });
    // The rest of the run, to its end (its row is stored before its watchers end).
    const rest = await followRun(server.url, project.id, started.runId, cookie, { after: seen });
    const end = rest.events.at(-1)?.event;
    expect(end).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    const usage = (end as { usage?: Array<Record<string, unknown>> }).usage?.[0];

    // Output: the completed call's 7, plus the words streamed before Stop (four characters a token).
    const outputTokens = 7 + streamedTokens;
    // Input: the completed call's 11, plus the prompt of the call cut off (the conversation, the
    // tool result and the tool definitions): of the order of its request's size in tokens.
    const inputTokens = usage?.inputTokens as number;
    const sent = JSON.stringify(slow.requests[1]).length;
    expect(inputTokens - 11).toBeGreaterThan(sent / 16);
    expect(inputTokens - 11).toBeLessThanOrEqual(Math.ceil(sent / 4));
    const costUsd = Math.round(((inputTokens * 3 + outputTokens * 15) / 1_000_000) * 1e8) / 1e8;
    expect(usage).toMatchObject({ outputTokens, costUsd, estimated: true, model: 'scripted-model' });

    const prisma = await getPrisma();
    expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: started.runId } })).toMatchObject({
      status: 'ABORTED',
      inputTokens,
      outputTokens,
      costUsd,
      usageEstimated: true,
    });
    // The replay (the panel after a reload) carries it on the run.
    const trpc = trpcClient(server.url, cookie);
    const shown = await trpc.agent.conversations.get.query({ projectId: project.id, conversationId: started.threadId });
    expect(shown.view.runs.at(-1)).toMatchObject({
      status: 'cancelled',
      usage: { inputTokens, outputTokens, costUsd, estimated: true },
    });
    // The review sums count it, marked as partly estimated.
    const review = trpcClient(server.url, project.users.ADMIN.cookie).agent.review;
    const list = await review.list.query({ projectId: project.id });
    expect(list.items.find((i) => i.id === started.threadId)?.usage).toEqual({
      inputTokens,
      outputTokens,
      costUsd,
      estimated: true,
    });
    const totals = await review.usage.query({ projectId: project.id, days: 7 });
    expect(totals.total.estimated).toBe(true);
  });

  it('records a failed answer after output (estimated), and nothing for one that failed before any', async () => {
    useScriptedModelEnv(slow.url, { AGENT_MODEL_PRICE_INPUT: '', AGENT_MODEL_PRICE_OUTPUT: '' });
    const prisma = await getPrisma();
    const cookie = project.users.MEMBER.cookie;

    turns = [{ text: WORDS, streamError: 'internal' }];
    slow.requests.length = 0;
    const broke = await postAgent(server.url, project.id, cookie, userMessageBody('explain'));
    expect(broke.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_ERROR' });
    expect(textOf(broke.events)).toBe(WORDS.join(''));
    const brokeRun = await prisma.agentRun.findUniqueOrThrow({
      where: { id: (broke.events[0] as { runId: string }).runId },
    });
    expect(brokeRun).toMatchObject({
      status: 'FAILED',
      outputTokens: streamedTokens,
      costUsd: null,
      usageEstimated: true,
    });
    expect(brokeRun.inputTokens).toBeGreaterThan(JSON.stringify(slow.requests[0]).length / 16);

    turns = [{ status: 503 }];
    slow.requests.length = 0;
    const refused = await postAgent(server.url, project.id, cookie, userMessageBody('explain'));
    expect(refused.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_OVERLOADED' });
    expect(
      await prisma.agentRun.findUniqueOrThrow({ where: { id: (refused.events[0] as { runId: string }).runId } }),
    ).toMatchObject({ status: 'FAILED', inputTokens: null, outputTokens: null, usageEstimated: false });
  });
});
