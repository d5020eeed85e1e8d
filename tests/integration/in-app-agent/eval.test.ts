// Rated answers as a regression suite, over real HTTP and a real database: conversations recorded
// through the agent route (a read tool call, an approved write), rated, turned into datasets (by
// rating, reasons, tools used, model; a single turn; an export file), then replayed against
// candidates with scripted models: one calls a different tool, one writes (never executed: answered
// from the original or neutrally, a held call without a matching original left pending), one
// fails on a case (reported with it; the experiment goes on). The project's tables do not change
// (row counts and a checksum of the issues), comparisons and the JSONL export read the stored
// results, Stop stops, a rejected approval is replayed as rejected (never run), a judge's verdict is
// kept with its prompt, and the headless command exits non-zero when an expectation fails (also
// as a process, on PostgreSQL). Lost experiments are closed; cases go with their conversation.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { TRPCClientError } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvalCaseResultSchema, EvalReportSchema, type EvalCaseResult } from '@/features/in-app-agent/eval/schema';
import { runEvalCommand } from '@/features/in-app-agent/server/eval-headless';
import { NOT_EXECUTED_RESULT, runningExperiments } from '@/features/in-app-agent/server/eval-runner';
import { getPrisma } from '@/server/db';
import { postAgent, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;

type Body = { model?: string; messages?: Array<{ role: string; content?: unknown }> };
/** What the scripted model answers, chosen per request (experiments run cases at once). */
let answer: (body: Body, index: number) => ScriptedTurn = () => ({ text: ['(nothing scripted)'] });
const lastRole = (b: Body) => b.messages?.at(-1)?.role;
const asked = (b: Body) => JSON.stringify(b.messages?.filter((m) => m.role === 'user').at(-1)?.content ?? '');

async function appCode(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof TRPCClientError) return (err.data as { appCode?: string } | undefined)?.appCode ?? 'UNKNOWN';
    throw err;
  }
}

const admin = () => trpcClient(server.url, project.users.ADMIN.cookie).agent.eval;
const P = () => ({ projectId: project.id });

/** The original conversations: a read (list_issues), then an approved write (create_issue). */
const originals = { read: { conversationId: '', answer: '' }, write: { conversationId: '', answer: '' } };

async function record(text: string, page: Record<string, unknown>) {
  const res = await postAgent(
    server.url,
    project.id,
    project.users.MEMBER.cookie,
    userMessageBody(text, undefined, { forwardedProps: { pageContext: page } }),
  );
  return res;
}

/** Project tables an experiment must leave alone, counted, and a checksum of every issue. */
async function projectState() {
  const prisma = await getPrisma();
  const [sum] = await prisma.$queryRaw<Array<{ sum: string | null }>>`
    SELECT md5(string_agg(concat_ws('|', "id", "number", "title", "body", "status", "priority", "assigneeId",
      "updatedAt"), ',' ORDER BY "id")) AS "sum" FROM "Issue"`;
  return {
    issues: await prisma.issue.count(),
    comments: await prisma.comment.count(),
    labels: await prisma.label.count(),
    memberships: await prisma.projectMembership.count(),
    conversations: await prisma.agentConversation.count(),
    runs: await prisma.agentRun.count(),
    events: await prisma.agentEvent.count(),
    approvals: await prisma.agentPendingApproval.count(),
    feedback: await prisma.agentFeedback.count(),
    policies: await prisma.agentToolPolicyVersion.count(),
    issueChecksum: sum?.sum ?? null,
  };
}

/** Waits (bounded) until the experiment is no longer running; returns it with its results. */
async function finished(experimentId: string) {
  const until = Date.now() + 60_000;
  for (;;) {
    const e = await admin().experiments.get.query({ ...P(), experimentId });
    if (e.status !== 'RUNNING') return e;
    if (Date.now() > until) throw new Error(`experiment ${experimentId} still running: ${e.done}/${e.total}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const resultFor = (results: EvalCaseResult[], caseId: string) => {
  const r = results.find((x) => x.caseId === caseId);
  if (!r) throw new Error(`no result for ${caseId}`);
  return r;
};

let datasetId = '';
let readCase = '';
let writeCase = '';
let writeResult: unknown;

beforeAll(async () => {
  model = await startFakeOpenAI((b, i) => answer(b as Body, i));
  useScriptedModelEnv(model.url);
  server = await startTestServer();
  project = await createProject('Eval');
  await createIssue(project.id, { title: 'Login fails on Safari', reporterId: project.users.MEMBER.id });

  // 1. A read: the original lists the open issues and answers.
  answer = (b) =>
    lastRole(b) === 'tool'
      ? { text: ['One issue is open: #1 Login fails on Safari.'] }
      : { text: ['Let me look.'], toolCalls: [{ name: 'list_issues', args: { status: 'OPEN' } }] };
  const read = await record('Which issues are open?', { route: '/projects/x/issues', title: 'Issues' });
  expect(read.events.at(-1)?.type).toBe('RUN_FINISHED');
  originals.read.conversationId = (read.events[0] as { threadId: string }).threadId;

  // 2. A write held for approval, approved, then answered.
  answer = (b) =>
    lastRole(b) === 'tool'
      ? { text: ['Created #2 for the crash.'] }
      : { text: ['I will file it.'], toolCalls: [{ name: 'create_issue', args: { title: 'Crash on save' } }] };
  const held = await record('File an issue for the crash on save', { route: '/projects/x/issues/1', issueNumber: 1 });
  const fin = held.events.at(-1) as { outcome?: { type: string; interrupts?: Array<{ id: string }> } };
  expect(fin.outcome?.type).toBe('interrupt');
  const threadId = (held.events[0] as { threadId: string }).threadId;
  const resumed = await postAgent(server.url, project.id, project.users.MEMBER.cookie, {
    threadId,
    messages: [],
    resume: [{ interruptId: fin.outcome!.interrupts![0]!.id, status: 'resolved', payload: { approved: true } }],
  });
  expect(resumed.events.at(-1)?.type).toBe('RUN_FINISHED');
  originals.write.conversationId = threadId;

  // Ratings: the read is good, the write is rated down as wrong.
  const member = trpcClient(server.url, project.users.MEMBER.cookie).agent;
  for (const [o, value, reasons] of [
    [originals.read, 1, undefined],
    [originals.write, -1, ['wrong']],
  ] as const) {
    const c = await member.conversations.get.query({ ...P(), conversationId: o.conversationId });
    const answers = c.view.messages.filter((m) => m.role === 'assistant');
    o.answer = answers.at(-1)!.id;
    await member.feedback.submit.mutate({
      ...P(),
      conversationId: o.conversationId,
      messageId: o.answer,
      value,
      ...(reasons ? { reasons: [...reasons] } : {}),
    });
  }
});
afterAll(async () => {
  await server?.close();
  await model?.close();
});

describe('datasets', () => {
  it('are built from rated answers by rating, reasons, tools used and model, and hold the whole turn', async () => {
    const created = await admin().datasets.create.mutate({
      ...P(),
      name: 'Regression suite',
      filter: { rating: -1, reasons: ['wrong'] },
    });
    expect(created.added).toBe(1);
    datasetId = created.id;
    // The read answer, by the tool it used; nothing by a model no answer was written with.
    expect(await admin().datasets.addRated.mutate({ ...P(), datasetId, filter: { tools: ['list_issues'] } })).toEqual({
      added: 1,
      matched: 1,
    });
    expect(await admin().datasets.addRated.mutate({ ...P(), datasetId, filter: { model: 'another-model' } })).toEqual({
      added: 0,
      matched: 0,
    });
    // Adding the same answers again adds nothing.
    expect((await admin().datasets.addRated.mutate({ ...P(), datasetId, filter: {} })).added).toBe(0);

    const d = await admin().datasets.get.query({ ...P(), datasetId });
    expect(d.cases).toHaveLength(2);
    const write = d.cases.find((c) => c.messageId === originals.write.answer)!;
    const read = d.cases.find((c) => c.messageId === originals.read.answer)!;
    writeCase = write.id;
    readCase = read.id;
    expect(write).toMatchObject({
      rating: -1,
      reasons: ['wrong'],
      toolsUsed: ['create_issue'],
      model: 'scripted-model',
    });
    const data = write.data as {
      history: unknown[];
      userMessage: { text: string };
      pageContext: unknown;
      original: {
        answer: string;
        toolCalls: Array<{ name: string; args: unknown; decision?: string; result?: unknown }>;
      };
    };
    expect(data.history).toEqual([]);
    expect(data.userMessage.text).toBe('File an issue for the crash on save');
    expect(data.pageContext).toEqual({ route: '/projects/x/issues/1', issueNumber: 1 });
    expect(data.original.answer).toContain('Created #2 for the crash.');
    expect(data.original.toolCalls).toEqual([
      expect.objectContaining({ name: 'create_issue', args: { title: 'Crash on save' }, decision: 'approved' }),
    ]);
    writeResult = data.original.toolCalls[0]!.result;
    expect(writeResult).toMatchObject({ issue: { number: 2, title: 'Crash on save' } });
    expect(
      (read.data as { original: { toolCalls: Array<{ result?: unknown }> } }).original.toolCalls[0]!.result,
    ).toMatchObject({
      issues: expect.arrayContaining([expect.objectContaining({ number: 1 })]),
    });

    // Expectations: the read must list open issues and name #1; the write must file it, never delete.
    await admin().cases.setExpectations.mutate({
      ...P(),
      caseId: readCase,
      expectations: [
        { kind: 'calls', tool: 'list_issues', args: { status: 'OPEN' } },
        { kind: 'mentions', text: '#1' },
      ],
    });
    await admin().cases.setExpectations.mutate({
      ...P(),
      caseId: writeCase,
      expectations: [
        { kind: 'calls', tool: 'create_issue' },
        { kind: 'not_calls', tool: 'delete_issue' },
      ],
    });
  });

  it('take a single turn of a conversation, and the lines of an export file (strangers reported)', async () => {
    const single = await admin().datasets.create.mutate({ ...P(), name: 'Single turn' });
    expect(
      await admin().datasets.addConversation.mutate({
        ...P(),
        datasetId: single.id,
        conversationId: originals.read.conversationId,
        messageId: originals.read.answer,
      }),
    ).toEqual({ added: 1, matched: 1 });

    const exported = await fetch(`${server.url}/api/projects/${project.id}/in-app-agent/feedback-export`, {
      headers: { cookie: project.users.ADMIN.cookie },
    }).then((r) => r.text());
    const lines = exported.trim().split('\n');
    expect(lines).toHaveLength(2);
    const stranger = JSON.stringify({ ...JSON.parse(lines[0]!), userId: 'u_nobody', messageId: 'm_other' });
    const imported = await admin().datasets.create.mutate({ ...P(), name: 'From a file' });
    const res = await admin().datasets.import.mutate({
      ...P(),
      datasetId: imported.id,
      jsonl: `${exported}${stranger}\nnot json\n`,
    });
    expect(res.added).toBe(2);
    expect(res.problems).toEqual([
      { line: 3, code: 'NOT_A_MEMBER', message: expect.any(String) },
      { line: 4, code: 'INVALID_LINE', message: 'Not JSON.' },
    ]);
    const d = await admin().datasets.get.query({ ...P(), datasetId: imported.id });
    const write = d.cases.find((c) => c.messageId === originals.write.answer)!;
    expect(write.source).toBe('export');
    expect((write.data as { original: { toolCalls: unknown[] } }).original.toolCalls).toEqual([
      expect.objectContaining({ name: 'create_issue', args: { title: 'Crash on save' } }),
    ]);
  });

  it('are read by admins and changed by agent:manage only; names are unique; bad input has a code', async () => {
    const member = trpcClient(server.url, project.users.MEMBER.cookie).agent.eval;
    expect(await errorCode(member.datasets.list.query(P()))).toBe('FORBIDDEN');
    expect(await errorCode(member.datasets.create.mutate({ ...P(), name: 'Mine' }))).toBe('FORBIDDEN');
    expect(await appCode(admin().datasets.create.mutate({ ...P(), name: 'Regression suite' }))).toBe(
      'DATASET_NAME_TAKEN',
    );
    expect(await errorCode(admin().datasets.create.mutate({ ...P(), name: '<script>' }))).toBe('BAD_REQUEST');
    expect(await appCode(admin().datasets.get.query({ ...P(), datasetId: 'ds_missing' }))).toBe('DATASET_NOT_FOUND');
    expect(
      await errorCode(
        admin().cases.setExpectations.mutate({ ...P(), caseId: readCase, expectations: [{ kind: 'guess' }] as never }),
      ),
    ).toBe('BAD_REQUEST');
    const other = await createProject('Other');
    expect(
      await errorCode(
        trpcClient(server.url, other.users.ADMIN.cookie).agent.eval.datasets.get.query({
          projectId: other.id,
          datasetId,
        }),
      ),
    ).toBe('NOT_FOUND');
  });
});

describe('experiments', () => {
  let otherTool = '';
  let writes = '';
  let before: Awaited<ReturnType<typeof projectState>>;

  beforeAll(async () => {
    before = await projectState();
    answer = (b) => {
      const m = b.model;
      if (m === 'cand-other-tool')
        return lastRole(b) === 'tool'
          ? { text: ['Found the login issue.'] }
          : { text: ['Searching.'], toolCalls: [{ name: 'search_issues', args: { query: 'login' } }] };
      if (m === 'cand-writes')
        return lastRole(b) === 'tool'
          ? { text: ['Done.'] }
          : {
              toolCalls: [
                { name: 'create_issue', args: { title: 'Crash on save' } },
                { name: 'add_comment', args: { number: 1, body: 'Seen again today.' } },
              ],
            };
      if (m === 'cand-fails') return asked(b).includes('open') ? { status: 500 } : { text: ['Created it.'] };
      return { text: ['(unknown candidate)'] };
    };
  });

  it('shows a cost estimate before it starts', async () => {
    const estimate = await admin().experiments.estimate.query({
      ...P(),
      datasetId,
      candidate: { name: 'priced', prices: { input: 3, output: 15 } },
    });
    expect(estimate.cases).toBe(2);
    expect(estimate.inputTokens).toBeGreaterThan(0);
    expect(estimate.outputTokens).toBeGreaterThan(0);
    expect(estimate.costUsd).toBeCloseTo((estimate.inputTokens * 3 + estimate.outputTokens * 15) / 1e6, 8);
    // Without prices for the candidate's model there is no cost to show.
    const unpriced = await admin().experiments.estimate.query({
      ...P(),
      datasetId,
      candidate: { name: 'other', model: { modelId: 'cand-x' } },
    });
    expect(unpriced.costUsd).toBeNull();
  });

  it('a candidate that calls another tool: reads run for real as the user, the diffs say what changed', async () => {
    const { experimentId } = await admin().experiments.start.mutate({
      ...P(),
      datasetId,
      candidate: { name: 'Other tool', model: { modelId: 'cand-other-tool' }, prices: { input: 1, output: 2 } },
    });
    otherTool = experimentId;
    const e = await finished(experimentId);
    expect(e).toMatchObject({ status: 'COMPLETED', total: 2, done: 2, passed: 0, errored: 0 });
    const read = resultFor(e.results, readCase);
    expect(read.outcome).toBe('completed');
    expect(read.toolCalls).toEqual([
      expect.objectContaining({ name: 'search_issues', args: { query: 'login' }, mode: 'ran' }),
    ]);
    // The search ran against the real issues with the member's role.
    expect(read.toolCalls[0]!.result).toMatchObject({
      issues: [expect.objectContaining({ number: 1, title: 'Login fails on Safari' })],
    });
    expect(read.toolDiff).toEqual({
      matched: [],
      added: [{ name: 'search_issues', args: { query: 'login' } }],
      removed: [{ name: 'list_issues', args: { status: 'OPEN' } }],
    });
    expect(read.expectations.map((x) => [x.expectation.kind, x.passed])).toEqual([
      ['calls', false],
      ['mentions', false],
    ]);
    expect(read.passed).toBe(false);
    // The word diff reads back as either answer, and marks what is new and what went away.
    const side = (op: string) =>
      read.answerDiff
        .filter((p) => p.op === 'same' || p.op === op)
        .map((p) => p.text)
        .join('');
    expect(side('added')).toBe(read.answer);
    expect(side('removed')).toBe(read.originalAnswer);
    expect(read.answer).toBe('Searching.\n\nFound the login issue.');
    expect(read.answerDiff).toContainEqual({ op: 'added', text: expect.stringContaining('Found') });
    expect(read.answerDiff).toContainEqual({ op: 'removed', text: expect.stringContaining('Safari.') });
    expect(read.usage.inputTokens).toBeGreaterThan(0);
    expect(read.usage.costUsd).toBeGreaterThan(0);
    expect(read.latencyMs).toBeGreaterThanOrEqual(0);
    // The experiment's key is revoked: nothing can call the MCP server with it afterwards.
    const keys = await (await getPrisma()).apiKey.findMany({ where: { runId: experimentId } });
    expect(keys.length).toBe(2);
    expect(keys.every((k) => k.revokedAt !== null)).toBe(true);
  });

  it('a candidate that writes: nothing is executed; the original answers a matching call, the rest is neutral or pending', async () => {
    const { experimentId } = await admin().experiments.start.mutate({
      ...P(),
      datasetId,
      candidate: {
        name: 'Writes',
        model: { modelId: 'cand-writes' },
        // Comments run unasked for members with this candidate's policy.
        toolPolicy: { cells: { add_comment: { MEMBER: 'auto' } }, rules: {} },
      },
    });
    writes = experimentId;
    const e = await finished(experimentId);
    expect(e.status).toBe('COMPLETED');
    // The write case: create_issue held, decided as the original decided it (approved), answered
    // with the original's recorded result; add_comment not executed.
    const write = resultFor(e.results, writeCase);
    expect(write.outcome).toBe('completed');
    const byName = Object.fromEntries(write.toolCalls.map((c) => [c.name, c]));
    expect(byName.create_issue).toMatchObject({ mode: 'replayed', approval: 'approved', result: writeResult });
    expect(byName.add_comment).toMatchObject({ mode: 'not_executed', result: NOT_EXECUTED_RESULT });
    expect(write.toolDiff).toEqual({
      matched: [{ name: 'create_issue', args: [] }],
      added: [{ name: 'add_comment', args: { number: 1, body: 'Seen again today.' } }],
      removed: [],
    });
    expect(write.expectations.every((x) => x.passed)).toBe(true);
    expect(write.passed).toBe(true);
    // The read case: no original create_issue to decide from, so it is pending (as the real run
    // would be); the comment is still not executed.
    const read = resultFor(e.results, readCase);
    expect(read.outcome).toBe('pending');
    expect(read.pending).toEqual([
      { kind: 'tool_approval', toolName: 'create_issue', args: { title: 'Crash on save' } },
    ]);
    expect(read.toolCalls.find((c) => c.name === 'create_issue')).toMatchObject({
      mode: 'pending',
      approval: 'pending',
    });
    expect(read.toolCalls.find((c) => c.name === 'add_comment')).toMatchObject({ mode: 'not_executed' });
  });

  it('a candidate that fails on a case: the case reports its error, the experiment goes on', async () => {
    const { experimentId } = await admin().experiments.start.mutate({
      ...P(),
      datasetId,
      candidate: { name: 'Fails', model: { modelId: 'cand-fails' }, concurrency: 1 },
    });
    const e = await finished(experimentId);
    expect(e).toMatchObject({ status: 'COMPLETED', done: 2, errored: 1 });
    const read = resultFor(e.results, readCase);
    expect(read.outcome).toBe('error');
    expect(read.error?.code).toMatch(/^MODEL_/);
    expect(read.passed).toBe(false);
    const write = resultFor(e.results, writeCase);
    expect(write.outcome).toBe('completed');
    expect(write.answer).toBe('Created it.');
    // Without the tool call it was expected to make.
    expect(write.expectations.find((x) => x.expectation.kind === 'calls')?.passed).toBe(false);
  });

  it('changes nothing in the project (row counts, the issues checksum) and leaves nothing running', async () => {
    expect(await projectState()).toEqual(before);
    expect(runningExperiments()).toBe(0);
  });

  it('compares two experiments of a dataset case by case, and exports results as JSONL', async () => {
    const cmp = await admin().experiments.compare.query({ ...P(), baseId: otherTool, otherId: writes });
    const verdict = Object.fromEntries(cmp.cases.map((c) => [c.caseId, c.verdict]));
    // The write case passes with the writing candidate; the read case is no better either way.
    expect(verdict[writeCase]).toBe('better');
    expect(cmp.summary.better).toBe(1);
    expect(cmp.cases).toHaveLength(2);

    const exported = await admin().experiments.export.query({ ...P(), experimentId: writes });
    const lines = exported.jsonl
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line.experimentId).toBe(writes);
      expect(EvalCaseResultSchema.safeParse(line).success).toBe(true);
    }
    const other = await admin().datasets.create.mutate({ ...P(), name: 'Elsewhere' });
    await admin().datasets.addConversation.mutate({
      ...P(),
      datasetId: other.id,
      conversationId: originals.read.conversationId,
    });
    expect(
      await appCode(
        admin().experiments.start.mutate({
          ...P(),
          datasetId: other.id,
          candidate: { name: 'x', systemPromptVersion: '000000000000' },
        }),
      ),
    ).toBe('SYSTEM_PROMPT_VERSION_MISMATCH');
  });

  it('Stop ends a running experiment: the case in flight is dropped, the rest not started', async () => {
    let release!: () => void;
    const hold = new Promise<void>((r) => {
      release = r;
    });
    let calls = 0;
    answer = () => {
      calls++;
      return { text: ['slow'], hold, holdAfter: 0 };
    };
    const { experimentId } = await admin().experiments.start.mutate({
      ...P(),
      datasetId,
      candidate: { name: 'Slow', model: { modelId: 'cand-slow' }, concurrency: 1 },
    });
    // The first case reached the model (bounded wait).
    const until = Date.now() + 30_000;
    while (calls === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    expect(await appCode(admin().experiments.start.mutate({ ...P(), datasetId, candidate: { name: 'Again' } }))).toBe(
      'EXPERIMENT_RUNNING',
    );
    expect(await admin().experiments.stop.mutate({ ...P(), experimentId })).toEqual({ stopping: true });
    const e = await finished(experimentId);
    release();
    expect(e.status).toBe('STOPPED');
    expect(e.done).toBe(0);
    expect(calls).toBe(1);
    expect(runningExperiments()).toBe(0);
  });
});

describe('a rejected approval', () => {
  it('is decided as the original decided it: the call gets the rejection and never runs; other arguments wait (issue 1 stays open)', async () => {
    const prisma = await getPrisma();
    // The original: a close held for approval and rejected.
    answer = (b) =>
      lastRole(b) === 'tool'
        ? { text: ['I did not close it.'] }
        : { toolCalls: [{ name: 'close_issue', args: { number: 1 } }] };
    const held = await record('Close issue 1', {});
    const fin = held.events.at(-1) as { outcome?: { interrupts?: Array<{ id: string }> } };
    const threadId = (held.events[0] as { threadId: string }).threadId;
    const resumed = await postAgent(server.url, project.id, project.users.MEMBER.cookie, {
      threadId,
      messages: [],
      resume: [
        {
          interruptId: fin.outcome!.interrupts![0]!.id,
          status: 'resolved',
          payload: { approved: false, feedback: 'Keep it' },
        },
      ],
    });
    expect(resumed.events.at(-1)?.type).toBe('RUN_FINISHED');
    const d = await admin().datasets.create.mutate({ ...P(), name: 'Rejected' });
    await admin().datasets.addConversation.mutate({ ...P(), datasetId: d.id, conversationId: threadId });
    const [c] = (await admin().datasets.get.query({ ...P(), datasetId: d.id })).cases;
    const original = (c!.data as { original: { toolCalls: Array<{ decision?: string; result?: unknown }> } }).original
      .toolCalls[0]!;
    expect(original.decision).toBe('rejected');
    const issues = await prisma.issue.count({ where: { projectId: project.id } });

    for (const [modelId, number] of [
      ['cand-same-close', 1],
      ['cand-other-close', 2],
    ] as const) {
      answer = (b) =>
        b.model !== modelId || lastRole(b) === 'tool'
          ? { text: ['Done.'] }
          : { toolCalls: [{ name: 'close_issue', args: { number } }] };
      const { experimentId } = await admin().experiments.start.mutate({
        ...P(),
        datasetId: d.id,
        candidate: { name: modelId, model: { modelId } },
      });
      const [r] = (await finished(experimentId)).results;
      const call = r!.toolCalls[0]!;
      if (number === 1) {
        expect(r!.outcome).toBe('completed');
        expect(call).toMatchObject({
          name: 'close_issue',
          mode: 'replayed',
          approval: 'rejected',
          result: original.result,
        });
      } else {
        expect(r!.outcome).toBe('pending');
        expect(call).toMatchObject({ mode: 'pending', approval: 'pending' });
      }
    }
    expect(await prisma.issue.count({ where: { projectId: project.id } })).toBe(issues);
    expect(
      (await prisma.issue.findUniqueOrThrow({ where: { projectId_number: { projectId: project.id, number: 1 } } }))
        .status,
    ).toBe('OPEN');
  });
});

describe('a judge', () => {
  it('scores each answer by the rubric and keeps the prompt it was given; an unreadable verdict is reported', async () => {
    const judged: Body[] = [];
    answer = (b) => {
      if (b.model === 'judge-model') {
        judged.push(b);
        return { text: ['{"score": 7, "reason": "Names the issue but not its status."}'] };
      }
      if (b.model === 'judge-mumbles') return { text: ['Looks fine to me.'] };
      return lastRole(b) === 'tool'
        ? { text: ['Issue #1 is about Safari.'] }
        : { toolCalls: [{ name: 'get_issue', args: { number: 1 } }] };
    };
    const rubric = 'Score 10 when the answer names the issue and its status.';
    const { experimentId } = await admin().experiments.start.mutate({
      ...P(),
      datasetId,
      candidate: { name: 'Judged', model: { modelId: 'cand-judged' }, judge: { rubric, modelId: 'judge-model' } },
    });
    const e = await finished(experimentId);
    expect(e.status).toBe('COMPLETED');
    const read = resultFor(e.results, readCase);
    expect(read.judge).toMatchObject({ score: 7, reason: 'Names the issue but not its status.', model: 'judge-model' });
    const prompt = (read.judge as { prompt: string }).prompt;
    expect(prompt).toContain(JSON.stringify(rubric));
    expect(prompt).toContain('Issue #1 is about Safari.');
    expect(prompt).toContain('Which issues are open?');
    // The judge was sent exactly that prompt, once per case.
    expect(judged).toHaveLength(2);
    expect(JSON.stringify(judged.map((b) => b.messages))).toContain(JSON.stringify(prompt).slice(1, 60));

    const mumbled = await admin().experiments.start.mutate({
      ...P(),
      datasetId,
      candidate: {
        name: 'Judged badly',
        model: { modelId: 'cand-judged' },
        judge: { rubric, modelId: 'judge-mumbles' },
      },
    });
    const m = await finished(mumbled.experimentId);
    expect(resultFor(m.results, readCase).judge).toMatchObject({
      error: 'The judge did not answer with a score and a reason.',
      model: 'judge-mumbles',
    });
    // The verdict does not decide passing: the expectations do.
    expect(resultFor(m.results, readCase).passed).toBe(resultFor(e.results, readCase).passed);
  });
});

describe('npm run eval', () => {
  it('prints a JSON report and exits 1 when an expectation fails, 0 when all pass, 2 on bad input', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'eval-'));
    const file = (name: string, body: unknown) => {
      const p = path.join(dir, name);
      writeFileSync(p, typeof body === 'string' ? body : JSON.stringify(body));
      return p;
    };
    const prisma = await getPrisma();
    const run = async (argv: string[]) => {
      let out = '';
      let err = '';
      const code = await runEvalCommand(argv, { prisma, out: (t) => (out += t), err: (t) => (err += t) });
      return { code, out, err };
    };
    answer = (b) =>
      b.model === 'cand-good'
        ? lastRole(b) === 'tool'
          ? { text: ['Open: #1, and #2 was created.'] }
          : asked(b).includes('open')
            ? { toolCalls: [{ name: 'list_issues', args: { status: 'OPEN' } }] }
            : { toolCalls: [{ name: 'create_issue', args: { title: 'Crash on save' } }] }
        : lastRole(b) === 'tool'
          ? { text: ['Done.'] }
          : { toolCalls: [{ name: 'search_issues', args: { query: 'x' } }] };

    const failing = await run([
      '--dataset',
      'Regression suite',
      '--candidate',
      file('bad.json', { name: 'CI bad', model: { modelId: 'cand-ci' } }),
    ]);
    expect(failing.code).toBe(1);
    const report = EvalReportSchema.parse(JSON.parse(failing.out));
    expect(report).toMatchObject({ dataset: 'Regression suite', candidate: 'CI bad', status: 'COMPLETED' });
    expect(report.totals.cases).toBe(2);
    expect(report.totals.failedExpectations).toBeGreaterThan(0);

    const passing = await run([
      '--dataset',
      'Regression suite',
      '--candidate',
      file('good.json', { name: 'CI good', model: { modelId: 'cand-good' } }),
    ]);
    expect(passing.err).toBe('');
    const good = EvalReportSchema.parse(JSON.parse(passing.out));
    expect(good.totals).toMatchObject({ cases: 2, passed: 2, failedExpectations: 0, errors: 0 });
    expect(passing.code).toBe(0);

    expect((await run(['--dataset', 'Regression suite'])).code).toBe(2);
    const missing = await run(['--dataset', 'No such', '--candidate', file('c.json', { name: 'c' })]);
    expect(missing).toMatchObject({ code: 2, err: expect.stringContaining('No dataset named "No such"') });
    const invalid = await run([
      '--dataset',
      'Regression suite',
      '--candidate',
      file('x.json', { name: 'x', url: 'http://evil' }),
    ]);
    expect(invalid).toMatchObject({ code: 2, err: expect.stringContaining('not a candidate') });
    expect((await run(['--dataset', 'Regression suite', '--candidate', file('y.json', '{oops')])).code).toBe(2);
  });
});

describe('npm run eval, as a process', () => {
  // The command opens the database the environment names: a PostgreSQL database of its own here
  // (an in-memory one cannot be shared with another process).
  it.runIf(process.env.DATABASE_URL)(
    'prints the report on stdout and exits 1 when an expectation fails',
    async () => {
      answer = (b) =>
        lastRole(b) === 'tool' ? { text: ['Done.'] } : { toolCalls: [{ name: 'search_issues', args: { query: 'y' } }] };
      const dir = mkdtempSync(path.join(tmpdir(), 'eval-cli-'));
      const candidate = path.join(dir, 'candidate.json');
      writeFileSync(candidate, JSON.stringify({ name: 'From the shell', model: { modelId: 'cand-shell' } }));
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'scripts/eval.ts', '--dataset', 'Regression suite', '--candidate', candidate],
        { cwd: process.cwd(), env: process.env, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (err += c.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      expect({ code, err: err.slice(0, 2000) }).toMatchObject({ code: 1 });
      const report = EvalReportSchema.parse(JSON.parse(out));
      expect(report).toMatchObject({ candidate: 'From the shell', status: 'COMPLETED', totals: { cases: 2 } });
      expect(report.cases.flatMap((c) => c.toolCalls.map((t) => t.name))).toEqual(['search_issues', 'search_issues']);
    },
    120_000,
  );
});

describe('housekeeping', () => {
  it('closes an experiment whose instance went away, removes cases and datasets', async () => {
    const prisma = await getPrisma();
    const d = await admin().datasets.create.mutate({ ...P(), name: 'Housekeeping' });
    await admin().datasets.addConversation.mutate({
      ...P(),
      datasetId: d.id,
      conversationId: originals.read.conversationId,
    });
    // An experiment another instance was running, silent for ten minutes.
    await prisma.agentEvalExperiment.create({
      data: {
        id: 'exp_gone',
        datasetId: d.id,
        projectId: project.id,
        name: 'Gone',
        candidate: { name: 'Gone' },
        systemPromptVersion: '000000000000',
        total: 1,
        owner: 'inst_elsewhere',
        heartbeatAt: new Date(Date.now() - 600_000),
      },
    });
    // While it counts as running, the dataset cannot be deleted.
    expect(await appCode(admin().datasets.delete.mutate({ ...P(), datasetId: d.id }))).toBe('EXPERIMENT_RUNNING');
    // The next read closes it: failed, lost, the dataset free again.
    const read = await admin().datasets.get.query({ ...P(), datasetId: d.id });
    expect(read.experiments).toEqual([
      expect.objectContaining({ id: 'exp_gone', status: 'FAILED', errorCode: 'EXPERIMENT_LOST' }),
    ]);
    expect(read.cases).toHaveLength(1);
    await admin().cases.remove.mutate({ ...P(), caseId: read.cases[0]!.id });
    expect((await admin().datasets.get.query({ ...P(), datasetId: d.id })).cases).toHaveLength(0);
    expect(await appCode(admin().cases.remove.mutate({ ...P(), caseId: read.cases[0]!.id }))).toBe('CASE_NOT_FOUND');
    expect(await admin().datasets.delete.mutate({ ...P(), datasetId: d.id })).toEqual({ deleted: true });
    expect(await appCode(admin().datasets.get.query({ ...P(), datasetId: d.id }))).toBe('DATASET_NOT_FOUND');
    expect(await prisma.agentEvalExperiment.count({ where: { id: 'exp_gone' } })).toBe(0);
  });

  it("removes a conversation's cases and their results with it (retention, a member's data deleted)", async () => {
    const prisma = await getPrisma();
    const before = await prisma.agentEvalCase.count({ where: { conversationId: originals.write.conversationId } });
    expect(before).toBeGreaterThanOrEqual(1);
    expect(await prisma.agentEvalResult.count({ where: { caseId: writeCase } })).toBeGreaterThan(0);
    const exported = await prisma.agentEvalCase.count({ where: { source: 'export' } });
    await prisma.agentConversation.delete({ where: { id: originals.write.conversationId } });
    expect(await prisma.agentEvalCase.count({ where: { conversationId: originals.write.conversationId } })).toBe(0);
    expect(await prisma.agentEvalResult.count({ where: { caseId: writeCase } })).toBe(0);
    // Cases imported from a file are the admin's copy: they stay.
    expect(await prisma.agentEvalCase.count({ where: { source: 'export' } })).toBe(exported);
  });
});
