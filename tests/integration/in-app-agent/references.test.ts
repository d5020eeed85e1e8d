// References to the product in answers and messages, through the real route, a real database and a
// scripted OpenAI-compatible model: the issues an answer names become `in-app-agent.references`
// only when they exist in this project (never another project's issue, nor a number that does not
// exist, nor a link to another project); the model's suggestions block leaves the visible text and
// becomes `in-app-agent.suggestions`; both are stored and come back in the replay exactly as they
// streamed. Reference parts of a user message are kept only for this project's issues and members,
// and reach the model with their ids. A held change carries the issue's current values.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { getPrisma } from '@/server/db';
import { postAgent, textOf, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;
let other: TestProject;
/** What the scripted model answers next. */
let next: ScriptedTurn = { text: ['ok'] };

const custom = (events: AgentEvent[], name: string) =>
  events.filter((e): e is Extract<AgentEvent, { type: 'CUSTOM' }> => e.type === 'CUSTOM' && e.name === name);

beforeAll(async () => {
  model = await startFakeOpenAI(() => next);
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  server = await startTestServer();
  project = await createProject('Refs');
  other = await createProject('Elsewhere');
  const reporterId = project.users.OWNER.id;
  await createIssue(project.id, { title: 'Login fails on Safari', reporterId }); // #1
  await createIssue(project.id, { title: 'Export to CSV', status: 'CLOSED', reporterId }); // #2
  for (const title of ['a', 'b', 'c']) await createIssue(other.id, { title: `Other ${title}` }); // #1..#3 there
  useScriptedModelEnv(model.url);
});

afterAll(async () => {
  await server?.close();
  await model?.close();
});

describe('issue references in answers', () => {
  it('checks them on the server: only this project’s existing issues; the events replay', async () => {
    const answer =
      'See #1, issue 2, #3 and #999. Links: [ours](/projects/' +
      `${project.id}/issues/2), [theirs](/projects/${other.id}/issues/1).\n\n` +
      '```suggestions\nSummarize issue #1\nList closed issues\n```';
    // Streamed in small pieces, so the block's fence arrives split.
    next = { text: answer.match(/.{1,7}/gs)! };
    const res = await postAgent(server.url, project.id, project.users.VIEWER.cookie, userMessageBody('refs?'));
    expect(res.status).toBe(200);
    const [refs, ...moreRefs] = custom(res.events, CUSTOM_EVENTS.references);
    expect(moreRefs).toEqual([]);
    // #3 exists only in the other project, #999 nowhere, and the other project's link names its #1.
    expect(refs?.value).toEqual({
      messageId: expect.any(String),
      issues: [
        { number: 1, title: 'Login fails on Safari', status: 'OPEN' },
        { number: 2, title: 'Export to CSV', status: 'CLOSED' },
      ],
    });
    // The suggestions left the visible text and came as their own event, after the message.
    expect(textOf(res.events)).not.toContain('suggestions');
    expect(textOf(res.events)).toContain('#999');
    expect(custom(res.events, CUSTOM_EVENTS.suggestions).map((e) => e.value)).toEqual([
      {
        messageId: (refs!.value as { messageId: string }).messageId,
        suggestions: ['Summarize issue #1', 'List closed issues'],
      },
    ]);
    const endAt = res.events.findIndex(
      (e) => e.type === 'TEXT_MESSAGE_END' && e.messageId === (refs!.value as { messageId: string }).messageId,
    );
    expect(res.events.indexOf(refs!)).toBeGreaterThan(endAt);

    // Replay shows what streamed.
    const live = foldEvents(res.events, emptyView());
    const threadId = (res.events[0] as { threadId: string }).threadId;
    const replayed = await trpcClient(server.url, project.users.VIEWER.cookie).agent.conversations.get.query({
      projectId: project.id,
      conversationId: threadId,
    });
    const assistant = (v: typeof live) => v.messages.filter((m) => m.role === 'assistant');
    expect(assistant(replayed.view)).toEqual(assistant(live));
    expect(assistant(live)[0]).toMatchObject({
      references: [{ number: 1 }, { number: 2 }],
      suggestions: ['Summarize issue #1', 'List closed issues'],
    });
  });

  it('sends no references event for an answer that names no issue of the project', async () => {
    next = { text: ['Nothing here but #999 and ', `[a link](/projects/${other.id}/issues/2)`] };
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('none?'));
    expect(res.status).toBe(200);
    expect(custom(res.events, CUSTOM_EVENTS.references)).toEqual([]);
    expect(custom(res.events, CUSTOM_EVENTS.suggestions)).toEqual([]);
  });
});

describe('references picked in the composer', () => {
  it('keeps only this project’s issues and members, and gives the model their ids', async () => {
    next = { text: ['noted'] };
    const member = project.users.MEMBER;
    const content = [
      { type: 'text', text: `Ask #1 and #3 about it, @${member.name} and @Stranger` },
      { type: 'reference', kind: 'issue', id: '1', label: '#1' },
      { type: 'reference', kind: 'issue', id: '3', label: '#3' },
      { type: 'reference', kind: 'member', id: member.id, label: `@${member.name}` },
      { type: 'reference', kind: 'member', id: other.users.OWNER.id, label: '@Stranger' },
    ];
    const before = model.requests.length;
    const res = await postAgent(server.url, project.id, project.users.OWNER.cookie, {
      ...userMessageBody(''),
      messages: [{ id: 'm', role: 'user', content }],
    });
    expect(res.status).toBe(200);
    const parts = custom(res.events, CUSTOM_EVENTS.messageParts)[0]?.value as { parts: Array<Record<string, unknown>> };
    expect(parts.parts.filter((p) => p.type === 'reference')).toEqual([
      { type: 'reference', kind: 'issue', id: '1', label: '#1' },
      { type: 'reference', kind: 'member', id: member.id, label: `@${member.name}` },
    ]);
    const sent = JSON.stringify(model.requests.slice(before).at(-1));
    expect(sent).toContain(`\\"issue\\":1`);
    expect(sent).toContain(member.id);
    expect(sent).not.toContain(other.users.OWNER.id);
    expect(sent).not.toContain(`\\"issue\\":3`);
  });
});

describe('approval previews', () => {
  it('stores the issue’s current values with the interrupt, read when the call was held', async () => {
    next = {
      toolCalls: [
        { name: 'update_issue', args: { number: 1, status: 'IN_PROGRESS', title: 'Login fails everywhere' } },
        { name: 'assign_issue', args: { number: 2, assignee: project.users.ADMIN.id } },
        { name: 'delete_issue', args: { number: 999 } },
      ],
    };
    const res = await postAgent(server.url, project.id, project.users.OWNER.cookie, userMessageBody('change them'));
    const end = res.events.at(-1) as Extract<AgentEvent, { type: 'RUN_FINISHED' }>;
    expect(end.outcome?.type).toBe('interrupt');
    const previews = (
      end.outcome as unknown as { interrupts: Array<{ metadata: { toolName: string; preview?: unknown } }> }
    ).interrupts.map((i) => [i.metadata.toolName, i.metadata.preview]);
    expect(previews).toEqual([
      [
        'update_issue',
        {
          kind: 'issue',
          issue: {
            number: 1,
            title: 'Login fails on Safari',
            status: 'OPEN',
            priority: 'MEDIUM',
            assignee: null,
            labels: [],
          },
        },
      ],
      [
        'assign_issue',
        {
          kind: 'issue',
          issue: expect.objectContaining({ number: 2, status: 'CLOSED', assignee: null }),
          proposedAssignee: { id: project.users.ADMIN.id, name: project.users.ADMIN.name },
        },
      ],
      ['delete_issue', { kind: 'issue-missing', number: 999 }],
    ]);
    // Nothing changed, and the replay carries the same previews (history and review show them).
    const prisma = await getPrisma();
    expect(
      await prisma.issue.findUniqueOrThrow({ where: { projectId_number: { projectId: project.id, number: 1 } } }),
    ).toMatchObject({ title: 'Login fails on Safari', status: 'OPEN' });
    const threadId = (res.events[0] as { threadId: string }).threadId;
    const replayed = await trpcClient(server.url, project.users.OWNER.cookie).agent.conversations.get.query({
      projectId: project.id,
      conversationId: threadId,
    });
    expect(replayed.view.runs.at(-1)?.interrupts.map((i) => (i.metadata as { preview?: unknown }).preview)).toEqual(
      previews.map(([, p]) => p),
    );
  });
});
