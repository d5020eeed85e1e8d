// Elicitation on the product's MCP server, with the official MCP SDK client over real HTTP: a client
// that declares the capability gets a (signed) session; `assign_issue` with a name several members
// match asks that client's user to choose (`elicitation/create` on the call's SSE stream), and the
// answer, a POST of its own, resumes the call, on this instance or another. Clients without the
// capability stay stateless and get AMBIGUOUS_ASSIGNEE with the choices. Sessions and answers that
// do not belong are refused with stable codes, and nothing of a question outlives its call.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type ElicitRequest, ElicitRequestSchema, type ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { createIssue, createProject, createUser, type TestProject, type TestUser } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { startInstance, type AppInstance } from '../../helpers/instances';
import { type CallResult, connect, projectKey, rawPost } from './mcp-client';

let server: TestServer;
let project: TestProject;
let secret: string;
let otherSecret: string;
let samLee: TestUser;
let samPark: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  project = await createProject('Elicit');
  const prisma = await getPrisma();
  samLee = await createUser('Sam Lee');
  samPark = await createUser('Sam Park');
  for (const u of [samLee, samPark])
    await prisma.projectMembership.create({
      data: { id: newId('m_'), projectId: project.id, userId: u.id, role: 'MEMBER' },
    });
  for (let i = 1; i <= 6; i++) await createIssue(project.id, { title: `Issue ${i}` });
  secret = (await projectKey(project)).secret;
  otherSecret = (await projectKey(await createProject('Elicit other'))).secret;
});
afterAll(async () => server?.close());

type Answer = (params: ElicitRequest['params']) => ElicitResult | Promise<ElicitResult>;

/** The official client, declaring that it takes questions, answering them with `answer`. */
async function connectAsking(baseUrl: string, key: string, answer: Answer, fetchImpl?: typeof fetch) {
  const asked: Array<ElicitRequest['params']> = [];
  const client = new Client({ name: 'asking-client', version: '1.0.0' }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    asked.push(request.params);
    return answer(request.params);
  });
  const transport = new StreamableHTTPClientTransport(new URL('/api/public/mcp', baseUrl), {
    requestInit: { headers: { Authorization: `Bearer ${key}` } },
    ...(fetchImpl ? { fetch: fetchImpl } : {}),
  });
  await client.connect(transport);
  return {
    client,
    transport,
    asked,
    call: (name: string, args: Record<string, unknown>) =>
      client.callTool({ name, arguments: args }) as Promise<CallResult>,
  };
}

const assigneeOf = async (number: number) =>
  (
    await (
      await getPrisma()
    ).issue.findFirstOrThrow({
      where: { projectId: project.id, number },
      select: { assigneeId: true },
    })
  ).assigneeId;

const errorOf = (r: CallResult) =>
  (r.structuredContent as { error?: { code: string; message: string; choices?: unknown } }).error;

describe('a client that takes questions', () => {
  it('gets a session, and is asked to choose when a name matches several members', async () => {
    const c = await connectAsking(server.url, secret, (params) => {
      const form = params as unknown as { requestedSchema: { properties: { assignee: { enum: string[] } } } };
      const assignee = form.requestedSchema.properties.assignee;
      return { action: 'accept', content: { assignee: assignee.enum[1]! } };
    });
    expect(c.transport.sessionId).toMatch(/^ms1\./);
    const result = await c.call('assign_issue', { number: 1, assignee: 'sam' });
    expect(result.isError).toBeFalsy();
    // The question named the choices, by name and email, as a flat form of one required enum.
    expect(c.asked).toHaveLength(1);
    expect(c.asked[0]!.message).toBe('Several members match “sam”. Who should issue #1 be assigned to?');
    expect((c.asked[0] as { requestedSchema: unknown }).requestedSchema).toEqual({
      type: 'object',
      properties: {
        assignee: {
          type: 'string',
          title: 'Assignee',
          enum: [samLee.id, samPark.id],
          enumNames: [`Sam Lee (${samLee.email})`, `Sam Park (${samPark.email})`],
        },
      },
      required: ['assignee'],
    });
    expect(result.structuredContent).toMatchObject({ issue: { number: 1, assignee: { id: samPark.id } } });
    expect(await assigneeOf(1)).toBe(samPark.id);
    // The call is audited once, with its outcome; nothing of the question is left.
    const prisma = await getPrisma();
    expect(
      await prisma.toolCallAudit.count({ where: { projectId: project.id, tool: 'assign_issue', status: 'OK' } }),
    ).toBe(1);
    expect(await prisma.mcpElicitation.count()).toBe(0);
    await c.client.close();
  });

  it('asks nothing when the name means one member, and assigns', async () => {
    const c = await connectAsking(server.url, secret, () => ({ action: 'decline' }));
    const result = await c.call('assign_issue', { number: 2, assignee: 'sam l' });
    expect(result.isError).toBeFalsy();
    expect(c.asked).toHaveLength(0);
    expect(await assigneeOf(2)).toBe(samLee.id);
    await c.client.close();
  });

  it('changes nothing when the user declines or dismisses the question', async () => {
    for (const action of ['decline', 'cancel'] as const) {
      const c = await connectAsking(server.url, secret, () => ({ action }));
      const result = await c.call('assign_issue', { number: 3, assignee: 'Sam' });
      expect(result.isError).toBe(true);
      expect(errorOf(result)).toMatchObject({ code: 'CHOICE_DECLINED' });
      expect(await assigneeOf(3)).toBeNull();
      await c.client.close();
    }
  });
});

describe('a client that does not take questions', () => {
  it('stays stateless and gets the choices in the error', async () => {
    const c = await connect(server.url, secret);
    const result = await c.call('assign_issue', { number: 4, assignee: 'Sam' });
    expect(result.isError).toBe(true);
    const error = errorOf(result)!;
    expect(error.code).toBe('AMBIGUOUS_ASSIGNEE');
    expect(error.message).toContain(`Sam Lee (${samLee.email}), Sam Park (${samPark.email})`);
    expect(error.choices).toEqual([
      { userId: samLee.id, name: 'Sam Lee', email: samLee.email },
      { userId: samPark.id, name: 'Sam Park', email: samPark.email },
    ]);
    expect(await assigneeOf(4)).toBeNull();
    // With the email the choice is made.
    const chosen = await c.call('assign_issue', { number: 4, assignee: samLee.email });
    expect(chosen.isError).toBeFalsy();
    expect(await assigneeOf(4)).toBe(samLee.id);
    await c.close();
  });
});

/** Posts a raw initialize; returns the session id the server gave (if any). */
async function rawInitialize(key: string, capabilities: Record<string, unknown>): Promise<string | null> {
  const res = await rawPost(
    server.url,
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities, clientInfo: { name: 'raw', version: '1' } },
    }),
    { authorization: `Bearer ${key}` },
  );
  expect(res.status).toBe(200);
  return res.headers.get('mcp-session-id');
}

/** Reads the SSE `data:` messages of a response, as far as asked. */
function sseReader(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    /** Reads until a message `until` accepts (returned), or the end (null). */
    async next(until: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown> | null> {
      for (;;) {
        let at = buffer.indexOf('\n\n');
        while (at >= 0) {
          const block = buffer.slice(0, at);
          buffer = buffer.slice(at + 2);
          const data = block
            .split('\n')
            .filter((l) => l.startsWith('data:'))
            .map((l) => l.slice(5).trim())
            .join('');
          if (data) {
            const m = JSON.parse(data) as Record<string, unknown>;
            if (until(m)) return m;
          }
          at = buffer.indexOf('\n\n');
        }
        const { done, value } = await reader.read();
        if (done) return null;
        buffer += decoder.decode(value, { stream: true });
      }
    },
  };
}

describe('sessions and answers on the wire', () => {
  it('gives a session only to a client that declares form questions', async () => {
    expect(await rawInitialize(secret, {})).toBeNull();
    expect(await rawInitialize(secret, { elicitation: { url: {} } })).toBeNull();
    expect(await rawInitialize(secret, { elicitation: { form: {} } })).toMatch(/^ms1\./);
  });

  it('answers a forged, altered or someone else’s session 404, and an answer nobody waits for 400', async () => {
    const session = (await rawInitialize(secret, { elicitation: {} }))!;
    const ping = JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' });
    const headers = (s: string, key = secret) => ({
      authorization: `Bearer ${key}`,
      'mcp-session-id': s,
      'mcp-protocol-version': '2025-06-18',
    });
    expect((await rawPost(server.url, ping, headers(session))).status).toBe(200);
    const [v, payload, sig] = session.split('.');
    const altered = `${v}.${payload}.${sig!.slice(0, -2)}${sig!.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const bad of ['nonsense', altered, `ms1.${Buffer.from('{}').toString('base64url')}.${sig}`]) {
      const res = await rawPost(server.url, ping, headers(bad));
      expect(res.status, bad).toBe(404);
      expect(res.json.error?.data?.code).toBe('SESSION_NOT_FOUND');
    }
    // Another key's session is not this key's.
    const theirs = await rawPost(server.url, ping, headers(session, otherSecret));
    expect(theirs.status).toBe(404);
    // An answer (a JSON-RPC response) that no question waits for.
    const stray = JSON.stringify({ jsonrpc: '2.0', id: 'eli_nothing', result: { action: 'decline' } });
    const noSession = await rawPost(server.url, stray, { authorization: `Bearer ${secret}` });
    expect(noSession.status).toBe(400);
    expect(noSession.json.error?.data?.code).toBe('RESPONSE_NOT_EXPECTED');
    const unknown = await rawPost(server.url, stray, headers(session));
    expect(unknown.status).toBe(400);
    expect(unknown.json.error?.data?.code).toBe('RESPONSE_NOT_EXPECTED');
  });

  it('streams the question before the result, refuses an answer outside the choices, and forgets the question when the client leaves', async () => {
    const session = (await rawInitialize(secret, { elicitation: {} }))!;
    const headers = {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${secret}`,
      'mcp-session-id': session,
      'mcp-protocol-version': '2025-06-18',
    };
    const url = new URL('/api/public/mcp', server.url);
    const call = (id: number, number: number, signal?: AbortSignal) =>
      fetch(url, {
        method: 'POST',
        headers,
        signal,
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'assign_issue', arguments: { number, assignee: 'Sam' } },
        }),
      });

    // The answer names someone who was not offered: the call says so and changes nothing.
    const res = await call(10, 5);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const stream = sseReader(res.body!);
    const question = (await stream.next((m) => m.method === 'elicitation/create'))!;
    expect(question.id).toMatch(/^eli_/);
    expect(question.params).toMatchObject({
      message: 'Several members match “Sam”. Who should issue #5 be assigned to?',
    });
    // Another key, even in a session of its own, cannot answer it.
    const theirs = (await rawInitialize(otherSecret, { elicitation: {} }))!;
    const hijack = await rawPost(
      server.url,
      JSON.stringify({
        jsonrpc: '2.0',
        id: question.id,
        result: { action: 'accept', content: { assignee: samLee.id } },
      }),
      { authorization: `Bearer ${otherSecret}`, 'mcp-session-id': theirs, 'mcp-protocol-version': '2025-06-18' },
    );
    expect(hijack.status).toBe(400);
    expect(hijack.json.error?.data?.code).toBe('RESPONSE_NOT_EXPECTED');
    const answered = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: question.id,
        result: { action: 'accept', content: { assignee: project.users.VIEWER.id } },
      }),
    });
    expect(answered.status).toBe(202);
    const result = (await stream.next((m) => m.id === 10)) as { result: CallResult } | null;
    expect(result?.result.isError).toBe(true);
    expect(errorOf(result!.result)).toMatchObject({ code: 'CHOICE_INVALID' });
    expect(await assigneeOf(5)).toBeNull();
    const audit = await (await getPrisma()).toolCallAudit.findFirst({
      where: { projectId: project.id, tool: 'assign_issue', errorCode: 'CHOICE_INVALID' },
    });
    expect(audit).not.toBeNull();

    // The client leaves while the question waits: its row goes with the call.
    const abort = new AbortController();
    const leaving = await call(11, 6, abort.signal);
    await sseReader(leaving.body!).next((m) => m.method === 'elicitation/create');
    const prisma = await getPrisma();
    expect(await prisma.mcpElicitation.count()).toBe(1);
    abort.abort();
    await expect.poll(() => prisma.mcpElicitation.count(), { timeout: 10_000 }).toBe(0);
    expect(await assigneeOf(6)).toBeNull();
  });
});

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);

describe.skipIf(!onPostgres)('another instance', () => {
  let other: AppInstance;
  beforeAll(async () => {
    other = await startInstance({ AGENT_MCP_URL: undefined, NEXTAUTH_URL: undefined });
  }, 120_000);
  afterAll(async () => {
    await other?.kill('SIGKILL');
  });

  it('records an answer that reaches another instance for the call that waits on this one', async () => {
    let answeredElsewhere = 0;
    // The client's answers (JSON-RPC responses) go to the other instance, as a load balancer may send them.
    const routed: typeof fetch = async (input, init) => {
      const body = typeof init?.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : null;
      if (body && !('method' in body) && 'result' in body) {
        answeredElsewhere += 1;
        return fetch(new URL('/api/public/mcp', other.url), init);
      }
      return fetch(input, init);
    };
    const c = await connectAsking(
      server.url,
      secret,
      () => ({ action: 'accept', content: { assignee: samLee.id } }),
      routed,
    );
    const result = await c.call('assign_issue', { number: 6, assignee: 'Sam' });
    expect(answeredElsewhere).toBe(1);
    expect(result.isError).toBeFalsy();
    expect(await assigneeOf(6)).toBe(samLee.id);
    await c.client.close();
  });
});
