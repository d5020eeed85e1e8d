// What waits for a user, through the real route and tRPC: the approvals (and questions) of their
// conversations in a project, newest first, gone once answered, deleted or expired; and expiry
// itself: the housekeeping marks a lapsed request EXPIRED at its expiry time, the conversation
// shows the card as expired from what it stored (its replay is unchanged by the housekeeping), an
// answer is refused, and the next message closes the call as expired.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalRequestOf, cardState } from '@/features/in-app-agent/components/approval';
import { emptyView, foldEvents, openInterrupts } from '@/features/in-app-agent/fold';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { postAgent, userMessageBody, type AgentResponse, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...messages].reverse().find((m) => m.role === 'user' || m.role === 'tool');
  return last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
}

beforeAll(async () => {
  // "create X" asks to create an issue (held for approval); anything else is answered.
  model = await startFakeOpenAI((body): ScriptedTurn => {
    const text = lastUserText(body);
    const m = /^create (.+)$/.exec(text);
    return m ? { toolCalls: [{ name: 'create_issue', args: { title: m[1] } }] } : { text: ['Done.'] };
  });
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  // The housekeeping (stale sweep and expiry) runs every 200 ms in this file.
  server = await startTestServer({ staleSweepMs: 200 });
  useScriptedModelEnv(model.url);
  project = await createProject('Waiting');
});
afterAll(async () => {
  await server?.close();
  await model?.close();
});

const threadOf = (res: AgentResponse) => (res.events[0] as { threadId: string }).threadId;
const interruptOf = (res: AgentResponse) => {
  const last = res.events.at(-1) as { outcome?: { type: string; interrupts?: Array<{ id: string }> } };
  const found = last.outcome?.interrupts?.[0];
  if (!found) throw new Error('no interrupt');
  return found;
};
const resume = (threadId: string, interruptId: string, approved: boolean) => ({
  threadId,
  messages: [],
  resume: [{ interruptId, status: 'resolved', payload: { approved } }],
});
const waitingFor = (cookie: string) =>
  trpcClient(server.url, cookie).agent.waiting.list.query({ projectId: project.id });

describe('what waits for a user', () => {
  it('lists the approvals waiting per conversation, newest first, until answered or deleted', async () => {
    const member = project.users.MEMBER;
    const a = await postAgent(server.url, project.id, member.cookie, userMessageBody('create Alpha'));
    const b = await postAgent(server.url, project.id, member.cookie, userMessageBody('create Beta'));
    const c = await postAgent(server.url, project.id, member.cookie, userMessageBody('create Gamma'));
    const prisma = await getPrisma();
    // A question (an interrupt of another kind) waits in the first conversation too.
    const aRun = (a.events[0] as { runId: string }).runId;
    await prisma.agentPendingApproval.create({
      data: {
        id: newId('apr_'),
        kind: 'question',
        runId: aRun,
        conversationId: threadOf(a),
        userId: member.id,
        toolCallId: newId('call_'),
        toolName: 'ask_user',
        args: {},
        argsFingerprint: 'x',
        reason: 'question',
        expiresAt: new Date(Date.now() + 600_000),
      },
    });

    const list = await waitingFor(member.cookie);
    expect(list.total).toBe(4);
    expect(list.conversations.map((x) => [x.title, x.approvals, x.questions, x.tools])).toEqual([
      ['create Alpha', 1, 1, ['create_issue']],
      ['create Gamma', 1, 0, ['create_issue']],
      ['create Beta', 1, 0, ['create_issue']],
    ]);
    // Nobody else's, nor in another project.
    expect((await waitingFor(project.users.OWNER.cookie)).total).toBe(0);
    const elsewhere = await createProject('Elsewhere');
    expect(
      (
        await trpcClient(server.url, elsewhere.users.MEMBER.cookie).agent.waiting.list.query({
          projectId: elsewhere.id,
        })
      ).total,
    ).toBe(0);

    // Answered: gone.
    const answered = await postAgent(
      server.url,
      project.id,
      member.cookie,
      resume(threadOf(b), interruptOf(b).id, true),
    );
    expect(answered.status).toBe(200);
    // Deleted conversation: gone.
    await trpcClient(server.url, member.cookie).agent.conversations.delete.mutate({
      projectId: project.id,
      conversationId: threadOf(c),
    });
    const after = await waitingFor(member.cookie);
    expect(after.total).toBe(2);
    expect(after.conversations.map((x) => x.conversationId)).toEqual([threadOf(a)]);
  });

  it('expires a request at its expiry: stored, shown, refused, and closed when the conversation goes on', async () => {
    const member = project.users.VIEWER;
    // Viewers may not create issues: an admin's request instead, with the shortest expiry.
    const admin = project.users.ADMIN;
    useScriptedModelEnv(model.url, { AGENT_APPROVAL_TTL_SECONDS: '10' });
    const asked = await postAgent(server.url, project.id, admin.cookie, userMessageBody('create Delta'));
    useScriptedModelEnv(model.url);
    const threadId = threadOf(asked);
    const { id } = interruptOf(asked);
    expect((await waitingFor(admin.cookie)).total).toBe(1);
    expect((await waitingFor(member.cookie)).total).toBe(0);

    const prisma = await getPrisma();
    const row = await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id } });
    // The housekeeping marks it expired at its expiry time.
    const deadline = Date.now() + 30_000;
    let now = await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id } });
    while (now.status === 'PENDING') {
      if (Date.now() > deadline) throw new Error('the request was not expired');
      await new Promise((r) => setTimeout(r, 250));
      now = await prisma.agentPendingApproval.findUniqueOrThrow({ where: { id } });
    }
    expect(now.status).toBe('EXPIRED');
    expect(now.decidedAt?.getTime()).toBe(row.expiresAt.getTime());
    expect((await waitingFor(admin.cookie)).total).toBe(0);

    // The conversation shows the card expired, from what was stored: replay equals the stream.
    const trpc = trpcClient(server.url, admin.cookie).agent;
    const shown = await trpc.conversations.get.query({ projectId: project.id, conversationId: threadId });
    expect(shown.view).toEqual(foldEvents(asked.events as AgentEvent[], emptyView(threadId)));
    const [interrupt] = openInterrupts(shown.view);
    const request = approvalRequestOf(interrupt!)!;
    expect(cardState(request, shown.view.decisions, Date.now(), true)).toEqual({ kind: 'expired' });
    // The review's approvals say so too.
    const review = await trpc.review.get.query({ projectId: project.id, conversationId: threadId });
    expect(review.approvals.map((x) => x.status)).toEqual(['EXPIRED']);

    const late = await postAgent(server.url, project.id, admin.cookie, resume(threadId, id, true));
    expect(late.status).toBe(410);
    expect(late.error?.code).toBe('INTERRUPT_EXPIRED');
    const next = await postAgent(server.url, project.id, admin.cookie, userMessageBody('never mind', threadId));
    expect(next.events.find((e) => e.type === 'CUSTOM' && e.name === 'in-app-agent.approval-decided')).toMatchObject({
      value: { decision: 'expired' },
    });
    expect(await prisma.issue.count({ where: { projectId: project.id, title: 'Delta' } })).toBe(0);
  });
});
