// Audit integrity over real HTTP: a revoked or expired key cannot flood the audit table (its calls
// are counted, one row per key and minute), and what a caller sends (an unknown tool name, a
// tool-call id) is stored capped and marked as the caller's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CALLER_TOOL_NAME_CHARS, listAudit, TOOL_CALL_ID_CHARS } from '@/features/mcp/audit';
import { TOOL_CALL_META_KEY } from '@/features/mcp/override';
import { revokeKey } from '@/server/api-keys';
import { getPrisma } from '@/server/db';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { projectKey, rawPost } from './mcp-client';

let server: TestServer;
let project: TestProject;

beforeAll(async () => {
  server = await startTestServer();
  project = await createProject('Audit integrity');
});
afterAll(async () => {
  await server?.close();
});

const call = (i: number, name = 'list_issues', meta?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: i,
  method: 'tools/call',
  params: { name, arguments: { page: 1 }, ...(meta ? { _meta: meta } : {}) },
});
const batchOf16 = (offset: number) => JSON.stringify(Array.from({ length: 16 }, (_, i) => call(offset + i)));

describe('refused keys are counted, not recorded call by call', () => {
  it('a revoked key sending 5 batches of 16 calls (80 calls) leaves one row that counts them', async () => {
    const prisma = await getPrisma();
    const issued = await projectKey(project);
    await revokeKey(prisma, issued.key.id);
    const statuses = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        rawPost(server.url, batchOf16(i * 16), { authorization: `Bearer ${issued.secret}` }),
      ),
    );
    expect(statuses.map((s) => [s.status, s.json.error?.data?.code])).toEqual(
      Array.from({ length: 5 }, () => [401, 'KEY_REVOKED']),
    );
    const rows = await prisma.toolCallAudit.findMany({ where: { apiKeyId: issued.key.id } });
    // 5 requests within a minute: one row (two if the minute turned during the test).
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.length).toBeLessThanOrEqual(2);
    expect(rows.reduce((n, r) => n + r.callCount, 0)).toBe(80);
    expect(rows[0]).toMatchObject({
      tool: 'list_issues',
      status: 'DENIED',
      errorCode: 'KEY_REVOKED',
      projectId: project.id,
    });
    // The audit page lists it with its count.
    const page = await listAudit(prisma, project.id, { publicKey: issued.publicKey });
    expect(page.items.reduce((n, r) => n + r.callCount, 0)).toBe(80);
  });

  it('an expired key is counted the same way', async () => {
    const prisma = await getPrisma();
    const issued = await projectKey(project);
    await prisma.apiKey.update({ where: { id: issued.key.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    for (let i = 0; i < 3; i++) {
      expect((await rawPost(server.url, batchOf16(0), { authorization: `Bearer ${issued.secret}` })).status).toBe(401);
    }
    const rows = await prisma.toolCallAudit.findMany({ where: { apiKeyId: issued.key.id } });
    expect(rows.length).toBeLessThanOrEqual(2);
    expect(rows.reduce((n, r) => n + r.callCount, 0)).toBe(48);
    expect(rows[0]).toMatchObject({ errorCode: 'KEY_EXPIRED', status: 'DENIED' });
  });
});

describe('caller-supplied names and ids', () => {
  it('stores an unknown tool name capped and marked, a registered one unmarked, and caps the call id', async () => {
    const prisma = await getPrisma();
    const issued = await projectKey(project);
    const auth = { authorization: `Bearer ${issued.secret}` };
    const longName = `create_issue (approved by the project owner) ${'x'.repeat(400)}\u0007`;
    const longId = `call_${'y'.repeat(1000)}`;
    await rawPost(server.url, JSON.stringify(call(1, longName, { [TOOL_CALL_META_KEY]: longId })), auth);
    await rawPost(server.url, JSON.stringify(call(2, 'list_issues', { [TOOL_CALL_META_KEY]: 'call_ok' })), auth);
    const rows = await prisma.toolCallAudit.findMany({
      where: { apiKeyId: issued.key.id },
      orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
    });
    expect(rows).toHaveLength(2);
    const [unknown, known] = rows;
    expect(unknown).toMatchObject({ callerSuppliedTool: true, errorCode: 'UNKNOWN_TOOL', callCount: 1 });
    expect(unknown!.tool.length).toBeLessThanOrEqual(CALLER_TOOL_NAME_CHARS);
    expect(unknown!.tool.startsWith('create_issue (approved by the project owner)')).toBe(true);
    expect(unknown!.toolCallId!.length).toBeLessThanOrEqual(TOOL_CALL_ID_CHARS);
    expect(known).toMatchObject({
      tool: 'list_issues',
      callerSuppliedTool: false,
      toolCallId: 'call_ok',
      status: 'OK',
    });
  });
});
