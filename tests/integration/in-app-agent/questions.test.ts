// Questions the assistant asks (`ask_user`) through the real route, MCP server and database: the
// run ends with a `user_question` interrupt carrying the question and its form, the answer (checked
// against the form on the server) is the call's result in the resumed run, declines and expiry are
// results too, answers come from any tab or instance, and replay equals what streamed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import { emptyView, foldEvents, openInterrupts } from '@/features/in-app-agent/fold';
import type { AgentEvent, Interrupt } from '@/features/in-app-agent/schema';
import { consumeResume } from '@/features/in-app-agent/server/human-in-the-loop';
import { runToolPolicy } from '@/features/in-app-agent/server/policy';
import { getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import {
  postAgent,
  textOf,
  types,
  userMessageBody,
  type AgentResponse,
  useScriptedModelEnv,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject, type TestUser } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { startInstance, type AppInstance } from '../../helpers/instances';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;
let turns: ScriptedTurn[] = [];

function script(...t: ScriptedTurn[]) {
  turns = t;
  model.requests.length = 0;
}

beforeAll(async () => {
  server = await startTestServer();
  model = await startFakeOpenAI((_b, i) => turns[i] ?? { text: ['(no more turns)'] });
  useScriptedModelEnv(model.url);
  project = await createProject('Questions');
  await createIssue(project.id, { title: 'Login fails on Safari' });
  await createIssue(project.id, { title: 'Login button misaligned' });
});

afterAll(async () => {
  await server?.close();
  await model?.close();
});

const WHICH_ISSUE = {
  message: 'Two issues are about the login. Which one should I close?',
  requestedSchema: {
    type: 'object',
    properties: {
      issue: {
        type: 'string',
        title: 'Issue',
        description: 'The issue to close.',
        enum: ['1', '2'],
        enumNames: ['#1 Login fails on Safari', '#2 Login button misaligned'],
      },
      note: { type: 'string', title: 'Resolution note', maxLength: 20 },
      notify: { type: 'boolean', title: 'Tell the reporter', default: false },
      days: { type: 'integer', title: 'Reopen after (days)', minimum: 1, maximum: 30 },
      contact: { type: 'string', title: 'Contact', format: 'email' },
    },
    required: ['issue'],
  },
} as const;

const member = () => project.users.MEMBER;
const threadOf = (res: AgentResponse) => (res.events[0] as { threadId: string }).threadId;
const runOf = (res: AgentResponse) => (res.events[0] as { runId: string }).runId;

function interruptsOf(res: AgentResponse): Interrupt[] {
  const fin = res.events.at(-1);
  if (fin?.type !== 'RUN_FINISHED' || fin.outcome?.type !== 'interrupt')
    throw new Error(`expected an interrupt, got ${JSON.stringify(fin)}`);
  return fin.outcome.interrupts;
}

function answerBody(threadId: string, answers: Array<{ id: string; payload?: unknown; cancelled?: boolean }>) {
  return {
    threadId,
    messages: [],
    resume: answers.map((a) => ({
      interruptId: a.id,
      status: a.cancelled ? 'cancelled' : 'resolved',
      ...(a.payload === undefined ? {} : { payload: a.payload }),
    })),
  };
}

/** What the model was sent as the result of `toolCallId` in its newest request. */
function resultSentToModel(toolCallId: string): unknown {
  const messages = model.requests.at(-1)!.messages as Array<{ role: string; tool_call_id?: string; content?: string }>;
  const m = messages.find((x) => x.role === 'tool' && x.tool_call_id === toolCallId);
  return m?.content === undefined ? undefined : JSON.parse(m.content);
}

async function expectReplayEqualsStream(user: TestUser, threadId: string, streamed: AgentEvent[]) {
  const trpc = trpcClient(server.url, user.cookie);
  const replay = await trpc.agent.conversations.get.query({ projectId: project.id, conversationId: threadId });
  expect(replay.view).toEqual(foldEvents(streamed, emptyView(threadId)));
  return replay.view;
}

/** Asks the scripted question; returns the first response, its thread and its one interrupt. */
async function ask(question: unknown = WHICH_ISSUE, after: ScriptedTurn = { text: ['Thanks.'] }) {
  script(
    { text: ['Let me check.'], toolCalls: [{ name: 'ask_user', args: question as Record<string, unknown> }] },
    after,
  );
  const first = await postAgent(server.url, project.id, member().cookie, userMessageBody('close the login issue'));
  const [interrupt] = interruptsOf(first);
  return { first, threadId: threadOf(first), interrupt: interrupt! };
}

describe('ask_user', () => {
  it('ends the run with a question interrupt, then resumes with the accepted answer as the call result', async () => {
    const { first, threadId, interrupt } = await ask();
    expect(interrupt).toMatchObject({
      reason: 'user_question',
      message: WHICH_ISSUE.message,
      metadata: { requestedSchema: WHICH_ISSUE.requestedSchema },
    });
    // The answer's JSON Schema: accept or decline, and the question's own form as the content.
    expect(interrupt.responseSchema).toMatchObject({
      required: ['action'],
      properties: { action: { enum: ['accept', 'decline'] }, content: WHICH_ISSUE.requestedSchema },
    });
    expect(Date.parse(interrupt.expiresAt!)).toBeGreaterThan(Date.now());
    // The call waits: no result yet, the run is INTERRUPTED and the row holds the question.
    expect(first.events.some((e) => e.type === 'TOOL_CALL_RESULT')).toBe(false);
    const prisma = await getPrisma();
    expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: runOf(first) } })).toMatchObject({
      status: 'INTERRUPTED',
    });
    expect(await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id: interrupt.id } })).toMatchObject({
      kind: 'user_question',
      toolName: 'ask_user',
      status: 'PENDING',
      args: WHICH_ISSUE,
    });

    const content = { issue: '2', notify: true, days: 7, contact: 'ana@example.com' };
    const second = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadId, [{ id: interrupt.id, payload: { action: 'accept', content } }]),
    );
    expect(second.status).toBe(200);
    expect(second.events[0]).toMatchObject({ type: 'RUN_STARTED', parentRunId: runOf(first) });
    expect(second.events).toContainEqual({
      type: 'CUSTOM',
      name: CUSTOM_EVENTS.questionAnswered,
      value: { toolCallId: interrupt.toolCallId, action: 'accept', content },
    });
    const result = second.events.find((e) => e.type === 'TOOL_CALL_RESULT') as { toolCallId: string; content: string };
    expect(result.toolCallId).toBe(interrupt.toolCallId);
    expect(JSON.parse(result.content)).toEqual({ action: 'accept', content });
    // The model got the answer as the tool's result, and went on.
    expect(resultSentToModel(interrupt.toolCallId!)).toEqual({ action: 'accept', content });
    expect(textOf(second.events)).toBe('Thanks.');
    expect(await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id: interrupt.id } })).toMatchObject({
      status: 'CONSUMED',
      answer: content,
    });
    const view = await expectReplayEqualsStream(member(), threadId, [...first.events, ...second.events]);
    expect(view.answers?.[interrupt.toolCallId!]).toEqual({
      toolCallId: interrupt.toolCallId,
      action: 'accept',
      content,
    });
    expect(openInterrupts(view)).toEqual([]);
  });

  it('refuses an answer that does not fit the form, saying which field and why, and keeps the question open', async () => {
    const { threadId, interrupt } = await ask();
    const refused = async (content: unknown) => {
      const res = await postAgent(
        server.url,
        project.id,
        member().cookie,
        answerBody(threadId, [{ id: interrupt.id, payload: { action: 'accept', content } }]),
      );
      expect(res.status).toBe(400);
      expect(res.error?.code).toBe('INTERRUPT_INVALID_ANSWER');
      return res.error!.message;
    };
    expect(await refused({ issue: '3' })).toContain('Issue: Choose one of the options.');
    expect(await refused({})).toContain('Issue: This is required.');
    expect(await refused({ issue: '1', note: 'x'.repeat(21) })).toContain(
      'Resolution note: Enter at most 20 characters',
    );
    expect(await refused({ issue: '1', notify: 'yes' })).toContain('Tell the reporter: Choose yes or no.');
    expect(await refused({ issue: '1', days: 2.5 })).toContain('Reopen after (days): Enter a whole number.');
    expect(await refused({ issue: '1', days: 31 })).toContain('Reopen after (days): Enter 30 or less.');
    expect(await refused({ issue: '1', contact: 'not-an-address' })).toContain('Contact: Enter an email address.');
    expect(await refused({ issue: '1', extra: 'x' })).toContain('extra: This was not asked for.');
    // A malformed payload is not an answer at all.
    const malformed = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadId, [{ id: interrupt.id, payload: { approved: true } }]),
    );
    expect(malformed.status).toBe(400);
    expect(malformed.error?.code).toBe('INVALID_REQUEST');
    const prisma = await getPrisma();
    expect(await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id: interrupt.id } })).toMatchObject({
      status: 'PENDING',
      answer: null,
    });
    // Nothing was started by the refused answers; a fitting one still goes through.
    const ok = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadId, [{ id: interrupt.id, payload: { action: 'accept', content: { issue: '1' } } }]),
    );
    expect(ok.status).toBe(200);
    expect(types(ok.events).at(-1)).toBe('RUN_FINISHED');
  });

  it('gives a decline (or a cancelled answer) to the model as the call result', async () => {
    for (const answer of [{ payload: { action: 'decline' } }, { cancelled: true }]) {
      const { first, threadId, interrupt } = await ask(WHICH_ISSUE, { text: ['I will not close anything.'] });
      const second = await postAgent(
        server.url,
        project.id,
        member().cookie,
        answerBody(threadId, [{ id: interrupt.id, ...answer }]),
      );
      expect(second.status).toBe(200);
      expect(second.events).toContainEqual({
        type: 'CUSTOM',
        name: CUSTOM_EVENTS.questionAnswered,
        value: { toolCallId: interrupt.toolCallId, action: 'decline' },
      });
      expect(resultSentToModel(interrupt.toolCallId!)).toMatchObject({
        action: 'decline',
        message: expect.stringContaining('declined'),
      });
      const prisma = await getPrisma();
      expect(await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id: interrupt.id } })).toMatchObject({
        status: 'REJECTED',
        answer: null,
      });
      await expectReplayEqualsStream(member(), threadId, [...first.events, ...second.events]);
    }
  });

  it('tells the model the question expired when the user moved on without answering', async () => {
    const { first, threadId, interrupt } = await ask();
    const prisma = await getPrisma();
    await prisma.agentPendingApproval.update({
      where: { id: interrupt.id },
      data: { expiresAt: new Date(Date.now() - 1_000) },
    });
    const late = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadId, [{ id: interrupt.id, payload: { action: 'accept', content: { issue: '1' } } }]),
    );
    expect(late.status).toBe(410);
    expect(late.error?.code).toBe('INTERRUPT_EXPIRED');

    script({ text: ['You did not say which one, so I closed nothing.'] });
    const next = await postAgent(server.url, project.id, member().cookie, userMessageBody('never mind', threadId));
    expect(next.events).toContainEqual({
      type: 'CUSTOM',
      name: CUSTOM_EVENTS.questionAnswered,
      value: { toolCallId: interrupt.toolCallId, action: 'expired' },
    });
    expect(resultSentToModel(interrupt.toolCallId!)).toMatchObject({
      action: 'expired',
      message: expect.stringContaining('did not answer'),
    });
    expect(await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id: interrupt.id } })).toMatchObject({
      status: 'EXPIRED',
    });
    await expectReplayEqualsStream(member(), threadId, [...first.events, ...next.events]);
  });

  it('answers a nested or unsupported form with a tool error the model can correct', async () => {
    script(
      {
        toolCalls: [
          {
            name: 'ask_user',
            args: {
              message: 'Where?',
              requestedSchema: {
                type: 'object',
                properties: { address: { type: 'object', properties: { city: { type: 'string' } } } },
              },
            },
          },
        ],
      },
      { toolCalls: [{ name: 'ask_user', args: WHICH_ISSUE }] },
    );
    const res = await postAgent(server.url, project.id, member().cookie, userMessageBody('ask me something'));
    const [bad, good] = res.events.filter(
      (e): e is Extract<AgentEvent, { type: 'TOOL_CALL_START' }> => e.type === 'TOOL_CALL_START',
    );
    const badResult = res.events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === bad!.toolCallId) as {
      content: string;
    };
    const error = JSON.parse(badResult.content) as { isError: boolean; error: string };
    expect(error.isError).toBe(true);
    expect(error.error).toMatch(/flat field/);
    // The model saw why, asked again with a flat form, and that one waits for the user.
    expect(JSON.stringify(model.requests[1]!.messages)).toContain('flat field');
    const [interrupt] = interruptsOf(res);
    expect(interrupt).toMatchObject({ reason: 'user_question', toolCallId: good!.toolCallId });
  });

  it('holds an approval and a question of one step as one batch, answered together', async () => {
    script(
      {
        toolCalls: [
          { name: 'create_issue', args: { title: 'Mixed batch' } },
          { name: 'ask_user', args: WHICH_ISSUE },
        ],
      },
      { text: ['Both done.'] },
    );
    const first = await postAgent(server.url, project.id, member().cookie, userMessageBody('two things'));
    const threadId = threadOf(first);
    const interrupts = interruptsOf(first);
    expect(interrupts.map((i) => i.reason).sort()).toEqual(['tool_approval', 'user_question']);
    const approval = interrupts.find((i) => i.reason === 'tool_approval')!;
    const question = interrupts.find((i) => i.reason === 'user_question')!;
    const partial = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadId, [{ id: question.id, payload: { action: 'accept', content: { issue: '1' } } }]),
    );
    expect(partial.status).toBe(400);
    expect(partial.error?.code).toBe('INTERRUPT_ANSWER_MISSING');
    const both = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadId, [
        { id: approval.id, payload: { approved: true } },
        { id: question.id, payload: { action: 'accept', content: { issue: '1' } } },
      ]),
    );
    expect(both.status).toBe(200);
    const results = both.events.filter((e) => e.type === 'TOOL_CALL_RESULT') as Array<{
      toolCallId: string;
      content: string;
    }>;
    expect(results.map((r) => r.toolCallId).sort()).toEqual([approval.toolCallId, question.toolCallId].sort());
    expect(JSON.parse(results.find((r) => r.toolCallId === question.toolCallId)!.content)).toEqual({
      action: 'accept',
      content: { issue: '1' },
    });
    const prisma = await getPrisma();
    expect(await prisma.issue.count({ where: { projectId: project.id, title: 'Mixed batch' } })).toBe(1);
    await expectReplayEqualsStream(member(), threadId, [...first.events, ...both.events]);
  });

  it('is answered from another tab once: the second answer is refused', async () => {
    const { threadId } = await ask();
    // Another tab reads the conversation (the question is open there) and answers it.
    const trpc = trpcClient(server.url, member().cookie);
    const loaded = await trpc.agent.conversations.get.query({ projectId: project.id, conversationId: threadId });
    const [open] = openInterrupts(loaded.view);
    expect(open).toMatchObject({ reason: 'user_question', message: WHICH_ISSUE.message });
    const answer = answerBody(threadId, [{ id: open!.id, payload: { action: 'accept', content: { issue: '2' } } }]);
    const fromOtherTab = await postAgent(server.url, project.id, member().cookie, answer);
    expect(fromOtherTab.status).toBe(200);
    const again = await postAgent(server.url, project.id, member().cookie, answer);
    expect(again.status).toBe(409);
    expect(again.error?.code).toBe('INTERRUPT_ALREADY_DECIDED');
    // Someone else cannot answer (or learn about) it.
    const other = await postAgent(server.url, project.id, project.users.ADMIN.cookie, answer);
    expect(other.status).toBe(404);
  });

  it('gives the stored answer when the run that had it stopped before the result', async () => {
    const { threadId, interrupt } = await ask();
    const prisma = await getPrisma();
    // The answer is decided and stored, then the process stops before the resumed run streams it.
    const policy = runToolPolicy({ role: 'MEMBER', isAdmin: false });
    await consumeResume(prisma, {
      conversationId: threadId,
      userId: member().id,
      policy,
      entries: [
        { interruptId: interrupt.id, status: 'resolved', payload: { action: 'accept', content: { issue: '1' } } },
      ],
    });
    script({ text: ['Closing #1.'] });
    const next = await postAgent(server.url, project.id, member().cookie, userMessageBody('go on', threadId));
    expect(next.events).toContainEqual({
      type: 'CUSTOM',
      name: CUSTOM_EVENTS.questionAnswered,
      value: { toolCallId: interrupt.toolCallId, action: 'accept', content: { issue: '1' } },
    });
    expect(resultSentToModel(interrupt.toolCallId!)).toEqual({ action: 'accept', content: { issue: '1' } });
  });
});

describe('the demo model asks when a request is ambiguous', () => {
  beforeAll(() => {
    process.env.AGENT_MODEL_PROVIDER = 'demo';
    resetEnvCache();
  });
  afterAll(() => useScriptedModelEnv(model.url));

  it('"assign issue 1": lists the members, asks whom, then assigns the chosen one once approved', async () => {
    const res = await postAgent(server.url, project.id, member().cookie, userMessageBody('assign issue 1'));
    const threadId = threadOf(res);
    const [question] = interruptsOf(res);
    const schema = (
      question!.metadata as { requestedSchema: { properties: { assignee: { enum: string[]; enumNames: string[] } } } }
    ).requestedSchema;
    const users = Object.values(project.users);
    expect([...schema.properties.assignee.enum].sort()).toEqual(users.map((u) => u.id).sort());
    const admin = project.users.ADMIN;
    const answered = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadId, [{ id: question!.id, payload: { action: 'accept', content: { assignee: admin.id } } }]),
    );
    const [approval] = interruptsOf(answered);
    expect(approval).toMatchObject({
      reason: 'tool_approval',
      metadata: { toolName: 'assign_issue', args: { number: 1, assignee: admin.id } },
    });
    const done = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadId, [{ id: approval!.id, payload: { approved: true } }]),
    );
    expect(textOf(done.events)).toContain('Assigned issue **#1**');
    const prisma = await getPrisma();
    expect(
      await prisma.issue.findFirstOrThrow({
        where: { projectId: project.id, number: 1 },
        select: { assigneeId: true },
      }),
    ).toEqual({ assigneeId: admin.id });
  });

  it('"create an issue": asks for the title and priority; a decline creates nothing', async () => {
    const res = await postAgent(server.url, project.id, member().cookie, userMessageBody('create an issue'));
    const [question] = interruptsOf(res);
    expect(question!.metadata).toMatchObject({
      requestedSchema: { required: ['title', 'priority'], properties: { title: { minLength: 3 } } },
    });
    const declined = await postAgent(
      server.url,
      project.id,
      member().cookie,
      answerBody(threadOf(res), [{ id: question!.id, payload: { action: 'decline' } }]),
    );
    expect(textOf(declined.events)).toBe('All right, I did not create an issue.');
  });
});

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

describe.skipIf(!onPostgres)('another instance', () => {
  let other: AppInstance;
  beforeAll(async () => {
    other = await startInstance({
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: model.url,
      OPENAI_COMPATIBLE_MODEL: 'scripted-model',
      AGENT_MODEL_MAX_RETRIES: '0',
      AGENT_RATE_LIMIT_PER_MINUTE: '1000',
      AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
      AGENT_MCP_URL: undefined,
      NEXTAUTH_URL: undefined,
    });
  }, 120_000);
  afterAll(async () => {
    await other?.kill('SIGKILL');
  });

  it('answers a question asked on one instance from another', async () => {
    const { first, threadId, interrupt } = await ask();
    const answered = await postAgent(
      other.url,
      project.id,
      member().cookie,
      answerBody(threadId, [{ id: interrupt.id, payload: { action: 'accept', content: { issue: '2' } } }]),
    );
    expect(answered.status).toBe(200);
    expect(resultSentToModel(interrupt.toolCallId!)).toEqual({ action: 'accept', content: { issue: '2' } });
    await expectReplayEqualsStream(member(), threadId, [...first.events, ...answered.events]);
  });
});
