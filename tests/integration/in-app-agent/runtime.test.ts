// The run's runtime over real HTTP, a real database and the product's real MCP server: heartbeat
// and key lifetime during long runs, the model idle timeout, the periodic stale sweep, the local
// tools, and where the run key is sent.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { createAgentHandler, resolveMcpTarget } from '@/features/in-app-agent/server/handler';
import { mintAgentKey } from '@/server/api-keys';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import {
  agentUrl,
  parseSse,
  postAgent,
  textOf,
  types,
  userMessageBody,
  useScriptedModelEnv,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject, type TestUser } from '../../helpers/fixtures';
import { startMcpProxy, type McpProxy } from '../../helpers/mcp-proxy';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let tuned: TestServer;
let model: FakeServer;
let proxy: McpProxy;
let project: TestProject;
let turns: ScriptedTurn[] = [];

function script(...t: ScriptedTurn[]) {
  turns = t;
  model.requests.length = 0;
  model.abandoned.length = 0;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const runIdOf = (events: AgentEvent[]) => (events[0] as { runId: string }).runId;
const threadOf = (events: AgentEvent[]) => (events[0] as { threadId: string }).threadId;

async function expectReplayEqualsStream(user: TestUser, baseUrl: string, threadId: string, streamed: AgentEvent[]) {
  const replay = await trpcClient(baseUrl, user.cookie).agent.conversations.get.query({
    projectId: project.id,
    conversationId: threadId,
  });
  expect(replay.view).toEqual(foldEvents(streamed, emptyView(threadId)));
}

beforeAll(async () => {
  model = await startFakeOpenAI((_b, i) => turns[i] ?? { text: ['(no more turns)'] });
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  useScriptedModelEnv(model.url);
  // A fast stale sweep (the assistant's services start with the first server of the process).
  server = await startTestServer({ staleSweepMs: 200 });
  proxy = await startMcpProxy(() => server.url);
  // A handler tuned for fast tests: short heartbeat, a key that would expire within a run without
  // the heartbeat, a short model idle timeout; MCP through the proxy.
  const port = process.env.PORT;
  tuned = await startTestServer({
    agentHandler: createAgentHandler({
      heartbeatMs: 100,
      runKeyTtlSeconds: 1,
      modelIdleTimeoutMs: 1_000,
      mcpUrl: proxy.url,
    }) as never,
  });
  process.env.PORT = port; // the default route keeps calling the main server's MCP endpoint
  project = await createProject('Runtime');
  await createIssue(project.id, { title: 'Login button broken' });
  await createIssue(project.id, { title: 'Dark mode' });
  // A first answer warms the process (schemas converted, the tool listing cached), so the tests
  // below spend their 1 s run keys on their own runs, not on a cold start.
  script({ text: ['warm'] });
  await postAgent(tuned.url, project.id, project.users.MEMBER.cookie, userMessageBody('warm up'));
});

afterAll(async () => {
  await tuned?.close();
  await server?.close();
  await proxy?.close();
  await model?.close();
});

describe('long runs', () => {
  it('keeps the heartbeat fresh and extends the run key while the run lasts', async () => {
    const member = project.users.MEMBER;
    // About 2.4 s of streaming (more than twice the key's 1 s lifetime), then a tool call.
    script(
      {
        text: Array.from({ length: 16 }, (_, i) => `part${i} `),
        delayMs: 150,
        toolCalls: [{ name: 'list_issues', args: {} }],
      },
      { text: ['Done.'] },
    );
    const res = await fetch(agentUrl(tuned.url, project.id), {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: tuned.url, cookie: member.cookie },
      body: JSON.stringify(userMessageBody('slow answer please')),
    });
    const runId = res.headers.get('x-in-app-agent-run-id')!;
    const body = res.text();
    const prisma = await getPrisma();
    const beats: number[] = [];
    for (let i = 0; i < 12; i++) {
      const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
      if (run.status !== 'RUNNING') break;
      beats.push(run.lastHeartbeatAt.getTime());
      await sleep(150);
    }
    const events = parseSse(await body);
    const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
    expect([run.status, run.errorCode]).toEqual(['COMPLETED', null]);
    // The heartbeat advanced while the run was going, well past its start.
    expect(new Set(beats).size).toBeGreaterThanOrEqual(3);
    expect(beats).toEqual([...beats].sort((a, b) => a - b));
    expect(Math.max(...beats) - run.startedAt.getTime()).toBeGreaterThan(1_000);
    // The tool call after 2.4 s still worked: the key was extended, not expired.
    const result = events.find((e) => e.type === 'TOOL_CALL_RESULT') as { content: string };
    expect(result.content).toContain('Login button broken');
    const key = await prisma.apiKey.findFirstOrThrow({ where: { runId } });
    expect(key.expiresAt!.getTime() - key.createdAt.getTime()).toBeGreaterThan(1_500);
    expect(key.revokedAt).not.toBeNull();
  });

  it('ends a stalled model with RUN_ERROR MODEL_TIMEOUT and keeps what streamed', async () => {
    const member = project.users.MEMBER;
    script({ text: ['Thinking about it'], stallMs: 10_000 });
    const started = Date.now();
    const res = await postAgent(tuned.url, project.id, member.cookie, userMessageBody('stall'));
    expect(Date.now() - started).toBeLessThan(6_000);
    expect(res.events.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'MODEL_TIMEOUT' });
    expect(types(res.events).filter((t) => t === 'RUN_FINISHED' || t === 'RUN_ERROR')).toHaveLength(1);
    expect(textOf(res.events)).toBe('Thinking about it');
    // The stalled model request was abandoned, not left hanging.
    for (let i = 0; i < 20 && !model.abandoned.length; i++) await sleep(50);
    expect(model.abandoned.map((a) => a.index)).toEqual([0]);
    const prisma = await getPrisma();
    expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: runIdOf(res.events) } })).toMatchObject({
      status: 'FAILED',
      errorCode: 'MODEL_TIMEOUT',
    });
    await expectReplayEqualsStream(member, tuned.url, threadOf(res.events), res.events);
  });

  it('does not count a slow tool as a stalled model', async () => {
    script({ toolCalls: [{ name: 'list_issues', args: {} }] }, { text: ['Two issues.'] });
    proxy.toolDelayMs = 2_000; // twice the model idle timeout
    try {
      const res = await postAgent(tuned.url, project.id, project.users.MEMBER.cookie, userMessageBody('list'));
      expect(res.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
      expect((res.events.find((e) => e.type === 'TOOL_CALL_RESULT') as { content: string }).content).toContain(
        'Dark mode',
      );
      expect(proxy.forwarded).toContain('list_issues');
    } finally {
      proxy.toolDelayMs = 0;
    }
  });

  it('closes stale runs of conversations nobody posts to again, periodically', async () => {
    const prisma = await getPrisma();
    const member = project.users.MEMBER;
    const conversation = await prisma.agentConversation.create({
      data: { id: newId('cv_'), projectId: project.id, userId: member.id, title: 'abandoned' },
    });
    // The key first: the periodic sweep may close the run the moment it exists.
    const runId = newId('run_');
    const key = await mintAgentKey(prisma, { projectId: project.id, userId: member.id, runId, ttlSeconds: 600 });
    const run = await prisma.agentRun.create({
      data: {
        id: runId,
        conversationId: conversation.id,
        userId: member.id,
        status: 'RUNNING',
        lastHeartbeatAt: new Date(Date.now() - 10 * 60_000),
      },
    });
    const api = trpcClient(server.url, member.cookie).agent.conversations;
    // What the user sees: the conversation's replay ends the run (the sweep writes its error row last).
    let replay = await api.get.query({ projectId: project.id, conversationId: conversation.id });
    for (let i = 0; i < 60 && replay.view.runs[0]?.status !== 'failed'; i++) {
      await sleep(100);
      replay = await api.get.query({ projectId: project.id, conversationId: conversation.id });
    }
    const row = await prisma.agentRun.findUniqueOrThrow({ where: { id: run.id } });
    expect(row).toMatchObject({ status: 'FAILED', errorCode: 'RUN_STALE' });
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: key.key.id } })).revokedAt).not.toBeNull();
    expect(replay.view.runs).toEqual([
      { runId: run.id, status: 'failed', error: { code: 'RUN_STALE', message: expect.any(String) }, interrupts: [] },
    ]);
  });
});

describe('local tools', () => {
  it('navigates only to known pages of this project and searches the help pages', async () => {
    const member = project.users.MEMBER;
    script(
      {
        toolCalls: [
          { name: 'navigate', args: { page: 'issue', issueNumber: 999 } },
          { name: 'navigate', args: { page: 'issue', issueNumber: 1 } },
          { name: 'navigate', args: { page: 'admin' } },
          { name: 'navigate', args: { page: 'issues', href: 'https://evil.example' } },
          { name: 'search_docs', args: { query: 'create a project API key' } },
        ],
      },
      { text: ['Opened issue 1.'] },
    );
    const res = await postAgent(server.url, project.id, member.cookie, userMessageBody('open issue 999, then 1'));
    expect(types(res.events).at(-1)).toBe('RUN_FINISHED');
    const starts = res.events.filter(
      (e): e is Extract<AgentEvent, { type: 'TOOL_CALL_START' }> => e.type === 'TOOL_CALL_START',
    );
    const resultOf = (i: number) =>
      (
        res.events.find((e) => e.type === 'TOOL_CALL_RESULT' && e.toolCallId === starts[i]!.toolCallId) as {
          content: string;
        }
      ).content;
    expect(JSON.parse(resultOf(0))).toMatchObject({
      isError: true,
      error: 'Issue #999 does not exist in this project.',
    });
    expect(JSON.parse(resultOf(1))).toEqual({ href: `/projects/${project.id}/issues/1` });
    // Unknown pages and extra fields (an outside URL) never pass the tool's schema.
    expect(JSON.parse(resultOf(2))).toEqual({
      isError: true,
      error: expect.stringMatching(/validation failed for navigate[\s\S]*page/),
    });
    expect(JSON.parse(resultOf(3))).toEqual({
      isError: true,
      error: expect.stringMatching(/validation failed for navigate[\s\S]*Unrecognized key: "href"/),
    });
    const docs = JSON.parse(resultOf(4)) as { results: Array<{ title: string; page: string; excerpt: string }> };
    expect(docs.results[0]).toMatchObject({ title: 'Create a project API key', page: 'api-keys' });
    expect(docs.results[0]!.excerpt).toContain('Settings');
    // Exactly one navigation reached the browser: the issue that exists.
    const navigations = res.events.filter((e) => e.type === 'CUSTOM' && e.name === 'in-app-agent.navigate');
    expect(navigations).toEqual([
      { type: 'CUSTOM', name: 'in-app-agent.navigate', value: { href: `/projects/${project.id}/issues/1` } },
    ]);
    await expectReplayEqualsStream(member, server.url, threadOf(res.events), res.events);
  });
});

describe('where the run key goes', () => {
  it('picks the MCP endpoint from configuration, never from the request', () => {
    expect(resolveMcpTarget({ AGENT_MCP_URL: 'https://mcp.internal/api/public/mcp' })).toEqual({
      url: 'https://mcp.internal/api/public/mcp',
    });
    // Unset: the product's MCP handler in this process; the key never leaves it.
    expect(resolveMcpTarget({ AGENT_MCP_URL: undefined })).toEqual({ dispatch: expect.any(Function) });
    expect(resolveMcpTarget({ AGENT_MCP_URL: undefined }, 'http://127.0.0.1:1/mcp')).toEqual({
      url: 'http://127.0.0.1:1/mcp',
    });
  });

  it('does not send the run key to a host named by a crafted Host header', async () => {
    const seen: string[] = [];
    const attacker = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${String(req.headers.authorization ?? '')}`);
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', r));
    const evil = `127.0.0.1:${(attacker.address() as AddressInfo).port}`;
    try {
      script({ toolCalls: [{ name: 'list_issues', args: {} }] }, { text: ['Listed.'] });
      const payload = JSON.stringify(userMessageBody('list'));
      const target = new URL(agentUrl(server.url, project.id));
      // Host and Origin agree (so the same-origin check passes) and both name the other server.
      const text = await new Promise<string>((resolve, reject) => {
        const req = http.request(
          {
            host: target.hostname,
            port: target.port,
            path: target.pathname,
            method: 'POST',
            headers: {
              host: evil,
              origin: `http://${evil}`,
              cookie: project.users.MEMBER.cookie,
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(payload),
            },
          },
          (res) => {
            let buf = '';
            res.setEncoding('utf8');
            res.on('data', (c: string) => (buf += c));
            res.on('end', () => resolve(buf));
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
      const events = parseSse(text);
      expect(types(events).at(-1)).toBe('RUN_FINISHED');
      expect((events.find((e) => e.type === 'TOOL_CALL_RESULT') as { content: string }).content).toContain(
        'Login button broken',
      );
      expect(seen).toEqual([]);
    } finally {
      await new Promise<void>((r) => {
        attacker.closeAllConnections();
        attacker.close(() => r());
      });
    }
  });
});
