// Transport and authentication of the MCP endpoint over real HTTP: every bad request gets a JSON-RPC
// error body with a stable code and the right status, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeKey } from '@/server/api-keys';
import { getPrisma } from '@/server/db';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { agentKey, connect, projectKey, rawPost, rpcError } from './mcp-client';

let server: TestServer;
let project: TestProject;
let secret: string;
const auth = () => ({ authorization: `Bearer ${secret}` });
const listTools = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

beforeAll(async () => {
  server = await startTestServer();
  project = await createProject('Transport');
  secret = (await projectKey(project)).secret;
});
afterAll(async () => server?.close());

describe('HTTP methods', () => {
  it.each(['GET', 'DELETE'])('%s answers 405 with a JSON-RPC error body', async (method) => {
    const res = await fetch(`${server.url}/api/public/mcp`, { method, headers: { ...auth(), accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const body = await res.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32000, data: { code: 'METHOD_NOT_ALLOWED' } } });
  });

  it('works with the official client (initialize, tools/list, ping) without a session', async () => {
    const c = await connect(server.url, secret);
    expect((await c.names()).length).toBe(13);
    await expect(c.client.ping()).resolves.toBeDefined();
    expect(c.client.getServerVersion()?.name).toBe('tracker');
    await c.close();
  });
});

describe('request guards', () => {
  it('refuses malformed JSON with a parse error (400)', async () => {
    const res = await rawPost(server.url, '{"jsonrpc":"2.0",', auth());
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: -32700, data: { code: 'PARSE_ERROR' } });
  });

  it('refuses JSON that is not JSON-RPC 2.0 (400 invalid request)', async () => {
    for (const body of ['{"hello":"world"}', '42', '[]', '{"jsonrpc":"1.0","id":1,"method":"x"}']) {
      const res = await rawPost(server.url, body, auth());
      expect(res.status, body).toBe(400);
      expect(res.json.error?.code, body).toBe(-32600);
    }
  });

  it('refuses a body over 256 KiB with 413, declared or streamed', async () => {
    const big = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(300 * 1024) } });
    const declared = await rawPost(server.url, big, auth());
    expect(declared.status).toBe(413);
    expect(declared.json.error?.data?.code).toBe('PAYLOAD_TOO_LARGE');

    const enc = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < enc.length; i += 64 * 1024) c.enqueue(enc.slice(i, i + 64 * 1024));
        c.close();
      },
    });
    const res = await fetch(`${server.url}/api/public/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth() },
      body: stream,
      // @ts-expect-error Node's fetch needs this for streamed request bodies
      duplex: 'half',
    });
    expect(res.status).toBe(413);
    expect((await res.json()).error.data.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses JSON nested deeper than the limit before parsing (400)', async () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_issue","arguments":{"x":${'['.repeat(5000)}${']'.repeat(5000)}}}}`;
    const res = await rawPost(server.url, deep, auth());
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: -32600, data: { code: 'JSON_TOO_DEEP' } });
  });

  it('refuses a body that is not declared as JSON (415)', async () => {
    const res = await rawPost(server.url, listTools, { ...auth(), 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect(res.json.error?.message).toMatch(/Content-Type/);
  });

  it('answers an unknown method with a JSON-RPC method-not-found error', async () => {
    const res = await rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/list' }), auth());
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it('answers a plain tools/list request with JSON (no session header)', async () => {
    const res = await rawPost(server.url, listTools, auth());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect((res.json.result as { tools: unknown[] }).tools).toHaveLength(13);
  });
});

describe('authentication', () => {
  async function expect401(headers: Record<string, string>, code: string) {
    const res = await rawPost(server.url, listTools, headers);
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(res.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32010, data: { code } } });
    expect(res.text).not.toMatch(/at .*\.ts:\d+/);
  }

  it('refuses missing, malformed and unknown keys with 401', async () => {
    await expect401({}, 'MISSING_CREDENTIALS');
    await expect401({ authorization: 'Token abc' }, 'INVALID_KEY');
    await expect401({ authorization: 'Bearer sk_AAAAAAAAAAAAAAAA_notarealsecret' }, 'INVALID_KEY');
    // Right public part, wrong secret.
    const wrong = secret.replace(/_[^_]+$/, '_wrongwrongwrongwrongwrong');
    await expect401({ authorization: `Bearer ${wrong}` }, 'INVALID_KEY');
  });

  it('accepts Basic public:secret', async () => {
    const issued = await projectKey(project);
    const basic = Buffer.from(`${issued.publicKey}:${issued.secret}`).toString('base64');
    const res = await rawPost(server.url, listTools, { authorization: `Basic ${basic}` });
    expect(res.status).toBe(200);
  });

  it('refuses a revoked key and audits the refused call', async () => {
    const prisma = await getPrisma();
    const issued = await projectKey(project);
    await revokeKey(prisma, issued.key.id);
    await expect401({ authorization: `Bearer ${issued.secret}` }, 'KEY_REVOKED');

    const call = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'list_issues', arguments: {} } });
    const res = await rawPost(server.url, call, { authorization: `Bearer ${issued.secret}` });
    expect(res.status).toBe(401);
    const rows = await prisma.toolCallAudit.findMany({ where: { apiKeyId: issued.key.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ tool: 'list_issues', status: 'DENIED', errorCode: 'KEY_REVOKED', projectId: project.id });
  });

  it('refuses an expired key, and an agent key whose run was revoked, through the official client too', async () => {
    const prisma = await getPrisma();
    const expired = await projectKey(project);
    await prisma.apiKey.update({ where: { id: expired.key.id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    await expect401({ authorization: `Bearer ${expired.secret}` }, 'KEY_EXPIRED');

    const agent = await agentKey(project, project.users.MEMBER.id);
    const c = await connect(server.url, agent.secret);
    await prisma.apiKey.update({ where: { id: agent.key.id }, data: { revokedAt: new Date() } });
    const err = await rpcError(c.call('list_issues'));
    expect(err.code).toBe(401);
    expect(err.message).toMatch(/KEY_REVOKED/);
    await c.close();

    const shortLived = await agentKey(project, project.users.MEMBER.id, 1);
    await new Promise((r) => setTimeout(r, 1100));
    await expect(connect(server.url, shortLived.secret)).rejects.toThrow(/KEY_EXPIRED/);
  });
});
