// Tool calls per project key and minute (MCP_CALLS_PER_KEY_PER_MINUTE) on the MCP endpoint, over
// real HTTP: only tools/call counts; over the limit the answer is HTTP 429 with Retry-After and a
// JSON-RPC error -32029 with data.code RATE_LIMITED; the refusals are in the audit trail (counted,
// one row per key and minute); other keys and the assistant's run keys are not affected. The same
// limit across two instances: tests/integration/limits/instances.test.ts.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { mcpCallLimitKey } from '@/features/mcp/server';
import { TOOL_CALL_META_KEY } from '@/features/mcp/override';
import { getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { agentKey, projectKey, rawPost } from './mcp-client';

const LIMIT = 3;
let server: TestServer;
let project: TestProject;

beforeAll(async () => {
  process.env.MCP_CALLS_PER_KEY_PER_MINUTE = String(LIMIT);
  resetEnvCache();
  server = await startTestServer();
  project = await createProject('Call limit');
});
afterAll(async () => {
  await server?.close();
  delete process.env.MCP_CALLS_PER_KEY_PER_MINUTE;
  resetEnvCache();
});

let nextId = 1;
const call = (name = 'list_issues', meta?: string) => ({
  jsonrpc: '2.0',
  id: nextId++,
  method: 'tools/call',
  params: { name, arguments: {}, ...(meta ? { _meta: { [TOOL_CALL_META_KEY]: meta } } : {}) },
});
const post = (secret: string, body: unknown) =>
  rawPost(server.url, JSON.stringify(body), {
    authorization: `Bearer ${secret}`,
    'mcp-protocol-version': '2025-06-18',
  });

it('counts tools/call only, then answers 429 with Retry-After and JSON-RPC -32029 RATE_LIMITED, audited', async () => {
  const { key, secret } = await projectKey(project);
  // initialize, ping and tools/list are free.
  const init = {
    jsonrpc: '2.0',
    id: nextId++,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  for (let n = 0; n < LIMIT + 2; n++) {
    expect((await post(secret, init)).status).toBe(200);
    expect((await post(secret, { jsonrpc: '2.0', id: nextId++, method: 'tools/list' })).status).toBe(200);
  }
  for (let n = 0; n < LIMIT; n++) {
    const ok = await post(secret, call());
    expect(ok.status).toBe(200);
    expect(ok.json.result).toBeDefined();
  }
  const over = call('list_issues', 'over-1');
  const refused = await post(secret, over);
  expect(refused.status).toBe(429);
  const wait = Number(refused.headers.get('retry-after'));
  expect(wait).toBeGreaterThan(0);
  expect(wait).toBeLessThanOrEqual(120);
  expect(refused.json).toEqual({
    jsonrpc: '2.0',
    id: over.id,
    error: {
      code: -32029,
      message: `Too many tool calls with this key (at most ${LIMIT} a minute). Try again in ${wait} s. (RATE_LIMITED)`,
      data: { code: 'RATE_LIMITED' },
    },
  });
  // Still free while refused for calls.
  expect((await post(secret, { jsonrpc: '2.0', id: nextId++, method: 'tools/list' })).status).toBe(200);
  // A batch is refused whole (nothing in it runs), and a second refusal in the minute adds to the same row.
  const batch = await post(secret, [call('create_issue'), call()]);
  expect(batch.status).toBe(429);
  expect(batch.json.error?.data?.code).toBe('RATE_LIMITED');

  const prisma = await getPrisma();
  expect(await prisma.issue.count({ where: { projectId: project.id } })).toBe(0);
  const rows = await prisma.toolCallAudit.findMany({ where: { apiKeyId: key.id }, orderBy: { startedAt: 'asc' } });
  expect(rows.filter((r) => r.status === 'OK')).toHaveLength(LIMIT);
  const denied = rows.filter((r) => r.errorCode === 'RATE_LIMITED');
  expect(denied).toHaveLength(1);
  expect(denied[0]).toMatchObject({ status: 'DENIED', tool: 'list_issues', toolCallId: 'over-1', callCount: 3 });
  // The counter is in the limits store, shared by every instance.
  const counters = await prisma.limitCounter.findMany({ where: { key: mcpCallLimitKey(key.id) } });
  expect(counters.reduce((s, c) => s + c.count, 0)).toBe(LIMIT);
});

it('refuses a batch with more calls than a minute allows, saying so', async () => {
  const { secret } = await projectKey(project);
  const res = await post(
    secret,
    Array.from({ length: LIMIT + 1 }, () => call()),
  );
  expect(res.status).toBe(429);
  expect(res.headers.get('retry-after')).toBe('60');
  expect(res.json.error).toMatchObject({ code: -32029, data: { code: 'RATE_LIMITED' } });
  expect(res.json.error?.message).toContain(
    `This batch has ${LIMIT + 1} tool calls; this key may make at most ${LIMIT} a minute.`,
  );
  // The key's minute is untouched: single calls still go through.
  expect((await post(secret, call())).status).toBe(200);
});

it('limits each key on its own, and never the assistant run keys', async () => {
  const a = await projectKey(project);
  const b = await projectKey(project);
  for (let n = 0; n < LIMIT; n++) expect((await post(a.secret, call())).status).toBe(200);
  expect((await post(a.secret, call())).status).toBe(429);
  expect((await post(b.secret, call())).status).toBe(200);
  // A run key is bounded by the run limits instead (see docs/operations.md, "Limits").
  const run = await agentKey(project, project.users.MEMBER.id);
  for (let n = 0; n < LIMIT * 3; n++) expect((await post(run.secret, call())).status).toBe(200);
  const prisma = await getPrisma();
  expect(await prisma.limitCounter.count({ where: { key: mcpCallLimitKey(run.key.id) } })).toBe(0);
});
