// Failures that are not the caller's fault, through real HTTP and real databases: a tool that throws
// unexpectedly (a database trigger refuses the write) answers INTERNAL_ERROR without details, and a
// database that cannot be reached answers 503 SERVICE_UNAVAILABLE, never a 500 or a stack trace.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleMcpPost } from '@/features/mcp/server';
import { getPrisma, openDatabase, type Database } from '@/server/db';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { connect, projectKey, rawPost, startHandlerServer, type CallResult } from './mcp-client';

let server: TestServer;
let project: TestProject;

const LEAK = /\.ts:\d+|\bat\s+\S+\s+\(|prisma|invocation|P0001|boom-from-trigger|stack/i;

beforeAll(async () => {
  server = await startTestServer();
  project = await createProject('Failures');
  const prisma = await getPrisma();
  // An invalid state the tool does not expect: the database refuses every new issue of this project.
  await prisma.$executeRawUnsafe(`
    CREATE OR REPLACE FUNCTION refuse_issue_for_test() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW."projectId" = '${project.id}' THEN
        RAISE EXCEPTION 'boom-from-trigger';
      END IF;
      RETURN NEW;
    END $$`);
  await prisma.$executeRawUnsafe(
    `CREATE TRIGGER refuse_issue_for_test BEFORE INSERT ON "Issue" FOR EACH ROW EXECUTE FUNCTION refuse_issue_for_test()`,
  );
});
afterAll(async () => server?.close());

describe('an unexpected exception inside a tool', () => {
  it('becomes an INTERNAL_ERROR tool result with a generic message, audited, with no stack trace or database text', async () => {
    const key = await projectKey(project);
    const c = await connect(server.url, key.secret);
    const res = (await c.call('create_issue', { title: 'Will fail', body: 'x' })) as CallResult;
    await c.close();
    expect(res.isError).toBe(true);
    expect(res.structuredContent).toEqual({
      error: { code: 'INTERNAL_ERROR', message: 'create_issue failed unexpectedly. Try again later.' },
    });
    const text = JSON.stringify(res);
    expect(text).not.toMatch(LEAK);

    const prisma = await getPrisma();
    expect(await prisma.issue.count({ where: { projectId: project.id } })).toBe(0);
    const row = await prisma.toolCallAudit.findFirstOrThrow({ where: { apiKeyId: key.key.id } });
    expect(row).toMatchObject({ tool: 'create_issue', status: 'ERROR', errorCode: 'INTERNAL_ERROR' });
    expect(row.resultPreview).not.toMatch(LEAK);
  });
});

describe('a database that cannot be reached', () => {
  let down: Database;
  let endpoint: { url: string; close(): Promise<void> };

  beforeAll(async () => {
    // Nothing listens on port 1: every query fails to connect.
    down = openDatabase({ databaseUrl: 'postgresql://postgres@127.0.0.1:1/unreachable' });
    endpoint = await startHandlerServer((req) => handleMcpPost(req, { prisma: down.prisma }));
  });
  afterAll(async () => {
    await endpoint?.close();
    await down?.close().catch(() => undefined);
  });

  it('answers 503 SERVICE_UNAVAILABLE with Retry-After and a JSON-RPC body, without details', async () => {
    const key = await projectKey(project);
    const res = await rawPost(endpoint.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), {
      authorization: `Bearer ${key.secret}`,
    });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(res.json).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { code: 'SERVICE_UNAVAILABLE' } },
    });
    expect(res.text).not.toMatch(LEAK);
    expect(res.text).not.toMatch(/127\.0\.0\.1|5432|:1\b|reach/);
  });

  it('still refuses malformed credentials with 401 (no query is needed to know they are invalid)', async () => {
    const basic = `Basic ${Buffer.from('pk_\u0000abc:sk_x').toString('base64')}`;
    const res = await rawPost(endpoint.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), {
      authorization: basic,
    });
    expect(res.status).toBe(401);
    expect(res.json.error?.data?.code).toBe('INVALID_KEY');
  });
});
