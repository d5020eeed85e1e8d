// Feedback as data, over real HTTP and a real database: a thumbs down carries reasons (validated,
// shown again, cleared by a thumbs up), the review filters by reason and shows reasons, and owners
// and admins export rated answers as JSONL (every line parsed with the module's contract; the
// conversation stops at the rated answer; filters by date, reason and rating; paging; members
// refused, strangers not told the project exists).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFeedbackExportHandler } from '@/features/in-app-agent/server/feedback-export';
import {
  FEEDBACK_REASONS,
  FeedbackExportLineSchema,
  type AgentEvent,
  type FeedbackExportLine,
} from '@/features/in-app-agent/schema';
import { getPrisma } from '@/server/db';
import { postAgent, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';
import { startHandlerServer } from '../mcp/mcp-client';

let server: TestServer;
let model: FakeServer;
let project: TestProject;
let turns: ScriptedTurn[] = [];
const script = (...t: ScriptedTurn[]) => {
  turns = t;
  model.requests.length = 0;
};

/** Ids of one finished exchange: the conversation and the assistant messages it streamed. */
interface Exchange {
  conversationId: string;
  answers: string[];
}

function answersOf(events: AgentEvent[]): string[] {
  return events.flatMap((e) => (e.type === 'TEXT_MESSAGE_START' && e.role === 'assistant' ? [e.messageId] : []));
}

/** One run through the real agent route with the scripted model. */
async function ask(cookie: string, text: string, threadId?: string): Promise<Exchange> {
  const res = await postAgent(server.url, project.id, cookie, userMessageBody(text, threadId));
  expect(res.events.at(-1)?.type).toBe('RUN_FINISHED');
  return { conversationId: (res.events[0] as { threadId: string }).threadId, answers: answersOf(res.events) };
}

const member = () => project.users.MEMBER;
const feedbackOf = (cookie: string) => trpcClient(server.url, cookie).agent.feedback;

/** The first conversation: a tool call, its answer, then a second question and answer. */
let first: { conversationId: string; toolAnswer: string; rated: string; later: string };
/** A second conversation of the same member, rated down for being slow only. */
let second: { conversationId: string; rated: string };

beforeAll(async () => {
  model = await startFakeOpenAI((_b, i) => turns[i] ?? { text: ['(no more turns)'] });
  useScriptedModelEnv(model.url);
  server = await startTestServer();
  project = await createProject('Feedback data');
  await createIssue(project.id, { title: 'Login fails on Safari' });

  script(
    { text: ['Let me look.'], toolCalls: [{ name: 'list_issues', args: { status: 'OPEN' } }] },
    { text: ['One issue is open: #1.'] },
  );
  const a = await ask(member().cookie, 'Which issues are open?');
  script({ text: ['Ask the owner.'] });
  const b = await ask(member().cookie, 'Who should fix it?', a.conversationId);
  expect(b.conversationId).toBe(a.conversationId);
  first = {
    conversationId: a.conversationId,
    toolAnswer: a.answers[0]!,
    rated: a.answers.at(-1)!,
    later: b.answers[0]!,
  };

  script({ text: ['Eventually, an answer.'] });
  const c = await ask(member().cookie, 'Summarize the project');
  second = { conversationId: c.conversationId, rated: c.answers[0]! };
});
afterAll(async () => {
  await server?.close();
  await model?.close();
});

describe('reasons on a thumbs down', () => {
  it('are saved in the product order, shown again, and cleared by a thumbs up', async () => {
    const fb = feedbackOf(member().cookie);
    const ref = { projectId: project.id, conversationId: second.conversationId, messageId: second.rated };
    expect(await fb.submit.mutate({ ...ref, value: -1, reasons: ['slow', 'wrong'], comment: 'Took ages' })).toEqual({
      messageId: second.rated,
      value: -1,
      comment: 'Took ages',
      reasons: ['wrong', 'slow'],
    });
    const prisma = await getPrisma();
    expect((await prisma.agentFeedback.findFirstOrThrow({ where: { messageId: second.rated } })).reasons).toEqual([
      'wrong',
      'slow',
    ]);
    const again = await trpcClient(server.url, member().cookie).agent.conversations.get.query({
      projectId: project.id,
      conversationId: second.conversationId,
    });
    expect(again.feedback[second.rated]).toEqual({ value: -1, comment: 'Took ages', reasons: ['wrong', 'slow'] });

    // A changed mind: the thumbs up leaves no reasons behind; a new thumbs down starts from its own.
    expect((await fb.submit.mutate({ ...ref, value: 1 })).reasons).toEqual([]);
    expect((await prisma.agentFeedback.findFirstOrThrow({ where: { messageId: second.rated } })).reasons).toEqual([]);
    expect(await fb.submit.mutate({ ...ref, value: -1, reasons: ['slow'] })).toMatchObject({
      value: -1,
      reasons: ['slow'],
      comment: null,
    });
  });

  it('refuses unknown or repeated reasons, and reasons with a thumbs up (BAD_REQUEST), keeping data', async () => {
    const fb = feedbackOf(member().cookie);
    const ref = { projectId: project.id, conversationId: second.conversationId, messageId: second.rated };
    const prisma = await getPrisma();
    const before = await prisma.agentFeedback.findFirstOrThrow({ where: { messageId: second.rated } });
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [
        { value: -1, reasons: ['rude'] },
        new RegExp(`Unknown feedback reason\\. Valid reasons: ${FEEDBACK_REASONS.join(', ')}\\.`),
      ],
      [{ value: -1, reasons: ['slow', 'slow'] }, /Each reason may be given once/],
      [{ value: 1, reasons: ['wrong'] }, /Reasons explain a thumbs down; a thumbs up carries none/],
      [{ value: -1, reasons: 'wrong' }, /expected array/],
    ];
    for (const [input, message] of cases) {
      const err: unknown = await fb.submit.mutate({ ...ref, ...input } as never).then(
        () => null,
        (e: unknown) => e,
      );
      const data = (
        err as { data?: { code?: string; httpStatus?: number; issues?: Array<{ message: string }> } } | null
      )?.data;
      expect(data, JSON.stringify(input)).toMatchObject({ code: 'BAD_REQUEST', httpStatus: 400 });
      expect(data?.issues?.map((i) => i.message).join(' '), JSON.stringify(input)).toMatch(message);
    }
    const after = await prisma.agentFeedback.findFirstOrThrow({ where: { messageId: second.rated } });
    expect(after).toEqual(before);
  });
});

describe('the review', () => {
  it('shows each conversation’s reasons and filters by a reason', async () => {
    const fb = feedbackOf(member().cookie);
    await fb.submit.mutate({
      projectId: project.id,
      conversationId: first.conversationId,
      messageId: first.rated,
      value: -1,
      reasons: ['wrong', 'did_not_follow_instructions'],
      comment: 'Issue #1 is closed',
    });
    await fb.submit.mutate({
      projectId: project.id,
      conversationId: first.conversationId,
      messageId: first.later,
      value: 1,
    });

    const review = trpcClient(server.url, project.users.ADMIN.cookie).agent.review;
    const all = await review.list.query({ projectId: project.id });
    const byId = new Map(all.items.map((i) => [i.id, i]));
    expect(byId.get(first.conversationId)).toMatchObject({
      reasons: ['wrong', 'did_not_follow_instructions'],
      negativeFeedback: 1,
      positiveFeedback: 1,
    });
    expect(byId.get(second.conversationId)).toMatchObject({ reasons: ['slow'], negativeFeedback: 1 });

    expect((await review.list.query({ projectId: project.id, reason: 'wrong' })).items.map((i) => i.id)).toEqual([
      first.conversationId,
    ]);
    expect((await review.list.query({ projectId: project.id, reason: 'slow' })).items.map((i) => i.id)).toEqual([
      second.conversationId,
    ]);
    expect((await review.list.query({ projectId: project.id, reason: 'unsafe' })).items).toEqual([]);
    // Combined with another filter, both apply.
    expect((await review.list.query({ projectId: project.id, filter: 'failed', reason: 'wrong' })).items).toEqual([]);
    expect(await errorCode(review.list.query({ projectId: project.id, reason: 'rude' as never }))).toBe('BAD_REQUEST');

    const detail = await review.get.query({ projectId: project.id, conversationId: first.conversationId });
    expect(detail.feedback[first.rated]).toEqual({
      value: -1,
      comment: 'Issue #1 is closed',
      reasons: ['wrong', 'did_not_follow_instructions'],
    });
  });
});

/** GETs the export as the owner of `cookie` from `base` and parses every line with the contract. */
async function exportLines(cookie: string | undefined, query = '', base = server.url) {
  const res = await fetch(`${base}/api/projects/${project.id}/in-app-agent/feedback-export${query}`, {
    headers: cookie ? { cookie } : {},
    // An export that never ends (a paging bug repeating rows) fails here instead of hanging.
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (!res.ok)
    return {
      status: res.status,
      headers: res.headers,
      error: (JSON.parse(text) as { error: { code: string; message: string } }).error,
    };
  // Every line ends with a newline; no rating, no text at all.
  expect(text === '' || text.endsWith('\n')).toBe(true);
  const lines = text
    .split('\n')
    .slice(0, -1)
    .map((l) => FeedbackExportLineSchema.parse(JSON.parse(l)));
  return { status: res.status, headers: res.headers, lines };
}

function lineFor(lines: FeedbackExportLine[] | undefined, messageId: string): FeedbackExportLine {
  const line = lines?.find((l) => l.messageId === messageId);
  if (!line) throw new Error(`no export line for ${messageId}`);
  return line;
}

describe('the JSONL export', () => {
  it('has one line per rated answer with the conversation up to and including it', async () => {
    const res = await exportLines(project.users.ADMIN.cookie);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('content-disposition')).toMatch(
      /^attachment; filename="assistant-feedback-[\w-]+-\d{4}-\d{2}-\d{2}\.jsonl"$/,
    );
    expect(res.headers.get('cache-control')).toBe('no-store');
    const prisma = await getPrisma();
    const ratings = await prisma.agentFeedback.count({ where: { conversation: { projectId: project.id } } });
    expect(res.lines).toHaveLength(ratings);
    expect(ratings).toBe(3);

    const rated = lineFor(res.lines, first.rated);
    expect(rated).toMatchObject({
      conversationId: first.conversationId,
      userId: member().id,
      rating: -1,
      reasons: ['wrong', 'did_not_follow_instructions'],
      comment: 'Issue #1 is closed',
      model: { provider: 'openai-compatible', id: 'scripted-model' },
    });
    // The conversation stops at the rated answer: the later question and answer are not in it.
    expect(rated.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(rated.messages[0]).toEqual({ role: 'user', content: 'Which issues are open?' });
    const call = rated.messages[1]!;
    expect(call).toMatchObject({ role: 'assistant', content: 'Let me look.' });
    const toolCall = call.role === 'assistant' ? call.tool_calls?.[0] : undefined;
    expect(toolCall).toMatchObject({ type: 'function', function: { name: 'list_issues' } });
    expect(JSON.parse(toolCall!.function.arguments)).toEqual({ status: 'OPEN' });
    expect(rated.messages[2]).toMatchObject({ role: 'tool', tool_call_id: toolCall!.id });
    expect(rated.messages[2]!.content).toContain('Login fails on Safari');
    expect(rated.messages.at(-1)).toEqual({ role: 'assistant', content: 'One issue is open: #1.' });
    expect(JSON.stringify(rated.messages)).not.toContain('Who should fix it?');
    expect(Date.parse(rated.answerStartedAt!)).toBeLessThanOrEqual(Date.parse(rated.answerFinishedAt!));
    expect(Date.parse(rated.ratedAt)).toBeGreaterThanOrEqual(Date.parse(rated.answerFinishedAt!));

    const later = lineFor(res.lines, first.later);
    expect(later).toMatchObject({ rating: 1, reasons: [], comment: null });
    expect(later.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user', 'assistant']);
    expect(later.messages.at(-1)).toEqual({ role: 'assistant', content: 'Ask the owner.' });
  });

  it('filters by reason (any of), rating and date range (UTC days, inclusive)', async () => {
    const owner = project.users.OWNER.cookie;
    const ids = async (q: string) => ((await exportLines(owner, q)).lines ?? []).map((l) => l.messageId).sort();
    expect(await ids('?reason=wrong')).toEqual([first.rated]);
    expect(await ids('?reason=wrong&reason=slow')).toEqual([first.rated, second.rated].sort());
    expect(await ids('?reason=unsafe')).toEqual([]);
    expect(await ids('?rating=1')).toEqual([first.later]);
    expect(await ids('?rating=-1')).toEqual([first.rated, second.rated].sort());
    // Empty form fields mean "no filter".
    expect(await ids('?from=&to=&reason=&rating=')).toHaveLength(3);

    // One rating was last changed on 2026-03-10 late in the day (UTC).
    const prisma = await getPrisma();
    await prisma.agentFeedback.updateMany({
      where: { messageId: second.rated },
      data: { updatedAt: new Date('2026-03-10T23:59:59.500Z') },
    });
    expect(await ids('?from=2026-03-10&to=2026-03-10')).toEqual([second.rated]);
    expect(await ids('?to=2026-03-10')).toEqual([second.rated]);
    expect(await ids('?from=2026-03-11&to=2026-03-31')).toEqual([]);
    expect(await ids('?from=2026-03-11')).toEqual([first.rated, first.later].sort());
    expect(await ids('?from=2026-03-10T23:59:59.000Z&to=2026-03-10T23:59:59.400Z')).toEqual([]);
    expect(await ids('?from=2026-03-10T23:59:59.000Z&to=2026-03-10T23:59:59.500Z')).toEqual([second.rated]);
  });

  it('reads page by page without skipping or repeating a rating', async () => {
    const endpoint = await startHandlerServer((req) =>
      createFeedbackExportHandler({ pageSize: 1 })(req, { params: Promise.resolve({ projectId: project.id }) }),
    );
    try {
      const paged = await exportLines(project.users.ADMIN.cookie, '', endpoint.url);
      const whole = await exportLines(project.users.ADMIN.cookie);
      expect(paged.lines).toEqual(whole.lines);
      expect(paged.lines).toHaveLength(3);
      const reasonOnly = await exportLines(project.users.ADMIN.cookie, '?reason=slow&reason=wrong', endpoint.url);
      expect(reasonOnly.lines?.map((l) => l.messageId).sort()).toEqual([first.rated, second.rated].sort());
    } finally {
      await endpoint.close();
    }
  });

  it('keeps conversations their users deleted (the review keeps them too)', async () => {
    await trpcClient(server.url, member().cookie).agent.conversations.delete.mutate({
      projectId: project.id,
      conversationId: second.conversationId,
    });
    const res = await exportLines(project.users.ADMIN.cookie, '?reason=slow');
    expect(res.lines?.map((l) => l.messageId)).toEqual([second.rated]);
  });

  it('refuses invalid filters with 400 INVALID_REQUEST and a message naming the problem', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?reason=rude', /reason\.0: Unknown feedback reason/],
      ['?from=2026-13-01', /from: /],
      ['?rating=0', /rating: /],
      ['?from=2026-03-11&to=2026-03-10', /from must not be after to/],
      ['?format=csv', /unknown parameter\(s\) format/],
    ];
    for (const [query, message] of cases) {
      const res = await exportLines(project.users.ADMIN.cookie, query);
      expect(res.status, query).toBe(400);
      expect(res.error?.code, query).toBe('INVALID_REQUEST');
      expect(res.error?.message, query).toMatch(message);
    }
  });

  it('is for owners and admins: members FORBIDDEN, strangers NOT_FOUND, signed-out UNAUTHENTICATED', async () => {
    for (const role of ['MEMBER', 'VIEWER'] as const) {
      const res = await exportLines(project.users[role].cookie);
      expect(res.status, role).toBe(403);
      expect(res.error?.code, role).toBe('FORBIDDEN');
    }
    const stranger = await createProject('Elsewhere');
    const res = await exportLines(stranger.users.OWNER.cookie);
    expect(res.status).toBe(404);
    expect(res.error?.code).toBe('PROJECT_NOT_FOUND');
    const anonymous = await exportLines(undefined);
    expect(anonymous.status).toBe(401);
    expect(anonymous.error?.code).toBe('UNAUTHENTICATED');
    expect((await exportLines(project.users.OWNER.cookie)).status).toBe(200);
  });
});
