// Usage: every finished answer records its tokens and, when the model's prices are configured, its
// cost; the panel's view carries them on the run, and the review sums them per conversation, per
// day and per user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { postAgent, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer } from '../../helpers/fake-models';
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
    });
    const usage = await review.usage.query({ projectId: project.id, days: 7 });
    expect(usage.total).toEqual({ runs: 2, inputTokens: 22, outputTokens: 14, costUsd: cost });
    expect(usage.byDay).toEqual([
      { day: new Date().toISOString().slice(0, 10), runs: 2, inputTokens: 22, outputTokens: 14, costUsd: cost },
    ]);
    expect(usage.byUser).toEqual([
      {
        user: { id: project.users.MEMBER.id, name: project.users.MEMBER.name },
        runs: 2,
        inputTokens: 22,
        outputTokens: 14,
        costUsd: cost,
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
