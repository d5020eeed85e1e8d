// A stock AG-UI client (`@ag-ui/client`'s HttpAgent, as any AG-UI app would use it) against the
// real route: it picks its own thread id (a random UUID), which starts a conversation with that
// id; it continues the conversation; the conversation replays; and another user's thread id stays
// a 404 that reveals nothing.
import { HttpAgent } from '@ag-ui/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentUrl, postAgent, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { pngImage, upload } from '../../helpers/attachments';
import { resetEnvCache } from '@/server/env';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;

beforeAll(async () => {
  model = await startFakeOpenAI((body) => {
    const messages = body.messages as Array<{ role: string; content?: unknown }>;
    const last = messages.at(-1)!;
    if (last.role === 'tool') return { text: ['Listed ', 'them.'] };
    return String(last.content).includes('list')
      ? { toolCalls: [{ name: 'list_issues', args: {} }] }
      : { text: [`You said: ${String(last.content)}`] };
  });
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  useScriptedModelEnv(model.url);
  server = await startTestServer();
  project = await createProject('Stock');
  await createIssue(project.id, { title: 'An issue' });
});

afterAll(async () => {
  await server?.close();
  await model?.close();
});

const client = (cookie: string, threadId?: string) =>
  new HttpAgent({ url: agentUrl(server.url, project.id), headers: { cookie }, ...(threadId ? { threadId } : {}) });

describe('a stock AG-UI HttpAgent', () => {
  it('runs with its own thread id, continues, and the conversation replays', async () => {
    const agent = client(project.users.MEMBER.cookie);
    expect(agent.threadId).toMatch(/^[0-9a-f-]{36}$/); // the client's default: a random UUID
    agent.addMessage({ id: 'u1', role: 'user', content: 'hello there' });
    await agent.runAgent();
    agent.addMessage({ id: 'u2', role: 'user', content: 'now list the issues' });
    await agent.runAgent();
    const assistant = agent.messages.filter((m) => m.role === 'assistant').map((m) => m.content ?? '');
    expect(assistant).toContain('You said: hello there');
    expect(assistant).toContain('Listed them.');
    expect(agent.messages.some((m) => m.role === 'tool' && String(m.content).includes('An issue'))).toBe(true);

    const replay = await trpcClient(server.url, project.users.MEMBER.cookie).agent.conversations.get.query({
      projectId: project.id,
      conversationId: agent.threadId,
    });
    expect(replay.conversation.id).toBe(agent.threadId);
    expect(replay.view.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'hello there',
      'now list the issues',
    ]);
    expect(replay.view.runs).toHaveLength(2);

    // Another user with that thread id: 404, exactly as for an id nobody uses… but it must not
    // start a conversation there either.
    const other = await postAgent(
      server.url,
      project.id,
      project.users.ADMIN.cookie,
      userMessageBody('mine now?', agent.threadId),
    );
    expect(other).toMatchObject({ status: 404, error: { code: 'CONVERSATION_NOT_FOUND' } });
    const unknownResume = await postAgent(server.url, project.id, project.users.ADMIN.cookie, {
      threadId: crypto.randomUUID(),
      messages: [],
      resume: [{ interruptId: 'x', status: 'resolved', payload: { approved: true } }],
    });
    expect(unknownResume.status).toBe(404);
    // Malformed ids are refused with a clear error; "new" and no id still start a conversation.
    const bad = await postAgent(
      server.url,
      project.id,
      project.users.MEMBER.cookie,
      userMessageBody('hi', 'not a valid id!'),
    );
    expect(bad).toMatchObject({ status: 400, error: { code: 'INVALID_REQUEST' } });
    expect(
      (await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hi', 'new'))).status,
    ).toBe(200);
    expect(
      (
        await postAgent(server.url, project.id, project.users.MEMBER.cookie, {
          messages: [{ role: 'user', content: 'hi' }],
        })
      ).status,
    ).toBe(200);
  });

  it('sends an attachment as a standard AG-UI image part naming the upload (a file source)', async () => {
    process.env.AGENT_MODEL_VISION = '1';
    resetEnvCache();
    try {
      const { attachment } = await upload(
        server.url,
        project.id,
        project.users.MEMBER.cookie,
        await pngImage(12, 9),
        'a.png',
      );
      const agent = client(project.users.MEMBER.cookie);
      agent.addMessage({
        id: 'u1',
        role: 'user',
        content: [
          { type: 'text', text: 'what is in it?' },
          { type: 'image', source: { type: 'file', value: attachment!.attachmentId, mimeType: 'image/png' } },
        ],
      });
      model.media.length = 0;
      await agent.runAgent();
      expect(agent.messages.at(-1)).toMatchObject({ role: 'assistant' });
      expect(model.media.map((m) => [m.kind, m.mediaType])).toEqual([['image', 'image/png']]);
      const replay = await trpcClient(server.url, project.users.MEMBER.cookie).agent.conversations.get.query({
        projectId: project.id,
        conversationId: agent.threadId,
      });
      expect(replay.view.messages[0]).toMatchObject({
        role: 'user',
        content: 'what is in it?',
        parts: [attachment, { type: 'text', text: 'what is in it?' }],
      });
    } finally {
      delete process.env.AGENT_MODEL_VISION;
      resetEnvCache();
    }
  });

  it('keeps a conversation with the longest accepted id usable through tRPC', async () => {
    const longId = `t-${'x'.repeat(98)}`; // 100 characters, the longest thread id accepted
    const started = await postAgent(
      server.url,
      project.id,
      project.users.MEMBER.cookie,
      userMessageBody('long id', longId),
    );
    expect(started.status).toBe(200);
    const api = trpcClient(server.url, project.users.MEMBER.cookie).agent.conversations;
    const replay = await api.get.query({ projectId: project.id, conversationId: longId });
    expect(replay.view.messages.map((m) => m.content)).toEqual(['long id', 'You said: long id']);
    await api.rename.mutate({ projectId: project.id, conversationId: longId, title: 'Renamed' });
    expect((await api.get.query({ projectId: project.id, conversationId: longId })).conversation.title).toBe('Renamed');
  });
});
