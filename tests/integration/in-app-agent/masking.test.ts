// Masking of stored text through the real route, tRPC and the MCP endpoint: the run that produced a
// secret streams it and sends it to the model as it is; what is stored (events, the title, feedback,
// the audit trail's previews) holds it masked with a placeholder of the same length, so a watcher
// that reattaches from a position in the middle of a message gets the masked rest at exactly the
// right character; a later run's history reads the masked text. With the project's setting, e-mail
// addresses and phone numbers are masked too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MASK } from '@/features/in-app-agent/server/redaction';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { getPrisma } from '@/server/db';
import {
  followRun,
  postAgent,
  startRunStream,
  textOf,
  userMessageBody,
  useScriptedModelEnv,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';
import { connect, projectKey } from '../mcp/mcp-client';

/** Assembled at run time: the source holds no token-shaped string. */
const TOKEN = `ghp_${'Z9'.repeat(18)}`;
const MASKED_TOKEN = `ghp_${MASK.repeat(36)}`;
const EMAIL = 'ada.lovelace@example.org';

let server: TestServer;
let model: FakeServer;
let project: TestProject;

function lastUserText(body: Record<string, unknown>): string {
  const messages = (body.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = messages.at(-1);
  return last?.role === 'user' && typeof last.content === 'string' ? last.content : '';
}

beforeAll(async () => {
  model = await startFakeOpenAI((body): ScriptedTurn => {
    const text = lastUserText(body);
    // The answer repeats the secret, split across deltas.
    if (text.startsWith('deploy')) return { text: ['Using ', TOKEN.slice(0, 10), TOKEN.slice(10), ' now.'] };
    if (text.startsWith('list')) return { toolCalls: [{ name: 'list_issues', args: {} }] };
    return { text: ['Noted.'] };
  });
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  server = await startTestServer();
  useScriptedModelEnv(model.url);
  project = await createProject('Masking');
});
afterAll(async () => {
  await server?.close();
  await model?.close();
});

const storedPayloads = async (conversationId: string) =>
  JSON.stringify(
    (await (await getPrisma()).agentEvent.findMany({ where: { conversationId }, orderBy: { seq: 'asc' } })).map(
      (e) => e.payload,
    ),
  );

describe('masking what is stored', () => {
  it('streams and sends the secret to the model, stores it masked, and reattaches at the right character', async () => {
    const member = project.users.MEMBER;
    const question = `deploy with ${TOKEN} please`;
    const live = await startRunStream(server.url, project.id, member.cookie, userMessageBody(question));
    const events = live.events.map((e) => e.event);
    const threadId = (events[0] as { threadId: string }).threadId;
    const runId = (events[0] as { runId: string }).runId;
    // The run that produced it: the live stream and the model see the secret.
    expect(textOf(events, 'user')).toBe(question);
    const answer = textOf(events);
    expect(answer).toBe(`Using ${TOKEN} now.`);
    expect(JSON.stringify(model.requests.at(-1))).toContain(TOKEN);

    // Storage: masked, same length.
    const stored = await storedPayloads(threadId);
    expect(stored).not.toContain(TOKEN);
    const prisma = await getPrisma();
    const conversation = await prisma.agentConversation.findUniqueOrThrow({ where: { id: threadId } });
    expect(conversation.title).not.toContain(TOKEN);
    expect(conversation.title).toContain('ghp_');
    const trpc = trpcClient(server.url, member.cookie).agent;
    const shown = await trpc.conversations.get.query({ projectId: project.id, conversationId: threadId });
    const maskedAnswer = `Using ${MASKED_TOKEN} now.`;
    expect(shown.view.messages.map((m) => m.content)).toEqual([`deploy with ${MASKED_TOKEN} please`, maskedAnswer]);
    expect(maskedAnswer).toHaveLength(answer.length);

    // Reattach from the middle of the secret (after the delta holding its first 10 characters):
    // the stored rest starts at exactly the next character, masked.
    const cut = live.events.find(
      (e) => e.event.type === 'TEXT_MESSAGE_CONTENT' && e.event.delta === TOKEN.slice(0, 10),
    );
    expect(cut?.id).toBeTypeOf('number');
    const seen = live.events
      .filter((e) => e.id !== null && e.id <= cut!.id! && e.event.type === 'TEXT_MESSAGE_CONTENT')
      .filter((e) => (e.event as { messageId: string }).messageId === (cut!.event as { messageId: string }).messageId)
      .map((e) => (e.event as { delta: string }).delta)
      .join('');
    expect(seen).toBe(`Using ${TOKEN.slice(0, 10)}`);
    const followed = await followRun(server.url, project.id, runId, member.cookie, { after: cut!.id! });
    expect(followed.status).toBe(200);
    const rest = followed.events
      .filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT')
      .map((e) => (e.event as { delta: string }).delta)
      .join('');
    expect(seen.length + rest.length).toBe(answer.length);
    expect(rest).toBe(maskedAnswer.slice(seen.length));
    expect(followed.events.every((e) => e.id === null || e.id > cut!.id!)).toBe(true);
    expect(followed.events.at(-1)?.event.type).toBe('RUN_FINISHED');

    // A later run's history is what was stored: the masked text.
    await postAgent(server.url, project.id, member.cookie, userMessageBody('and then?', threadId));
    const history = JSON.stringify(model.requests.at(-1));
    expect(history).not.toContain(TOKEN);
    expect(history).toContain(MASKED_TOKEN);

    // Feedback comments are stored masked too.
    const answerId = shown.view.messages.find((m) => m.role === 'assistant')!.id;
    await trpc.feedback.submit.mutate({
      projectId: project.id,
      conversationId: threadId,
      messageId: answerId,
      value: -1,
      comment: `it leaked ${TOKEN}`,
    });
    const rating = await prisma.agentFeedback.findFirstOrThrow({ where: { messageId: answerId } });
    expect(rating.comment).toBe(`it leaked ${MASKED_TOKEN}`);
  });

  it('masks e-mail addresses and phone numbers in stored messages, tool results and titles when the project asks', async () => {
    const admin = project.users.ADMIN;
    await createIssue(project.id, { title: `Call ${EMAIL} back` });
    const plain = await postAgent(server.url, project.id, admin.cookie, userMessageBody(`note ${EMAIL}`));
    const plainThread = (plain.events[0] as { threadId: string }).threadId;
    expect(await storedPayloads(plainThread)).toContain(EMAIL);

    await trpcClient(server.url, admin.cookie).agent.dataPolicy.set.mutate({
      projectId: project.id,
      retentionDays: null,
      maskContacts: true,
    });
    const asked = await postAgent(
      server.url,
      project.id,
      admin.cookie,
      userMessageBody(`note ${EMAIL} or +1 555 123 4567`),
    );
    const threadId = (asked.events[0] as { threadId: string }).threadId;
    expect(textOf(asked.events, 'user')).toContain(EMAIL);
    const stored = await storedPayloads(threadId);
    expect(stored).not.toContain(EMAIL);
    expect(stored).not.toContain('555 123 4567');
    const prisma = await getPrisma();
    // The title is masked right after the run opened (the open statement read the setting).
    const deadline = Date.now() + 10_000;
    let title = (await prisma.agentConversation.findUniqueOrThrow({ where: { id: threadId } })).title;
    while (title.includes(EMAIL) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      title = (await prisma.agentConversation.findUniqueOrThrow({ where: { id: threadId } })).title;
    }
    expect(title).not.toContain(EMAIL);
    expect(title).toContain('@');

    // A tool result: live as the tool answered, stored masked.
    const listed = await postAgent(server.url, project.id, admin.cookie, userMessageBody('list issues'));
    const result = listed.events.find((e) => e.type === 'TOOL_CALL_RESULT') as AgentEvent & { content: string };
    expect(result.content).toContain(EMAIL);
    const listedStored = await storedPayloads((listed.events[0] as { threadId: string }).threadId);
    expect(listedStored).not.toContain(EMAIL);
    expect(listedStored).toContain('list_issues');
  });

  it("masks the audit trail's previews of MCP calls: secrets always, contacts when the project asks", async () => {
    const other = await createProject('Masking, no contacts');
    const prisma = await getPrisma();
    for (const [p, contacts] of [
      [project, true],
      [other, false],
    ] as const) {
      const key = await projectKey(p);
      const mcp = await connect(server.url, key.secret);
      try {
        const created = await mcp.call('create_issue', { title: `Rotate ${TOKEN} for ${EMAIL}` });
        expect(created.isError).toBeFalsy();
      } finally {
        await mcp.close();
      }
      const audit = await prisma.toolCallAudit.findFirstOrThrow({
        where: { projectId: p.id, tool: 'create_issue', apiKeyId: key.key.id },
      });
      expect(audit.argsPreview).not.toContain(TOKEN);
      expect(audit.argsPreview).toContain(MASKED_TOKEN);
      expect(audit.resultPreview).not.toContain(TOKEN);
      expect(audit.argsPreview.includes(EMAIL)).toBe(!contacts);
      // The product's own data is the product's: the issue keeps what was written.
      expect(await prisma.issue.count({ where: { projectId: p.id, title: `Rotate ${TOKEN} for ${EMAIL}` } })).toBe(1);
    }
  });
});
