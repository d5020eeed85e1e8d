// Helpers for the MCP server tests: the official MCP client over real HTTP, keys per role, a local
// webhook receiver, and raw JSON-RPC posts for transport-level cases.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { KEY_SCOPES } from '@/features/mcp/key-scopes';
import { createProjectKey, mintAgentKey, type IssuedKey } from '@/server/api-keys';
import { getPrisma } from '@/server/db';
import type { Scope } from '@/server/rbac';
import type { TestProject } from '../../helpers/fixtures';

export type CallResult = Awaited<ReturnType<Client['callTool']>> & {
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

export interface Connected {
  client: Client;
  close(): Promise<void>;
  call(name: string, args?: Record<string, unknown>, meta?: Record<string, unknown>): Promise<CallResult>;
  names(): Promise<string[]>;
}

export async function connect(baseUrl: string, secret: string): Promise<Connected> {
  const client = new Client({ name: 'mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL('/api/public/mcp', baseUrl), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
  await client.connect(transport);
  return {
    client,
    close: () => client.close(),
    call: (name, args = {}, meta) =>
      client.callTool({ name, arguments: args, ...(meta ? { _meta: meta } : {}) }) as Promise<CallResult>,
    names: async () => (await client.listTools()).tools.map((t) => t.name).sort(),
  };
}

/** A project key of the project's owner; every tool scope unless `scopes` narrows it. */
export async function projectKey(project: TestProject, scopes: readonly Scope[] = KEY_SCOPES): Promise<IssuedKey> {
  const owner = project.users.OWNER.id;
  return createProjectKey(await getPrisma(), { projectId: project.id, name: 'test key', createdById: owner, scopes });
}

let runCounter = 0;
/**
 * An assistant's run key, as a run holds it: for a RUNNING run of a conversation of `userId` (a
 * run's changing calls are recorded in the tool-call ledger of that run).
 */
export async function agentKey(project: TestProject, userId: string, ttlSeconds = 300): Promise<IssuedKey> {
  runCounter += 1;
  const prisma = await getPrisma();
  const runId = `run_test_${runCounter}_${Date.now().toString(36)}`;
  await prisma.agentConversation.create({
    data: {
      id: `cv_${runId}`,
      projectId: project.id,
      userId,
      title: 'MCP test',
      // Its heartbeat stays fresh for the whole file, as a live run's heartbeat keeps it.
      runs: { create: { id: runId, userId, status: 'RUNNING', lastHeartbeatAt: new Date(Date.now() + 3_600_000) } },
    },
  });
  return mintAgentKey(prisma, { projectId: project.id, userId, runId, ttlSeconds });
}

/** Message of the MCP/JSON-RPC error a promise failed with (throws if it succeeded). */
export async function rpcError(
  p: Promise<unknown>,
): Promise<{ code: number; message: string; data?: { code?: string } }> {
  try {
    await p;
  } catch (err) {
    const e = err as { code?: number; message: string; data?: { code?: string } };
    return { code: e.code ?? 0, message: e.message, ...(e.data ? { data: e.data } : {}) };
  }
  throw new Error('expected the call to fail');
}

export async function rawPost(baseUrl: string, body: string, headers: Record<string, string> = {}) {
  const res = await fetch(new URL('/api/public/mcp', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body,
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return {
    status: res.status,
    headers: res.headers,
    text,
    json: json as { error?: { code: number; message: string; data?: { code?: string } }; result?: unknown },
  };
}

export interface Receiver {
  url: string;
  received: Array<{ headers: http.IncomingHttpHeaders; body: string }>;
  status: number;
  delayMs: number;
  close(): Promise<void>;
}

/** A local webhook receiver on 127.0.0.1 whose answer status and delay tests can change. */
export async function startReceiver(): Promise<Receiver> {
  const r: Receiver = { url: '', received: [], status: 204, delayMs: 0, close: async () => undefined };
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    r.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    if (r.delayMs) await new Promise((x) => setTimeout(x, r.delayMs));
    res.writeHead(r.status, { 'content-type': 'text/plain' }).end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  r.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return r;
}

/**
 * A real HTTP server on 127.0.0.1 that hands each request to `handler` as a web Request (the same
 * adapter shape as the test server), for running a handler with other options or another database.
 */
export async function startHandlerServer(
  handler: (req: Request) => Promise<Response>,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer(async (nodeReq, nodeRes) => {
    const chunks: Buffer[] = [];
    for await (const c of nodeReq) chunks.push(c as Buffer);
    const headers = new Headers();
    for (const [k, v] of Object.entries(nodeReq.headers)) if (typeof v === 'string') headers.set(k, v);
    const req = new Request(new URL(nodeReq.url ?? '/', `http://${nodeReq.headers.host}`), {
      method: nodeReq.method ?? 'GET',
      headers,
      ...(nodeReq.method === 'GET' ? {} : { body: new Uint8Array(Buffer.concat(chunks)) }),
    });
    const res = await handler(req);
    const out: Record<string, string> = {};
    res.headers.forEach((v, k) => {
      out[k] = v;
    });
    nodeRes.writeHead(res.status, out);
    if (!res.body) {
      nodeRes.end();
      return;
    }
    // Streamed as produced, and cancelled when the client goes away (as Next.js does), so a
    // streaming handler is seen as a client sees it and an endless one stops with its client.
    const reader = res.body.getReader();
    nodeRes.once('close', () => void reader.cancel().catch(() => undefined));
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!nodeRes.write(value)) {
          await new Promise((r) => {
            nodeRes.once('drain', r);
            nodeRes.once('close', r);
          });
        }
      }
    } catch {
      // Cancelled because the client left: nothing more to send.
    }
    nodeRes.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
