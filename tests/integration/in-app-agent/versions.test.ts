// Versions of a turn (edit the last message, regenerate the last answer) through the real routes,
// and what keeps a request's cost independent of the conversation's age: the model's history is
// the shown branch only, read as far back as the context budget reaches (the data-flow guard
// still remembers what was read before), the replay comes in pages, and a conversation has a size
// limit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '@/features/in-app-agent/constants';
import { historyWindow } from '@/features/in-app-agent/server/persistence';
import { getPrisma } from '@/server/db';
import {
  cancelRun,
  followRun,
  postAgent,
  startRunStream,
  userMessageBody,
  useScriptedModelEnv,
  type AgentResponse,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;
let reply: (body: Record<string, unknown>) => ScriptedTurn = () => ({ text: ['ok'] });

beforeAll(async () => {
  model = await startFakeOpenAI((body) => reply(body));
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  useScriptedModelEnv(model.url);
  server = await startTestServer();
  project = await createProject('Versions');
  await createIssue(project.id, { title: 'Outside report', body: 'written through a key' });
});

afterAll(async () => {
  await server?.close();
  await model?.close();
});

const member = () => project.users.MEMBER;
const trpc = () => trpcClient(server.url, member().cookie);
const runIdOf = (r: AgentResponse) => (r.events[0] as { runId: string }).runId;
/** The model answers with the user's last message, so every answer says which question it saw. */
const echo = (body: Record<string, unknown>): ScriptedTurn => {
  const messages = body.messages as Array<{ role: string; content?: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user');
  return { text: [`answer to ${String(last?.content)}`] };
};
/** The user and assistant texts the model was sent in its last request. */
const sentToModel = () =>
  (model.requests.at(-1)!.messages as Array<{ role: string; content?: unknown }>)
    .filter((m) => m.role === 'user' || m.role === 'assistant')
    .map((m) => `${m.role}: ${String(m.content ?? '')}`);
const texts = (view: { messages: Array<{ role: string; content?: string }> }) =>
  view.messages.filter((m) => m.role !== 'tool').map((m) => `${m.role}: ${m.content}`);

describe('edit and regenerate', () => {
  it('keeps every version, shows and sends only the selected branch, and switches between them', async () => {
    reply = echo;
    const first = await postAgent(server.url, project.id, member().cookie, userMessageBody('one'));
    const threadId = (first.events[0] as { threadId: string }).threadId;
    const second = await postAgent(server.url, project.id, member().cookie, userMessageBody('two', threadId));
    // Regenerate the last answer: the same question again, the old answer not in the history.
    const regenerated = await postAgent(server.url, project.id, member().cookie, {
      threadId,
      messages: [],
      forwardedProps: { version: { of: runIdOf(second) } },
    });
    expect(regenerated.status).toBe(200);
    expect(sentToModel()).toEqual(['user: one', 'assistant: answer to one', 'user: two']);
    // Edit the last message: the edited question, the replaced turn nowhere in the history.
    const edited = await postAgent(server.url, project.id, member().cookie, {
      ...userMessageBody('two, edited', threadId),
      forwardedProps: { version: { of: runIdOf(regenerated) } },
    });
    expect(sentToModel()).toEqual(['user: one', 'assistant: answer to one', 'user: two, edited']);

    let shown = await trpc().agent.conversations.get.query({ projectId: project.id, conversationId: threadId });
    expect(texts(shown.view)).toEqual([
      'user: one',
      'assistant: answer to one',
      'user: two, edited',
      'assistant: answer to two, edited',
    ]);
    const ids = [runIdOf(second), runIdOf(regenerated), runIdOf(edited)];
    expect(shown.view.versions).toEqual({ [runIdOf(edited)]: { index: 3, count: 3, runIds: ids } });

    // Back to the first version of the turn: shown, and the next message follows it.
    await trpc().agent.conversations.selectVersion.mutate({
      projectId: project.id,
      conversationId: threadId,
      runId: runIdOf(second),
    });
    shown = await trpc().agent.conversations.get.query({ projectId: project.id, conversationId: threadId });
    expect(texts(shown.view)).toEqual([
      'user: one',
      'assistant: answer to one',
      'user: two',
      'assistant: answer to two',
    ]);
    expect(shown.view.versions?.[runIdOf(second)]).toMatchObject({ index: 1, count: 3 });
    await postAgent(server.url, project.id, member().cookie, userMessageBody('three', threadId));
    expect(sentToModel()).toEqual([
      'user: one',
      'assistant: answer to one',
      'user: two',
      'assistant: answer to two',
      'user: three',
    ]);

    // The review export holds every version; review shows the selected one.
    const exported = await trpcClient(server.url, project.users.ADMIN.cookie).agent.review.export.query({
      projectId: project.id,
      conversationId: threadId,
    });
    const stored = exported.events
      .filter((e) => e.type === 'TEXT_MESSAGE')
      .map((e) => (e as { content: string }).content);
    expect(stored).toEqual(expect.arrayContaining(['two', 'two, edited', 'answer to two', 'answer to two, edited']));
    expect(texts(exported.view).at(-1)).toBe('assistant: answer to three');
  });

  it('asks a failed answer again in place: the question once, to the model and in the conversation', async () => {
    let failures = 0;
    reply = (body) => (failures-- > 0 ? { status: 503 } : echo(body));
    const first = await postAgent(server.url, project.id, member().cookie, userMessageBody('before'));
    const threadId = (first.events[0] as { threadId: string }).threadId;
    failures = 3;
    const failed = await postAgent(
      server.url,
      project.id,
      member().cookie,
      userMessageBody('flaky question', threadId),
    );
    expect(failed.events.at(-1)).toMatchObject({ type: 'RUN_ERROR' });
    // Retry, as the panel sends it: a new version of the failed turn, without a new message.
    let retried = failed;
    for (let attempt = 0; attempt < 3; attempt++) {
      retried = await postAgent(server.url, project.id, member().cookie, {
        threadId,
        messages: [],
        forwardedProps: { version: { of: runIdOf(retried) } },
      });
      expect(retried.status).toBe(200);
    }
    expect(retried.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
    expect(sentToModel()).toEqual(['user: before', 'assistant: answer to before', 'user: flaky question']);
    const shown = await trpc().agent.conversations.get.query({ projectId: project.id, conversationId: threadId });
    expect(texts(shown.view)).toEqual([
      'user: before',
      'assistant: answer to before',
      'user: flaky question',
      'assistant: answer to flaky question',
    ]);
    expect(shown.view.versions?.[runIdOf(retried)]).toMatchObject({ index: 4, count: 4 });
    // The failed attempts stay reachable as earlier versions.
    const earlier = shown.view.versions![runIdOf(retried)]!.runIds[0]!;
    expect(earlier).toBe(runIdOf(failed));
  });

  it('counts a new version for a watcher that attaches to it without a position (another tab)', async () => {
    reply = echo;
    const first = await postAgent(server.url, project.id, member().cookie, userMessageBody('question'));
    const threadId = (first.events[0] as { threadId: string }).threadId;
    reply = (body) => ({ ...echo(body), delayMs: 150 });
    const started = await startRunStream(
      server.url,
      project.id,
      member().cookie,
      { threadId, messages: [], forwardedProps: { version: { of: runIdOf(first) } } },
      (events) => events.some((e) => e.event.type === 'RUN_STARTED'),
    );
    const runId = (started.events[0]!.event as { runId: string }).runId;
    const followed = await followRun(server.url, project.id, runId, member().cookie, {
      until: (events) => events.some((e) => e.event.type === 'RUN_FINISHED'),
    });
    const snapshot = followed.events.find((e) => e.event.type === 'CUSTOM')!.event as {
      value: { view: { versions?: Record<string, { index: number; count: number }> } };
    };
    expect(snapshot.value.view.versions?.[runId]).toMatchObject({ index: 2, count: 2 });
  });

  it('expires the pending approvals of a replaced answer, refuses unknown turns, and waits for a running answer', async () => {
    reply = () => ({ toolCalls: [{ name: 'close_issue', args: { number: 1 } }] });
    const held = await postAgent(server.url, project.id, member().cookie, userMessageBody('close it'));
    const threadId = (held.events[0] as { threadId: string }).threadId;
    const interrupt = (held.events.at(-1) as { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts[0]!;
    reply = echo;
    const again = await postAgent(server.url, project.id, member().cookie, {
      threadId,
      messages: [],
      forwardedProps: { version: { of: runIdOf(held) } },
    });
    expect(again.status).toBe(200);
    const prisma = await getPrisma();
    expect((await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id: interrupt.id } })).status).toBe(
      'EXPIRED',
    );
    const late = await postAgent(server.url, project.id, member().cookie, {
      threadId,
      messages: [],
      resume: [{ interruptId: interrupt.id, status: 'resolved', payload: { approved: true } }],
    });
    expect(late.error?.code).toBe('INTERRUPT_ALREADY_DECIDED');

    const unknown = await postAgent(server.url, project.id, member().cookie, {
      threadId,
      messages: [],
      forwardedProps: { version: { of: 'run_nope' } },
    });
    expect(unknown).toMatchObject({ status: 404, error: { code: 'VERSION_NOT_FOUND' } });

    // An answer that is still being written (its model takes its time): read until it started.
    reply = () => ({ text: ['slow ', 'answer'], delayMs: 60_000 });
    const started = await startRunStream(
      server.url,
      project.id,
      member().cookie,
      userMessageBody('slow', threadId),
      (events) => events.some((e) => e.event.type === 'RUN_STARTED'),
    );
    const runningId = (started.events[0]!.event as { runId: string }).runId;
    const duringRun = await postAgent(server.url, project.id, member().cookie, {
      threadId,
      messages: [],
      forwardedProps: { version: { of: runIdOf(again) } },
    });
    expect(duringRun.error?.code).toBe('RUN_IN_PROGRESS');
    expect(
      await errorCode(
        trpc().agent.conversations.selectVersion.mutate({
          projectId: project.id,
          conversationId: threadId,
          runId: runIdOf(held),
        }),
      ),
    ).toBe('CONFLICT');
    expect((await cancelRun(server.url, project.id, runningId, member().cookie)).status).toBe(202);
    await followRun(server.url, project.id, runningId, member().cookie, { after: 0 });
  });
});

describe('bounded by the budget, not by the conversation', () => {
  it('pages the replay, newest first', async () => {
    reply = echo;
    let threadId = 'new';
    const runs: string[] = [];
    for (let i = 0; i < LIMITS.replayPageRuns + 5; i++) {
      const res = await postAgent(server.url, project.id, member().cookie, userMessageBody(`q${i}`, threadId));
      threadId = (res.events[0] as { threadId: string }).threadId;
      runs.push(runIdOf(res));
    }
    const newest = await trpc().agent.conversations.get.query({ projectId: project.id, conversationId: threadId });
    expect(newest.view.runs.map((r) => r.runId)).toEqual(runs.slice(5));
    expect(newest.olderBefore).toBe(runs[5]);
    const older = await trpc().agent.conversations.older.query({
      projectId: project.id,
      conversationId: threadId,
      before: newest.olderBefore!,
    });
    expect(older.view.runs.map((r) => r.runId)).toEqual(runs.slice(0, 5));
    expect(older.olderBefore).toBeNull();
    expect(texts(older.view)[0]).toBe('user: q0');

    // The model's history reads back only as far as the budget reaches.
    const window = await historyWindow(await getPrisma(), threadId, {
      excludeRunId: 'none',
      budgetChars: 2_000,
      pageRows: 10,
    });
    expect(window.runs.length).toBeGreaterThan(0);
    expect(window.runs.length).toBeLessThan(15);
    expect(window.runs.at(-1)!.runId).toBe(runs.at(-1));
  });

  it('remembers reading untrusted text after it left the history window (the data-flow guard)', async () => {
    const prisma = await getPrisma();
    await prisma.project.update({ where: { id: project.id }, data: { webhookUrl: 'http://127.0.0.1:9/hook' } });
    process.env.AGENT_CONTEXT_TOKENS = '1000';
    useScriptedModelEnv(model.url, { AGENT_CONTEXT_TOKENS: '1000' });
    try {
      reply = (body) =>
        ((body.messages as unknown[]).at(-1) as { role: string }).role === 'tool'
          ? { text: ['read'] }
          : { toolCalls: [{ name: 'list_issues', args: {} }] };
      const first = await postAgent(server.url, project.id, member().cookie, userMessageBody('read the issues'));
      const threadId = (first.events[0] as { threadId: string }).threadId;
      // Long turns push the read out of the window.
      reply = () => ({ text: ['x'.repeat(3_000)] });
      for (let i = 0; i < 4; i++)
        await postAgent(server.url, project.id, member().cookie, userMessageBody(`long ${i}`, threadId));
      reply = () => ({ toolCalls: [{ name: 'notify_webhook', args: { message: 'hi' } }] });
      const outward = await postAgent(
        server.url,
        project.id,
        member().cookie,
        userMessageBody('tell the webhook', threadId),
      );
      const sent = model.requests.at(-1)!.messages as Array<{ role: string; tool_calls?: unknown }>;
      expect(sent.some((m) => m.role === 'tool')).toBe(false); // the read is not in the history
      const interrupt = (
        outward.events.at(-1) as unknown as { outcome: { interrupts: Array<{ metadata: { approvalReason: string } }> } }
      ).outcome.interrupts[0]!;
      // notify_webhook always needs approval; the reason shows the guard still knows the read.
      expect(interrupt.metadata.approvalReason).toBe('data_flow');
    } finally {
      useScriptedModelEnv(model.url, { AGENT_CONTEXT_TOKENS: '24000' });
    }
  });

  it('asks for a new conversation when one is full', async () => {
    reply = echo;
    const res = await postAgent(server.url, project.id, member().cookie, userMessageBody('hello'));
    const threadId = (res.events[0] as { threadId: string }).threadId;
    await (await getPrisma()).agentConversation.update({
      where: { id: threadId },
      data: { runCount: LIMITS.maxRunsPerConversation },
    });
    const full = await postAgent(server.url, project.id, member().cookie, userMessageBody('more', threadId));
    expect(full).toMatchObject({ status: 409, error: { code: 'CONVERSATION_TOO_LONG' } });
    const fresh = await postAgent(server.url, project.id, member().cookie, userMessageBody('more'));
    expect(fresh.status).toBe(200);
  });
});
