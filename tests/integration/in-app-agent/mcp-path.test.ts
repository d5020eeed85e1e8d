// Every tool call of the assistant goes through the product's MCP server with the run's own key,
// in process or over HTTP: the key check (a revoked key is refused), the scope check (a user
// removed from the project mid-run loses the tools), the single-use override for approved calls
// (consumed once, bound to the key), and the audit (one row per call, with the key, the run and
// the tool call id). A shortcut around the MCP server fails this file. And under a burst of 50
// runs started at once, every model request carries the product's tools, or the run ends with
// TOOLS_UNAVAILABLE: never a silent answer without them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentRoutes } from '@/features/in-app-agent/server/handler';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { postAgent, startRunStream, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, createUser, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let noTools: TestServer;
let model: FakeServer;
let project: TestProject;
let turns: ((body: Record<string, unknown>) => ScriptedTurn) | ScriptedTurn[] = [];

beforeAll(async () => {
  model = await startFakeOpenAI((body, i) =>
    typeof turns === 'function' ? turns(body) : (turns[i] ?? { text: ['(no more turns)'] }),
  );
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  useScriptedModelEnv(model.url);
  server = await startTestServer();
  // The same routes with the product's MCP server out of reach (a closed port).
  const port = process.env.PORT;
  noTools = await startTestServer({
    agentRoutes: createAgentRoutes({ mcpUrl: 'http://127.0.0.1:9/api/public/mcp' }) as never,
  });
  process.env.PORT = port;
  project = await createProject('Audited');
  await createIssue(project.id, { title: 'Audited issue' });
});

afterAll(async () => {
  await noTools?.close();
  await server?.close();
  await model?.close();
});

const member = () => project.users.MEMBER;
/** The model has started answering (its first words arrived): the run's key exists. */
const modelStarted = (ev: Array<{ event: { type: string; delta?: string } }>) =>
  ev.some((e) => e.event.type === 'TEXT_MESSAGE_CONTENT' && e.event.delta === 'Thinking');
const toolNamesOf = (body: Record<string, unknown>) =>
  ((body.tools ?? []) as Array<{ function?: { name?: string } }>)
    .map((t) => t.function?.name)
    .filter(Boolean) as string[];

describe('the assistant reaches the product only through its MCP server', () => {
  it('audits a read with the run key, the run and the tool call id', async () => {
    turns = [{ toolCalls: [{ name: 'list_issues', args: {} }] }, { text: ['Listed.'] }];
    model.requests.length = 0;
    const res = await postAgent(server.url, project.id, member().cookie, userMessageBody('list them'));
    const runId = (res.events[0] as { runId: string }).runId;
    const call = res.events.find((e) => e.type === 'TOOL_CALL_START') as { toolCallId: string };
    const prisma = await getPrisma();
    const key = await prisma.apiKey.findFirstOrThrow({ where: { runId } });
    expect(key.kind).toBe('IN_APP_AGENT');
    const audit = await prisma.toolCallAudit.findMany({ where: { runId } });
    expect(audit).toEqual([
      expect.objectContaining({
        tool: 'list_issues',
        status: 'OK',
        apiKeyId: key.id,
        toolCallId: call.toolCallId,
        userId: member().id,
      }),
    ]);
  });

  it('refuses a call with a key revoked during the run, and a user removed from the project loses the tools', async () => {
    const prisma = await getPrisma();
    // The model is slow to ask for the tool; meanwhile the run's key is revoked.
    turns = [
      { text: ['Thinking'], stallMs: 600, toolCalls: [{ name: 'list_issues', args: {} }] },
      { text: ['After.'] },
    ];
    model.requests.length = 0;
    let revoking = false;
    const revoked = await startRunStream(server.url, project.id, member().cookie, userMessageBody('slowly'), (ev) => {
      if (!revoking && modelStarted(ev)) {
        revoking = true;
        const runId = (ev[0]!.event as { runId: string }).runId;
        // Prisma queries run when awaited or `then`-ed, not when built.
        prisma.apiKey.updateMany({ where: { runId }, data: { revokedAt: new Date() } }).then(() => undefined);
      }
      return false;
    });
    const result = revoked.events.find((e) => e.event.type === 'TOOL_CALL_RESULT')!.event as { content: string };
    expect(JSON.parse(result.content)).toMatchObject({ isError: true, error: expect.stringMatching(/revoked/i) });

    const leaver = await createUser('Leaver');
    await prisma.projectMembership.create({
      data: { id: newId('m_'), projectId: project.id, userId: leaver.id, role: 'MEMBER' },
    });
    turns = [
      { text: ['Thinking'], stallMs: 600, toolCalls: [{ name: 'list_issues', args: {} }] },
      { text: ['After.'] },
    ];
    model.requests.length = 0;
    let removing = false;
    const removed = await startRunStream(server.url, project.id, leaver.cookie, userMessageBody('slowly'), (ev) => {
      if (!removing && modelStarted(ev)) {
        removing = true;
        prisma.projectMembership
          .deleteMany({ where: { projectId: project.id, userId: leaver.id } })
          .then(() => undefined);
      }
      return false;
    });
    const refused = removed.events.find((e) => e.event.type === 'TOOL_CALL_RESULT')!.event as { content: string };
    expect(JSON.parse(refused.content)).toMatchObject({
      isError: true,
      error: expect.stringMatching(/does not allow list_issues/),
    });
    const runId = (removed.events[0]!.event as { runId: string }).runId;
    expect(await prisma.toolCallAudit.findFirst({ where: { runId } })).toMatchObject({
      status: 'DENIED',
      errorCode: 'MISSING_SCOPE',
    });
  });

  it('runs an approved call once, with an override bound to the run key, and audits it', async () => {
    turns = [{ toolCalls: [{ name: 'close_issue', args: { number: 1 } }] }, { text: ['Closed.'] }];
    model.requests.length = 0;
    const held = await postAgent(server.url, project.id, member().cookie, userMessageBody('close it'));
    const { runId, threadId } = held.events[0] as { runId: string; threadId: string };
    const interrupts = (held.events.at(-1) as { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;
    const prisma = await getPrisma();
    // Held, not run: nothing audited for the held call, the issue still open.
    expect(await prisma.toolCallAudit.count({ where: { runId } })).toBe(0);
    const resumed = await postAgent(server.url, project.id, member().cookie, {
      threadId,
      messages: [],
      resume: [{ interruptId: interrupts[0]!.id, status: 'resolved', payload: { approved: true } }],
    });
    const resumeRunId = (resumed.events[0] as { runId: string }).runId;
    const key = await prisma.apiKey.findFirstOrThrow({ where: { runId: resumeRunId } });
    const overrides = await prisma.mcpOverrideUse.findMany({ where: { apiKeyId: key.id } });
    expect(overrides).toEqual([expect.objectContaining({ tool: 'close_issue' })]);
    expect(await prisma.toolCallAudit.findMany({ where: { runId: resumeRunId } })).toEqual([
      expect.objectContaining({ tool: 'close_issue', status: 'OK', apiKeyId: key.id }),
    ]);
    expect((await prisma.issue.findFirstOrThrow({ where: { projectId: project.id, number: 1 } })).status).toBe(
      'CLOSED',
    );
  });
});

describe('50 runs started at once', () => {
  it('gives every model request the product tools', { timeout: 120_000 }, async () => {
    turns = () => ({ text: ['ok'] });
    model.requests.length = 0;
    const users = await Promise.all(
      Array.from({ length: 50 }, async () => {
        const u = await createUser('Burst');
        await (await getPrisma()).projectMembership.create({
          data: { id: newId('m_'), projectId: project.id, userId: u.id, role: 'MEMBER' },
        });
        return u;
      }),
    );
    // What an operator would see in the log: no MaxListenersExceededWarning under the burst.
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
    process.on('warning', onWarning);
    let results: Awaited<ReturnType<typeof postAgent>>[];
    try {
      results = await Promise.all(
        users.map((u) => postAgent(server.url, project.id, u.cookie, userMessageBody('hello'))),
      );
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
    expect(results.every((r) => r.status === 200 && r.events.at(-1)?.type === 'RUN_FINISHED')).toBe(true);
    expect(model.requests).toHaveLength(50);
    for (const body of model.requests)
      expect(toolNamesOf(body)).toEqual(
        expect.arrayContaining(['list_issues', 'get_issue', 'create_issue', 'navigate']),
      );
  });

  it('ends every run with TOOLS_UNAVAILABLE when the tools cannot be listed, never asking the model without them', {
    timeout: 120_000,
  }, async () => {
    turns = () => ({ text: ['an answer without tools'] });
    model.requests.length = 0;
    const results = await Promise.all(
      Array.from({ length: 50 }, () => postAgent(noTools.url, project.id, member().cookie, userMessageBody('hello'))),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok.length).toBeGreaterThan(0); // the others: 409, one run per conversation is fine, 429 too
    for (const r of ok) expect(r.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'TOOLS_UNAVAILABLE' });
    expect(model.requests.filter((b) => !toolNamesOf(b).includes('list_issues'))).toEqual([]);
  });
});
