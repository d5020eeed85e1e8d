// Bedrock and OpenAI-compatible providers through the real route, against local fake servers that
// speak their real wire formats (ConverseStream event-stream framing; chat-completions SSE).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import { describeError } from '@/features/in-app-agent/components/errors';
import { type AgentResponse, postAgent, textOf, types, userMessageBody } from '../../helpers/agent';
import { startFakeBedrock, startFakeOpenAI, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let project: TestProject;
let turns: ScriptedTurn[] = [];
let turnIndex = 0;
const script = (...t: ScriptedTurn[]) => {
  turns = t;
  turnIndex = 0;
};
const nextTurn = () => turns[turnIndex++] ?? { text: ['(end)'] };

beforeAll(async () => {
  server = await startTestServer();
  project = await createProject('Providers');
  await createIssue(project.id, { title: 'Payment page crashes' });
  process.env.AGENT_MODEL_MAX_RETRIES = '0';
});
afterAll(async () => {
  await server?.close();
});

const runIdOf = (res: AgentResponse) => (res.events[0] as { runId: string }).runId;

/** What the panel says for the run's error (its wording for the code, with the server's message). */
function panelWording(res: AgentResponse): string {
  const end = res.events.at(-1);
  if (end?.type !== 'RUN_ERROR') throw new Error(`the run did not fail: ${end?.type}`);
  return describeError(end.code, end.message).message;
}

function useEnv(vars: Record<string, string | undefined>) {
  for (const k of [
    'AGENT_MODEL_PROVIDER',
    'AWS_REGION',
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'BEDROCK_BASE_URL',
    'BEDROCK_MODEL_ID',
    'OPENAI_COMPATIBLE_BASE_URL',
    'OPENAI_COMPATIBLE_MODEL',
    'OPENAI_COMPATIBLE_API_KEY',
  ]) {
    delete process.env[k];
  }
  for (const [k, v] of Object.entries(vars)) if (v !== undefined) process.env[k] = v;
  resetEnvCache();
}

describe('Amazon Bedrock (ConverseStream)', () => {
  let bedrock: Awaited<ReturnType<typeof startFakeBedrock>>;
  beforeAll(async () => {
    bedrock = await startFakeBedrock(nextTurn);
    // Bedrock is the default provider when AWS credentials are present.
    useEnv({
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret-example',
      BEDROCK_BASE_URL: bedrock.url,
      BEDROCK_MODEL_ID: 'anthropic.claude-test',
    });
  });
  afterAll(() => bedrock.close());

  it('streams text and a tool call, signs requests, and names the model', async () => {
    bedrock.requests.length = 0;
    script(
      { text: ['Checking.'], toolCalls: [{ name: 'list_issues', args: { status: 'OPEN' } }] },
      { text: ['One ', 'issue is open.'] },
    );
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('open issues?'));
    expect(types(res.events).at(-1)).toBe('RUN_FINISHED');
    expect(textOf(res.events)).toBe('Checking.One issue is open.');
    const result = res.events.find((e) => e.type === 'TOOL_CALL_RESULT') as { content: string };
    expect(result.content).toContain('Payment page crashes');
    expect(res.events.find((e) => e.type === 'CUSTOM')).toMatchObject({
      value: { provider: 'bedrock', modelId: 'anthropic.claude-test', demo: false },
    });
    expect(bedrock.authorization[0]).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\//);
    expect(JSON.stringify(bedrock.requests[1])).toContain('Payment page crashes');
    const prisma = await getPrisma();
    const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: (res.events[0] as { runId: string }).runId } });
    expect(run.modelId).toBe('anthropic.claude-test');
  });

  it('turns throttling into a clear RUN_ERROR, not a hang', async () => {
    script({ status: 429 });
    const started = Date.now();
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
    expect(res.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_RATE_LIMITED' });
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('turns an in-stream exception into RUN_ERROR and keeps the text already streamed', async () => {
    script({ text: ['Partial answer'], streamError: 'throttling' });
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
    expect(res.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_RATE_LIMITED' });
    expect(textOf(res.events)).toBe('Partial answer');
    const prisma = await getPrisma();
    const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: (res.events[0] as { runId: string }).runId } });
    expect(run).toMatchObject({ status: 'FAILED', errorCode: 'MODEL_RATE_LIMITED' });

    script({ text: ['Partial'], streamError: 'internal' });
    const internal = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
    expect(internal.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_ERROR' });
  });

  it('says the provider is overloaded when Bedrock answers ServiceUnavailableException, before or during the answer', async () => {
    const prisma = await getPrisma();
    script({ status: 503 });
    const refused = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
    expect(refused.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_OVERLOADED' });
    const refusedRun = await prisma.agentRun.findUniqueOrThrow({ where: { id: runIdOf(refused) } });
    expect(refusedRun).toMatchObject({ status: 'FAILED', errorCode: 'MODEL_OVERLOADED' });
    expect(panelWording(refused)).toMatch(/overloaded/i);
    expect(panelWording(refused)).not.toMatch(/reach/i);

    // In the stream: the exception frame carries only its message ("Bedrock is unable to process…").
    script({ text: ['Partial answer'], streamError: 'unavailable' });
    const cut = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
    expect(cut.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_OVERLOADED' });
    expect(textOf(cut.events)).toBe('Partial answer');
    const cutRun = await prisma.agentRun.findUniqueOrThrow({ where: { id: runIdOf(cut) } });
    expect(cutRun).toMatchObject({ status: 'FAILED', errorCode: 'MODEL_OVERLOADED' });
  });
});

describe('OpenAI-compatible (chat completions SSE)', () => {
  let openai: Awaited<ReturnType<typeof startFakeOpenAI>>;
  beforeAll(async () => {
    openai = await startFakeOpenAI(nextTurn);
    useEnv({
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: openai.url,
      OPENAI_COMPATIBLE_MODEL: 'llama3.1',
      OPENAI_COMPATIBLE_API_KEY: 'sk-local',
    });
  });
  afterAll(() => openai.close());

  it('streams text and tool calls and sends the tools the user may use', async () => {
    openai.requests.length = 0;
    script({ toolCalls: [{ name: 'get_issue', args: { number: 1 } }] }, { text: ['It ', 'crashes.'] });
    const res = await postAgent(server.url, project.id, project.users.VIEWER.cookie, userMessageBody('issue 1?'));
    expect(types(res.events).at(-1)).toBe('RUN_FINISHED');
    expect(textOf(res.events)).toBe('It crashes.');
    const tools = (openai.requests[0]!.tools as Array<{ function: { name: string } }>)
      .map((t) => t.function.name)
      .sort();
    // A viewer gets read tools only: no tool the role could not use by hand.
    expect(tools).toContain('get_issue');
    expect(tools).toContain('navigate');
    expect(tools).not.toContain('create_issue');
    expect(tools).not.toContain('delete_issue');
    expect(tools).not.toContain('notify_webhook');
    expect(openai.requests[0]!.model).toBe('llama3.1');
  });

  it("lists the issues assigned to no one, from a call with a strict schema's nulls", async () => {
    // The runtime sends this provider every field as required and nullable, and reads a null back as
    // "left out": `assignee: null` alone would list every issue.
    await createIssue(project.id, { title: 'Checkout times out', assigneeId: project.users.MEMBER.id });
    script(
      {
        toolCalls: [
          {
            name: 'list_issues',
            args: {
              status: null,
              priority: null,
              assignee: null,
              unassigned: true,
              label: null,
              page: null,
              pageSize: null,
            },
          },
        ],
      },
      { text: ['One issue has no one.'] },
    );
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('unassigned?'));
    expect(types(res.events).at(-1)).toBe('RUN_FINISHED');
    const result = res.events.find((e) => e.type === 'TOOL_CALL_RESULT') as { content: string };
    expect(result.content).toContain('Payment page crashes');
    expect(result.content).not.toContain('Checkout times out');
  });

  it('turns a server error into RUN_ERROR MODEL_ERROR', async () => {
    script({ status: 500 });
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
    expect(res.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_ERROR' });
  });

  it('says the provider is overloaded on 503 and 529, also once the retries are used up', async () => {
    for (const status of [503, 529]) {
      script({ status });
      const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
      expect(res.events.at(-1), `status ${status}`).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_OVERLOADED' });
      expect(panelWording(res)).toMatch(/overloaded/i);
    }
    // With retries the provider's client gives up with an error wrapping the last answer.
    process.env.AGENT_MODEL_MAX_RETRIES = '1';
    resetEnvCache();
    try {
      openai.requests.length = 0;
      script({ status: 503 }, { status: 503 });
      const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
      expect(openai.requests).toHaveLength(2);
      expect(res.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_OVERLOADED' });
    } finally {
      process.env.AGENT_MODEL_MAX_RETRIES = '0';
      resetEnvCache();
    }
  });

  it('fails clearly when the endpoint cannot be reached', async () => {
    // A port that was just free: nothing listens there.
    const probe = http.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
    useEnv({
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: `http://127.0.0.1:${port}/v1`,
      OPENAI_COMPATIBLE_MODEL: 'x',
    });
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi'));
    expect(res.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_UNAVAILABLE' });
  });
});

describe('demo model (default without credentials)', () => {
  it('answers offline, calls real tools, and says how to configure a real model', async () => {
    useEnv({});
    const list = await postAgent(
      server.url,
      project.id,
      project.users.MEMBER.cookie,
      userMessageBody('list open issues'),
    );
    expect(list.events.find((e) => e.type === 'CUSTOM')).toMatchObject({ value: { provider: 'demo', demo: true } });
    expect(list.events.some((e) => e.type === 'TOOL_CALL_START' && e.toolCallName === 'list_issues')).toBe(true);
    expect(textOf(list.events)).toContain('Payment page crashes');
    await createIssue(project.id, { title: 'Refunds are late', assigneeId: project.users.MEMBER.id });
    const unassigned = await postAgent(
      server.url,
      project.id,
      project.users.MEMBER.cookie,
      userMessageBody('list unassigned issues'),
    );
    expect(unassigned.events.find((e) => e.type === 'TOOL_CALL_ARGS')).toMatchObject({
      delta: JSON.stringify({ status: 'OPEN', unassigned: true }),
    });
    expect(textOf(unassigned.events)).toContain('Payment page crashes');
    expect(textOf(unassigned.events)).not.toContain('Refunds are late');
    const other = await postAgent(
      server.url,
      project.id,
      project.users.MEMBER.cookie,
      userMessageBody('what is the meaning of life?'),
    );
    expect(textOf(other.events)).toContain('demo model');
    expect(textOf(other.events)).toContain('OPENAI_COMPATIBLE_BASE_URL=http://127.0.0.1:11434/v1');
    expect(textOf(other.events)).toContain('AGENT_MODEL_PROVIDER');
  });

  it('holds "close issues 1 and 2" as one batch: one approval per call', async () => {
    useEnv({});
    await createIssue(project.id, { title: 'Second issue for the batch' });
    const body = userMessageBody('close issues 1 and 2');
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, body);
    const calls = res.events.filter((e) => e.type === 'TOOL_CALL_START');
    expect(calls.map((e) => e.type === 'TOOL_CALL_START' && e.toolCallName)).toEqual(['close_issue', 'close_issue']);
    const end = res.events.at(-1);
    expect(end?.type).toBe('RUN_FINISHED');
    const interrupts = end?.type === 'RUN_FINISHED' && end.outcome?.type === 'interrupt' ? end.outcome.interrupts : [];
    expect(interrupts.map((i) => (i.metadata as { args?: unknown }).args)).toEqual([{ number: 1 }, { number: 2 }]);
  });
});
