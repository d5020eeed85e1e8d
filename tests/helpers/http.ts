// A real HTTP server on 127.0.0.1 that serves the app's route handlers (the same modules Next.js
// serves), so integration tests speak real HTTP to real handlers without a Next build.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: Request, ctx: { params: Promise<Record<string, string | string[]>> }) => Promise<Response> | Response;
type RouteModule = Partial<Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', Handler>>;

interface RouteDef {
  pattern: RegExp;
  keys: string[];
  /** Which of the assistant's routes this is (replaceable by `agentRoutes`). */
  agent?: 'start' | 'events' | 'cancel';
  load: () => Promise<RouteModule>;
}

const ROUTES: RouteDef[] = [
  { pattern: /^\/api\/health$/, keys: [], load: () => import('@/app/api/health/route') as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/ready$/, keys: [], load: () => import('@/app/api/ready/route') as unknown as Promise<RouteModule> },
  { pattern: /^\/api\/trpc\/([^/]+)$/, keys: ['trpc'], load: () => import('@/app/api/trpc/[trpc]/route') },
  { pattern: /^\/api\/public\/mcp$/, keys: [], load: () => import('@/app/api/public/mcp/route') as unknown as Promise<RouteModule> },
  {
    pattern: /^\/api\/projects\/([^/]+)\/in-app-agent$/,
    keys: ['projectId'],
    agent: 'start',
    load: () => import('@/app/api/projects/[projectId]/in-app-agent/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/projects\/([^/]+)\/in-app-agent\/runs\/([^/]+)\/events$/,
    keys: ['projectId', 'runId'],
    agent: 'events',
    load: () => import('@/app/api/projects/[projectId]/in-app-agent/runs/[runId]/events/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/projects\/([^/]+)\/in-app-agent\/runs\/([^/]+)\/cancel$/,
    keys: ['projectId', 'runId'],
    agent: 'cancel',
    load: () => import('@/app/api/projects/[projectId]/in-app-agent/runs/[runId]/cancel/route') as unknown as Promise<RouteModule>,
  },
];

async function readBody(req: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

export interface TestServer {
  url: string;
  close(): Promise<void>;
}

export interface TestServerOptions {
  /** Replaces the agent route's POST handler (the bench injects an in-process model). */
  agentHandler?: Handler;
  /** Replaces the assistant's routes (start, events, cancel), e.g. `createAgentRoutes({...})`. */
  agentRoutes?: Partial<Record<'start' | 'events' | 'cancel', Handler>>;
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  const server = http.createServer(async (nodeReq, nodeRes) => {
    const abort = new AbortController();
    nodeRes.on('close', () => {
      if (!nodeRes.writableFinished) abort.abort();
    });
    try {
      const url = new URL(nodeReq.url ?? '/', `http://${nodeReq.headers.host}`);
      const route = ROUTES.find((r) => r.pattern.test(url.pathname));
      const method = (nodeReq.method ?? 'GET').toUpperCase() as keyof RouteModule;
      if (!route) {
        nodeRes.writeHead(404).end('not found');
        return;
      }
      const mod = await route.load();
      const replaced = route.agent ? (opts.agentRoutes?.[route.agent] ?? (route.agent === 'start' ? opts.agentHandler : undefined)) : undefined;
      const fn = replaced && (method === 'POST') === (route.agent !== 'events') ? replaced : mod[method];
      if (!fn) {
        nodeRes.writeHead(405).end('method not allowed');
        return;
      }
      const m = route.pattern.exec(url.pathname)!;
      const params: Record<string, string> = {};
      route.keys.forEach((k, i) => (params[k] = decodeURIComponent(m[i + 1]!)));
      const headers = new Headers();
      for (const [k, v] of Object.entries(nodeReq.headers)) {
        if (Array.isArray(v)) v.forEach((x) => headers.append(k, x));
        else if (v !== undefined) headers.set(k, v);
      }
      const hasBody = method !== 'GET' && method !== ('HEAD' as never);
      const req = new Request(url, {
        method,
        headers,
        body: hasBody ? new Uint8Array(await readBody(nodeReq)) : undefined,
        signal: abort.signal,
      });
      const res = await fn(req, { params: Promise.resolve(params) });
      const outHeaders: Record<string, string[]> = {};
      res.headers.forEach((v, k) => (outHeaders[k] = [...(outHeaders[k] ?? []), v]));
      nodeRes.writeHead(res.status, outHeaders);
      nodeRes.flushHeaders();
      if (!res.body) {
        nodeRes.end();
        return;
      }
      const reader = res.body.getReader();
      abort.signal.addEventListener('abort', () => reader.cancel().catch(() => undefined), { once: true });
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (!nodeRes.write(value)) await new Promise((r) => nodeRes.once('drain', r));
      }
      nodeRes.end();
    } catch (err) {
      if (!nodeRes.headersSent) nodeRes.writeHead(500, { 'content-type': 'text/plain' });
      nodeRes.end(`test server error: ${(err as Error).message}`);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  // Like Next.js, which writes the port it listens on to PORT: the agent's default MCP URL is
  // this server on the loopback interface (when neither AGENT_MCP_URL nor NEXTAUTH_URL is set).
  process.env.PORT = String(port);
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
