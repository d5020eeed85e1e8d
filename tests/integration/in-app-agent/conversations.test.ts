// The assistant's tRPC API over real HTTP and a real database: conversation list (keyset paging,
// search), rename, delete and restore, feedback (idempotent per user and message, owner only), and
// the project review list (deleted conversations flagged, tool calls counted as replay shows them).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { postAgent, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;
let turns: ScriptedTurn[] = [];
const script = (...t: ScriptedTurn[]) => {
  turns = t;
  model.requests.length = 0;
};

beforeAll(async () => {
  model = await startFakeOpenAI((_b, i) => turns[i] ?? { text: ['(no more turns)'] });
  useScriptedModelEnv(model.url);
  server = await startTestServer();
  project = await createProject('Conversations');
  await createIssue(project.id, { title: 'Existing issue' });
});
afterAll(async () => {
  await server?.close();
  await model?.close();
});

describe('conversations', () => {
  it('lists own conversations newest first with keyset paging and title search', async () => {
    const prisma = await getPrisma();
    const owner = project.users.OWNER;
    const base = Date.UTC(2030, 0, 1);
    const titles = ['Alpha report', 'Beta plan', 'alpha notes', 'Gamma tie one', 'Gamma tie two', 'Delta'];
    // Two conversations share an updatedAt, so the page boundary falls inside a tie.
    const stamps = [base + 5000, base + 4000, base + 3000, base + 2000, base + 2000, base + 1000];
    const ids: string[] = [];
    for (const [i, title] of titles.entries()) {
      const c = await prisma.agentConversation.create({
        data: {
          id: newId('cv_'),
          projectId: project.id,
          userId: owner.id,
          title,
          createdAt: new Date(stamps[i]!),
          updatedAt: new Date(stamps[i]!),
        },
      });
      ids.push(c.id);
    }
    // Someone else's conversation in the same project never shows up.
    await prisma.agentConversation.create({
      data: { id: newId('cv_'), projectId: project.id, userId: project.users.ADMIN.id, title: 'Alpha of someone else' },
    });

    const trpc = trpcClient(server.url, owner.cookie);
    const seen: string[] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    for (let i = 0; i < 10; i++) {
      const page = await trpc.agent.conversations.list.query({
        projectId: project.id,
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      sizes.push(page.items.length);
      seen.push(...page.items.map((c) => c.id));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(sizes).toEqual([2, 2, 2]);
    expect(new Set(seen).size).toBe(6);
    // Newest first; the tie is ordered by id, descending.
    const tie = [ids[3]!, ids[4]!].sort().reverse();
    expect(seen).toEqual([ids[0], ids[1], ids[2], ...tie, ids[5]]);

    const found = await trpc.agent.conversations.list.query({ projectId: project.id, search: '  ALPHA ' });
    expect(found.items.map((c) => c.title)).toEqual(['Alpha report', 'alpha notes']);
    expect(found.nextCursor).toBeNull();
    expect(
      (await trpc.agent.conversations.list.query({ projectId: project.id, search: 'nothing like this' })).items,
    ).toEqual([]);
    expect(
      await errorCode(trpc.agent.conversations.list.query({ projectId: project.id, cursor: 'not-a-cursor' })),
    ).toBe('BAD_REQUEST');
  });

  it("renames, deletes and restores only the owner's conversation", async () => {
    const member = project.users.MEMBER;
    script({ text: ['Hello!'] });
    const res = await postAgent(server.url, project.id, member.cookie, userMessageBody('  hello   there  '));
    const conversationId = (res.events[0] as { threadId: string }).threadId;
    const trpc = trpcClient(server.url, member.cookie);
    const other = trpcClient(server.url, project.users.OWNER.cookie);
    const ref = { projectId: project.id, conversationId };

    expect((await trpc.agent.conversations.get.query(ref)).conversation.title).toBe('hello there');
    expect(await trpc.agent.conversations.rename.mutate({ ...ref, title: '  Greeting  ' })).toEqual({
      id: conversationId,
      title: 'Greeting',
    });
    expect(
      (await trpc.agent.conversations.list.query({ projectId: project.id })).items.find((c) => c.id === conversationId)
        ?.title,
    ).toBe('Greeting');
    expect(await errorCode(trpc.agent.conversations.rename.mutate({ ...ref, title: '   ' }))).toBe('BAD_REQUEST');
    expect(await errorCode(trpc.agent.conversations.rename.mutate({ ...ref, title: 'x'.repeat(121) }))).toBe(
      'BAD_REQUEST',
    );
    expect(await errorCode(other.agent.conversations.rename.mutate({ ...ref, title: 'Mine now' }))).toBe('NOT_FOUND');

    expect(await trpc.agent.conversations.delete.mutate(ref)).toEqual({ id: conversationId, deleted: true });
    expect(await errorCode(trpc.agent.conversations.get.query(ref))).toBe('NOT_FOUND');
    expect((await trpc.agent.conversations.list.query({ projectId: project.id })).items.map((c) => c.id)).not.toContain(
      conversationId,
    );
    // A deleted conversation cannot be continued through the route either.
    const blocked = await postAgent(
      server.url,
      project.id,
      member.cookie,
      userMessageBody('still there?', conversationId),
    );
    expect([blocked.status, blocked.error?.code]).toEqual([404, 'CONVERSATION_NOT_FOUND']);

    expect(await errorCode(other.agent.conversations.restore.mutate(ref))).toBe('NOT_FOUND');
    expect(await trpc.agent.conversations.restore.mutate(ref)).toEqual({ id: conversationId, deleted: false });
    const restored = await trpc.agent.conversations.get.query(ref);
    expect(restored.conversation.title).toBe('Greeting');
    expect(restored.view.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect((await trpc.agent.conversations.list.query({ projectId: project.id })).items.map((c) => c.id)).toContain(
      conversationId,
    );
  });
});

describe('feedback', () => {
  it("is idempotent per user and message, keeps comments, and is the owner's only", async () => {
    const member = project.users.MEMBER;
    script({ text: ['An answer to rate.'] });
    const res = await postAgent(server.url, project.id, member.cookie, userMessageBody('rate me'));
    const conversationId = (res.events[0] as { threadId: string }).threadId;
    const messageId = (
      res.events.find((e) => e.type === 'TEXT_MESSAGE_START' && e.role === 'assistant') as { messageId: string }
    ).messageId;
    const userMessageId = (
      res.events.find((e) => e.type === 'TEXT_MESSAGE_START' && e.role === 'user') as { messageId: string }
    ).messageId;
    const trpc = trpcClient(server.url, member.cookie);
    const ref = { projectId: project.id, conversationId, messageId };

    const vague = { messageId, value: -1, comment: 'Too vague', reasons: [] };
    expect(await trpc.agent.feedback.submit.mutate({ ...ref, value: -1, comment: ' Too vague ' })).toEqual(vague);
    expect(await trpc.agent.feedback.submit.mutate({ ...ref, value: -1, comment: ' Too vague ' })).toEqual(vague);
    // Changing one's mind updates the same row; a comment on a positive rating is kept too.
    const fine = { messageId, value: 1, comment: 'Actually fine', reasons: [] };
    expect(await trpc.agent.feedback.submit.mutate({ ...ref, value: 1, comment: 'Actually fine' })).toEqual(fine);
    expect(await trpc.agent.feedback.submit.mutate({ ...ref, value: 1 })).toEqual({ ...fine, comment: null });
    const prisma = await getPrisma();
    expect(await prisma.agentFeedback.count({ where: { messageId } })).toBe(1);
    const saved = (await trpc.agent.conversations.get.query({ projectId: project.id, conversationId })).feedback;
    expect(saved).toEqual({ [messageId]: { value: 1, comment: null, reasons: [] } });

    // Only assistant messages of one's own conversations can be rated.
    expect(await errorCode(trpc.agent.feedback.submit.mutate({ ...ref, messageId: userMessageId, value: 1 }))).toBe(
      'NOT_FOUND',
    );
    expect(await errorCode(trpc.agent.feedback.submit.mutate({ ...ref, messageId: 'msg_unknown', value: 1 }))).toBe(
      'NOT_FOUND',
    );
    const admin = trpcClient(server.url, project.users.ADMIN.cookie);
    expect(await errorCode(admin.agent.feedback.submit.mutate({ ...ref, value: -1, comment: 'not mine' }))).toBe(
      'NOT_FOUND',
    );
    expect(await prisma.agentFeedback.count({ where: { messageId } })).toBe(1);
    expect(await errorCode(trpc.agent.feedback.submit.mutate({ ...ref, value: 2 as never }))).toBe('BAD_REQUEST');
  });
});

describe('review list', () => {
  it('shows deleted conversations flagged, and counts every tool call replay shows', async () => {
    const member = project.users.MEMBER;
    // One MCP read (executed), one local tool, and a mutating call the user rejects.
    script(
      {
        toolCalls: [
          { name: 'list_issues', args: {} },
          { name: 'search_docs', args: { query: 'roles' } },
        ],
      },
      { toolCalls: [{ name: 'create_issue', args: { title: 'Rejected one' } }] },
      { text: ['Fine, I will not.'] },
    );
    const first = await postAgent(server.url, project.id, member.cookie, userMessageBody('look around, then create'));
    const conversationId = (first.events[0] as { threadId: string }).threadId;
    const fin = first.events.at(-1);
    if (fin?.type !== 'RUN_FINISHED' || fin.outcome?.type !== 'interrupt') throw new Error('expected an interrupt');
    const interruptId = fin.outcome.interrupts[0]!.id;
    const resumed = await postAgent(server.url, project.id, member.cookie, {
      threadId: conversationId,
      messages: [],
      resume: [{ interruptId, status: 'resolved', payload: { approved: false, feedback: 'no' } }],
    });
    expect(resumed.status).toBe(200);
    const trpc = trpcClient(server.url, member.cookie);
    await trpc.agent.conversations.delete.mutate({ projectId: project.id, conversationId });

    const admin = trpcClient(server.url, project.users.ADMIN.cookie);
    const all = await admin.agent.review.list.query({ projectId: project.id });
    const row = all.items.find((r) => r.id === conversationId);
    expect(row).toMatchObject({ deleted: true, toolCalls: 3, approvals: 1 });
    // The audit log only knows the one MCP call that ran: the review counts what the user saw.
    const prisma = await getPrisma();
    const runIds = (await prisma.agentRun.findMany({ where: { conversationId } })).map((r) => r.id);
    expect(await prisma.toolCallAudit.count({ where: { runId: { in: runIds } } })).toBe(1);
    expect(all.items.filter((r) => r.id !== conversationId).every((r) => r.deleted === false)).toBe(true);
    expect(
      (await admin.agent.review.list.query({ projectId: project.id, filter: 'approvals' })).items.map((r) => r.id),
    ).toContain(conversationId);
    expect(
      (await admin.agent.review.get.query({ projectId: project.id, conversationId })).conversation.deletedAt,
    ).not.toBeNull();
    // Reviewing is for admins and owners.
    expect(await errorCode(trpc.agent.review.list.query({ projectId: project.id }))).toBe('FORBIDDEN');
  });
});
