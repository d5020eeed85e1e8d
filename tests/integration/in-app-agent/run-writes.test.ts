// What a run stores, through the real route: a model step that calls tools is stored as the run's
// checkpoint before they run (what a takeover goes on from); the step that ends the answer has no
// checkpoint of its own, its rows go with the statement that ends the run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { getPrisma } from '@/server/db';
import { postAgent, userMessageBody } from '../../helpers/agent';
import { type KeywordAgent, startKeywordAgent } from '../../helpers/keyword-agent';

// "read please" lists the issues first, then answers; anything else is answered at once.
let agent: KeywordAgent;

beforeAll(async () => {
  agent = await startKeywordAgent('Run writes');
});

afterAll(async () => {
  await agent?.close();
});

async function ask(text: string) {
  const { server, project } = agent;
  const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody(text));
  expect(res.status).toBe(200);
  expect(res.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
  return (res.events[0] as Extract<AgentEvent, { type: 'RUN_STARTED' }>).runId;
}

const runRow = async (runId: string) =>
  (await getPrisma()).agentRun.findUniqueOrThrow({
    where: { id: runId },
    select: { status: true, checkpointPos: true, checkpointSteps: true },
  });

const storedTypes = async (runId: string) =>
  (await (await getPrisma()).agentEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' } })).map(
    (r) => (r.payload as { type: string; role?: string }).type,
  );

describe('what a run stores', () => {
  it('a plain answer: no checkpoint, every row of it stored by the end', async () => {
    const runId = await ask('hello');
    // RUN_FINISHED is sent once the end is stored: nothing of the run is written after it.
    expect(await runRow(runId)).toEqual({ status: 'COMPLETED', checkpointPos: null, checkpointSteps: 0 });
    expect(await storedTypes(runId)).toEqual(['RUN_STARTED', 'CUSTOM', 'TEXT_MESSAGE', 'TEXT_MESSAGE', 'RUN_FINISHED']);
  });

  it('a step that calls a tool is stored before the tool runs; the answer after it goes with the end', async () => {
    const runId = await ask('read please');
    expect(await runRow(runId)).toMatchObject({
      status: 'COMPLETED',
      checkpointPos: expect.any(Number),
      checkpointSteps: 1,
    });
    expect(await storedTypes(runId)).toEqual([
      'RUN_STARTED',
      'CUSTOM',
      'TEXT_MESSAGE',
      'TOOL_CALL',
      'TOOL_CALL_RESULT',
      'TEXT_MESSAGE',
      'RUN_FINISHED',
    ]);
  });
});
