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
    const res = await fetch(`${server.url}/api/public/mcp`, {
      method,
      headers: { ...auth(), accept: 'text/event-stream' },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
    const body = await res.json();
    expect(body).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32000, data: { code: 'METHOD_NOT_ALLOWED' } },
    });
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
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
      params: { pad: 'x'.repeat(300 * 1024) },
    });
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

  it('refuses a body that is not declared as JSON (415) with a stable code', async () => {
    for (const ct of ['text/plain', 'text/plain; a=application/json', '']) {
      const res = await rawPost(server.url, listTools, { ...auth(), 'content-type': ct });
      expect(res.status, ct).toBe(415);
      expect(res.json, ct).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, data: { code: 'UNSUPPORTED_MEDIA_TYPE' } },
      });
      expect(res.json.error?.message).toMatch(/Content-Type: application\/json/);
    }
    expect(
      (await rawPost(server.url, listTools, { ...auth(), 'content-type': 'application/json; charset=utf-8' })).status,
    ).toBe(200);
  });

  it('refuses a client that does not accept JSON and SSE (406) with a stable code', async () => {
    for (const accept of ['application/json', 'text/event-stream', '*/*']) {
      const res = await rawPost(server.url, listTools, { ...auth(), accept });
      expect(res.status, accept).toBe(406);
      expect(res.json, accept).toMatchObject({
        jsonrpc: '2.0',
        id: null,
        error: { code: -32000, data: { code: 'NOT_ACCEPTABLE' } },
      });
    }
  });

  it('refuses an unsupported MCP-Protocol-Version header (400) with a stable code', async () => {
    const res = await rawPost(server.url, listTools, { ...auth(), 'mcp-protocol-version': '1999-01-01' });
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({ code: -32000, data: { code: 'UNSUPPORTED_PROTOCOL_VERSION' } });
    expect((await rawPost(server.url, listTools, { ...auth(), 'mcp-protocol-version': '2025-06-18' })).status).toBe(
      200,
    );
  });

  it('answers an unknown method with a JSON-RPC method-not-found error and a stable code', async () => {
    const res = await rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'resources/list' }), auth());
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ id: 7, error: { code: -32601, data: { code: 'METHOD_NOT_FOUND' } } });
  });

  it('answers malformed parameters of initialize and tools/list with -32602 and a short message, not a schema dump', async () => {
    for (const body of [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: { capabilities: 'all' } },
      { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: 5 } },
    ]) {
      const res = await rawPost(server.url, JSON.stringify(body), auth());
      expect(res.status).toBe(200);
      expect(res.json, body.method).toMatchObject({
        id: 1,
        error: { code: -32602, data: { code: 'INVALID_REQUEST' } },
      });
      expect(res.json.error!.message.length).toBeLessThan(300);
      expect(res.text).not.toMatch(/"expected"|invalid_type|\\n/);
    }
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
    return res;
  }
  const basic = (s: string) => ({ authorization: `Basic ${Buffer.from(s, 'utf8').toString('base64')}` });

  it('refuses credentials with NUL bytes, garbage or overlong values with 401 INVALID_KEY, never a database error', async () => {
    const issued = await projectKey(project);
    for (const headers of [
      basic('pk_\u0000abc:sk_x'), // used to reach PostgreSQL and fail with 22021 (a 500)
      basic(`${issued.publicKey}\u0000:${issued.secret}`),
      basic(`${issued.publicKey}:${issued.secret}\u0000`),
      basic(`pk_${'\u00e9'.repeat(16)}:${issued.secret}`),
      basic(`${'x'.repeat(150)}:${'y'.repeat(30)}`),
      basic(`pk_AAAAAAAAAAAAAAAA:${issued.secret}`),
      { authorization: `Basic ${'QUFB'.repeat(2000)}` },
      { authorization: 'Basic @@@@' },
      { authorization: `Bearer ${issued.secret}x` },
      { authorization: `Bearer ${'sk_'.repeat(3000)}` },
      { authorization: `Bearer ${issued.secret} ${issued.secret}` },
    ]) {
      const res = await expect401(headers, 'INVALID_KEY');
      // A database error's text (query, file and line of the caller) must never reach the client.
      expect(res.text).not.toMatch(/\.ts:\d+|prisma|invocation|22021|UTF8|\bat\s/i);
    }
  });

  it('refuses missing, malformed and unknown keys with 401', async () => {
    await expect401({}, 'MISSING_CREDENTIALS');
    await expect401({ authorization: 'Token abc' }, 'INVALID_KEY');
    await expect401({ authorization: 'Bearer sk_AAAAAAAAAAAAAAAA_notarealsecret' }, 'INVALID_KEY');
    // Right public part, wrong secret: the random tail changed. (Base64url may end in `_`, so a
    // pattern on the last `_` would sometimes change nothing and send the real secret.)
    const tail = secret.endsWith('AAAAAAAA') ? 'BBBBBBBB' : 'AAAAAAAA';
    const wrong = `${secret.slice(0, -tail.length)}${tail}`;
    expect(wrong).not.toBe(secret);
    await expect401({ authorization: `Bearer ${wrong}` }, 'INVALID_KEY');
  });

  it('accepts Basic public:secret', async () => {
    const issued = await projectKey(project);
    const basic = Buffer.from(`${issued.publicKey}:${issued.secret}`).toString('base64');
    const res = await rawPost(server.url, listTools, { authorization: `Basic ${basic}` });
    expect(res.status).toBe(200);
  });

  it('answers an unknown key with 401 without reading an oversized body', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'list_issues', arguments: { pad: 'x'.repeat(300 * 1024) } },
    });
    const res = await rawPost(server.url, big, {
      authorization: 'Bearer sk_AAAAAAAAAAAAAAAA_notarealsecretnotarealsecretnota',
    });
    expect(res.status).toBe(401);
    expect(res.json.error?.data?.code).toBe('INVALID_KEY');
  });

  it('refuses a revoked key and audits the refused call', async () => {
    const prisma = await getPrisma();
    const issued = await projectKey(project);
    await revokeKey(prisma, issued.key.id);
    await expect401({ authorization: `Bearer ${issued.secret}` }, 'KEY_REVOKED');

    const call = JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'list_issues', arguments: {} },
    });
    const res = await rawPost(server.url, call, { authorization: `Bearer ${issued.secret}` });
    expect(res.status).toBe(401);
    const rows = await prisma.toolCallAudit.findMany({ where: { apiKeyId: issued.key.id } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      tool: 'list_issues',
      status: 'DENIED',
      errorCode: 'KEY_REVOKED',
      projectId: project.id,
    });
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

describe('tools/call refused before the tool runs (audited like the client saw it)', () => {
  let caller: { id: string; secret: string };
  const callHeaders = () => ({ authorization: `Bearer ${caller.secret}` });
  const rows = async () =>
    (await getPrisma()).toolCallAudit.findMany({
      where: { apiKeyId: caller.id },
      orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
    });
  const call = (params: unknown, id = 5) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });

  beforeAll(async () => {
    const k = await projectKey(project);
    caller = { id: k.key.id, secret: k.secret };
  });

  it('answers malformed tools/call params with -32602, a stable code and a short message', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ name: 'get_issue', arguments: [1] }, 'INVALID_ARGUMENTS', /arguments: .*expected an object/],
      [{ name: 'get_issue', arguments: 'number=1' }, 'INVALID_ARGUMENTS', /arguments/],
      [{ name: 'get_issue', arguments: null }, 'INVALID_ARGUMENTS', /arguments/],
      [{ arguments: {} }, 'INVALID_REQUEST', /name: required/],
      [{ name: 42, arguments: {} }, 'INVALID_REQUEST', /name/],
      [{ name: 'get_issue', arguments: { number: 1 }, task: { ttl: 1000 } }, 'INVALID_REQUEST', /Task-augmented/],
    ];
    for (const [params, code, message] of cases) {
      const res = await rawPost(server.url, call(params), callHeaders());
      expect(res.status, JSON.stringify(params)).toBe(200);
      expect(res.json, JSON.stringify(params)).toMatchObject({
        jsonrpc: '2.0',
        id: 5,
        error: { code: -32602, data: { code } },
      });
      expect(res.json.error!.message).toMatch(message);
      expect(res.json.error!.message.length).toBeLessThan(300);
      expect(res.text).not.toMatch(/"expected"|invalid_type|\\n/);
    }
    // Non-object params are not MCP requests at all: the whole body is refused.
    for (const params of [5, [], 'x']) {
      const res = await rawPost(server.url, call(params), callHeaders());
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: -32600, data: { code: 'INVALID_REQUEST' } });
    }
    expect((await rows()).map((r) => [r.tool, r.status, r.errorCode])).toEqual([
      ['get_issue', 'ERROR', 'INVALID_ARGUMENTS'],
      ['get_issue', 'ERROR', 'INVALID_ARGUMENTS'],
      ['get_issue', 'ERROR', 'INVALID_ARGUMENTS'],
      ['(invalid)', 'ERROR', 'INVALID_REQUEST'],
      ['(invalid)', 'ERROR', 'INVALID_REQUEST'],
      ['get_issue', 'ERROR', 'INVALID_REQUEST'],
      ['(invalid)', 'ERROR', 'INVALID_REQUEST'],
      ['(invalid)', 'ERROR', 'INVALID_REQUEST'],
      ['(invalid)', 'ERROR', 'INVALID_REQUEST'],
    ]);
    expect((await rows())[0]!.argsPreview).toBe('[1]');
  });

  it('answers each call of a batch: a malformed one is refused, the valid ones run', async () => {
    const before = (await rows()).length;
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_labels', arguments: {} } },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_labels', arguments: [1] } },
    ]);
    const res = await rawPost(server.url, batch, callHeaders());
    expect(res.status).toBe(200);
    const answers = res.json as unknown as Array<{
      id: number;
      result?: { structuredContent?: unknown };
      error?: { data?: { code?: string } };
    }>;
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2]);
    expect(answers.find((a) => a.id === 1)!.result?.structuredContent).toMatchObject({
      labels: [{ name: 'bug' }, { name: 'feature' }],
    });
    expect(answers.find((a) => a.id === 2)!.error?.data?.code).toBe('INVALID_ARGUMENTS');
    expect(
      (await rows())
        .slice(before)
        .map((r) => [r.status, r.errorCode])
        .sort(),
    ).toEqual([
      ['ERROR', 'INVALID_ARGUMENTS'],
      ['OK', null],
    ]);
  });

  it('audits a tool name with a NUL byte (escaped) instead of losing the row', async () => {
    const res = await rawPost(
      server.url,
      call({ name: 'get_\u0000issue', arguments: {}, _meta: { 'in-app-agent/toolCallId': 'tc\u0000x' } }),
      callHeaders(),
    );
    expect(res.json.error).toMatchObject({ code: -32602, data: { code: 'UNKNOWN_TOOL' } });
    expect(res.json.error!.message).toContain('get_\\u0000issue');
    const last = (await rows()).at(-1)!;
    expect(last).toMatchObject({
      tool: 'get_\\u0000issue',
      toolCallId: 'tc\\u0000x',
      status: 'ERROR',
      errorCode: 'UNKNOWN_TOOL',
    });
    const long = await rawPost(server.url, call({ name: `x${'\u0001'.repeat(500)}`, arguments: {} }), callHeaders());
    expect(long.json.error?.data?.code).toBe('UNKNOWN_TOOL');
    expect((await rows()).at(-1)!.tool.length).toBeLessThanOrEqual(100);
  });

  it('audits oversized and too-deep tools/call bodies as DENIED with the tool they named', async () => {
    const before = (await rows()).length;
    const pad = 'x'.repeat(300 * 1024);
    // Only the first 8 KiB of an oversized body are read: what comes before the padding is found.
    const big = call({
      name: 'create_issue',
      _meta: { 'in-app-agent/toolCallId': 'tc-big' },
      arguments: { title: 'big', body: pad },
    });
    expect((await rawPost(server.url, big, callHeaders())).json.error?.data?.code).toBe('PAYLOAD_TOO_LARGE');

    const enc = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        for (let i = 0; i < enc.length; i += 64 * 1024) c.enqueue(enc.slice(i, i + 64 * 1024));
        c.close();
      },
    });
    const streamed = await fetch(`${server.url}/api/public/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...callHeaders() },
      body: stream,
      // @ts-expect-error Node's fetch needs this for streamed request bodies
      duplex: 'half',
    });
    expect(streamed.status).toBe(413);

    const deep = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"get_issue","arguments":{"x":${'['.repeat(5000)}${']'.repeat(5000)}}}}`;
    expect((await rawPost(server.url, deep, callHeaders())).json.error?.data?.code).toBe('JSON_TOO_DEEP');

    const refused = (await rows()).slice(before);
    expect(refused.map((r) => [r.tool, r.status, r.errorCode])).toEqual([
      ['create_issue', 'DENIED', 'PAYLOAD_TOO_LARGE'],
      ['create_issue', 'DENIED', 'PAYLOAD_TOO_LARGE'],
      ['get_issue', 'DENIED', 'JSON_TOO_DEEP'],
    ]);
    expect(refused[0]!.toolCallId).toBe('tc-big');
    expect(refused[2]!.argsPreview.startsWith('{"x":[[[')).toBe(true);
    expect(refused[2]!.argsPreview.length).toBeLessThanOrEqual(500);
  });
});
