// Rare sequences that must not lose or misreport data: a provider that numbers its tool calls
// `call_0` in every answer, and a run whose heartbeat is late enough for the stale sweep to close
// it while it is still writing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openInterrupts } from '@/features/in-app-agent/fold';
import { createAgentRoutes } from '@/features/in-app-agent/server/handler';
import { getPrisma } from '@/server/db';
import { postAgent, startRunStream, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let late: TestServer;
let model: FakeServer;
let project: TestProject;
let reply: () => ScriptedTurn = () => ({ text: ['ok'] });

beforeAll(async () => {
  model = await startFakeOpenAI((body) =>
    (body.messages as Array<{ role: string }>).at(-1)!.role === 'tool' ? { text: ['Done.'] } : reply(),
  );
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  // A short lease (no other instance takes the run over: this process owns it), and…
  useScriptedModelEnv(model.url, { AGENT_RUN_STALE_SECONDS: '5', AGENT_RUN_LEASE_SECONDS: '3' });
  // …a fast stale sweep (the assistant's services start with the first server of the process)…
  server = await startTestServer({ staleSweepMs: 200 });
  // …and a heartbeat far slower than the stale window: the sweep closes live runs (a stale window
  // after their lease ran out with nobody taking them over).
  const port = process.env.PORT;
  late = await startTestServer({
    agentRoutes: createAgentRoutes({ heartbeatMs: 60_000, flushIntervalMs: 300 }) as never,
  });
  process.env.PORT = port;
  project = await createProject('Integrity');
  await createIssue(project.id, { title: 'One' });
  await createIssue(project.id, { title: 'Two' });
});

afterAll(async () => {
  await late?.close();
  await server?.close();
  await model?.close();
});

const member = () => project.users.MEMBER;

describe('tool call ids from the provider', () => {
  it('may repeat across answers and conversations without mixing up approvals', async () => {
    reply = () => ({
      toolCalls: [
        { name: 'close_issue', args: { number: 1 } },
        { name: 'close_issue', args: { number: 2 } },
      ],
      toolCallIds: ['call_0', 'call_1'],
    });
    const a = await postAgent(server.url, project.id, member().cookie, userMessageBody('close both'));
    const b = await postAgent(server.url, project.id, member().cookie, userMessageBody('close both, again'));
    const threadA = (a.events[0] as { threadId: string }).threadId;
    // The same conversation asks again: the provider's ids repeat within it too.
    const a2 = await postAgent(server.url, project.id, member().cookie, userMessageBody('and again', threadA));
    for (const res of [a, b, a2])
      expect(res.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    const ids = [a, b, a2].flatMap((r) =>
      (r.events.at(-1) as { outcome: { interrupts: Array<{ toolCallId: string }> } }).outcome.interrupts.map(
        (i) => i.toolCallId,
      ),
    );
    expect(new Set(ids).size).toBe(6); // ours, never the provider's
    expect(ids.filter((id) => id === 'call_0' || id === 'call_1')).toEqual([]);

    // Answering the latest batch of conversation A works, and shows exactly that batch decided.
    reply = () => ({ text: ['Closed.'] });
    const view = (
      await trpcClient(server.url, member().cookie).agent.conversations.get.query({
        projectId: project.id,
        conversationId: threadA,
      })
    ).view;
    const open = openInterrupts(view);
    expect(open).toHaveLength(2);
    const resumed = await postAgent(server.url, project.id, member().cookie, {
      threadId: threadA,
      messages: [],
      resume: open.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } })),
    });
    expect(resumed.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    const after = (
      await trpcClient(server.url, member().cookie).agent.conversations.get.query({
        projectId: project.id,
        conversationId: threadA,
      })
    ).view;
    const calls = after.messages.flatMap((m) => (m.role === 'assistant' ? m.toolCalls : []));
    expect(calls.map((c) => after.decisions[c.id]?.decision ?? 'none')).toEqual([
      'expired',
      'expired',
      'approved',
      'approved',
    ]);
    const prisma = await getPrisma();
    expect(
      (await prisma.issue.findMany({ where: { projectId: project.id }, orderBy: { number: 'asc' } })).map(
        (i) => i.status,
      ),
    ).toEqual(['CLOSED', 'CLOSED']);
  });
});

describe('a run the stale sweep closes while it is still writing', () => {
  it('stops writing at once, keeps every row it wrote, and its watchers learn RUN_STALE', {
    timeout: 60_000,
  }, async () => {
    reply = () => ({ text: Array.from({ length: 250 }, (_, i) => `w${i} `), delayMs: 100 });
    const run = await startRunStream(late.url, project.id, member().cookie, userMessageBody('long'));
    const { runId, threadId } = run.events[0]!.event as { runId: string; threadId: string };
    expect(run.events.at(-1)!.event).toMatchObject({ type: 'RUN_ERROR', code: 'RUN_STALE' });
    const prisma = await getPrisma();
    expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      status: 'FAILED',
      errorCode: 'RUN_STALE',
    });
    await new Promise((r) => setTimeout(r, 1_000)); // a write that would still come, would have come
    const rows = await prisma.agentEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
    // The sweep's RUN_ERROR is the run's last row: nothing was written after it, no row was lost.
    expect(rows.at(-1)!.payload as { type: string; code?: string }).toMatchObject({
      type: 'RUN_ERROR',
      code: 'RUN_STALE',
    });
    expect(rows.filter((r) => (r.payload as { type: string }).type === 'RUN_ERROR')).toHaveLength(1);
    const stored = (
      rows.find(
        (r) =>
          (r.payload as { type: string; role?: string }).type === 'TEXT_MESSAGE' &&
          (r.payload as { role?: string }).role === 'assistant',
      )!.payload as { content: string }
    ).content;
    expect(stored.startsWith('w0 w1 w2 ')).toBe(true);
    // The conversation goes on.
    reply = () => ({ text: ['back'] });
    const next = await postAgent(server.url, project.id, member().cookie, userMessageBody('still there?', threadId));
    expect(next.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
  });
});
