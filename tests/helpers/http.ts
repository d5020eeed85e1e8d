// A real HTTP server on 127.0.0.1 that serves the app's route handlers (the same modules Next.js
// serves), so integration tests speak real HTTP to real handlers without a Next build.
import { startAgentServices } from '@/features/in-app-agent/server/boot';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

type Handler = (
  req: Request,
  ctx: { params: Promise<Record<string, string | string[]>> },
) => Promise<Response> | Response;
type RouteModule = Partial<Record<'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS', Handler>>;

interface RouteDef {
  pattern: RegExp;
  keys: string[];
  /** Which of the assistant's routes this is (replaceable by `agentRoutes`). */
  agent?: 'start' | 'events' | 'cancel';
  /** A catch-all segment (`[...name]`): the param is the array of path segments. */
  catchAll?: boolean;
  load: () => Promise<RouteModule>;
}

const ROUTES: RouteDef[] = [
  {
    pattern: /^\/api\/auth\/(.+)$/,
    keys: ['nextauth'],
    catchAll: true,
    load: () => import('@/app/api/auth/[...nextauth]/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/health$/,
    keys: [],
    load: () => import('@/app/api/health/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/ready$/,
    keys: [],
    load: () => import('@/app/api/ready/route') as unknown as Promise<RouteModule>,
  },
  { pattern: /^\/api\/trpc\/([^/]+)$/, keys: ['trpc'], load: () => import('@/app/api/trpc/[trpc]/route') },
  {
    pattern: /^\/api\/public\/mcp$/,
    keys: [],
    load: () => import('@/app/api/public/mcp/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/\.well-known\/oauth-protected-resource$/,
    keys: [],
    load: () => import('@/app/.well-known/oauth-protected-resource/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/\.well-known\/oauth-protected-resource\/(.+)$/,
    keys: ['path'],
    catchAll: true,
    load: () => import('@/app/.well-known/oauth-protected-resource/[...path]/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/\.well-known\/oauth-authorization-server$/,
    keys: [],
    load: () => import('@/app/.well-known/oauth-authorization-server/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/oauth\/authorize$/,
    keys: [],
    load: () => import('@/app/oauth/authorize/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/oauth\/consent\/decision$/,
    keys: [],
    load: () => import('@/app/oauth/consent/decision/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/oauth\/token$/,
    keys: [],
    load: () => import('@/app/api/oauth/token/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/oauth\/register$/,
    keys: [],
    load: () => import('@/app/api/oauth/register/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/oauth\/revoke$/,
    keys: [],
    load: () => import('@/app/api/oauth/revoke/route') as unknown as Promise<RouteModule>,
  },
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
    load: () =>
      import(
        '@/app/api/projects/[projectId]/in-app-agent/runs/[runId]/events/route'
      ) as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/projects\/([^/]+)\/in-app-agent\/runs\/([^/]+)\/cancel$/,
    keys: ['projectId', 'runId'],
    agent: 'cancel',
    load: () =>
      import(
        '@/app/api/projects/[projectId]/in-app-agent/runs/[runId]/cancel/route'
      ) as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/projects\/([^/]+)\/in-app-agent\/attachments$/,
    keys: ['projectId'],
    load: () =>
      import('@/app/api/projects/[projectId]/in-app-agent/attachments/route') as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/projects\/([^/]+)\/in-app-agent\/attachments\/([^/]+)$/,
    keys: ['projectId', 'attachmentId'],
    load: () =>
      import(
        '@/app/api/projects/[projectId]/in-app-agent/attachments/[attachmentId]/route'
      ) as unknown as Promise<RouteModule>,
  },
  {
    pattern: /^\/api\/projects\/([^/]+)\/in-app-agent\/feedback-export$/,
    keys: ['projectId'],
    load: () =>
      import('@/app/api/projects/[projectId]/in-app-agent/feedback-export/route') as unknown as Promise<RouteModule>,
  },
];

/**
 * The request body as a stream, as Next.js hands it to route handlers: a handler that refuses a
 * body (too large, unauthenticated) answers without waiting for all of it. A handler that stops
 * reading leaves the rest to be read and discarded (the connection is not reset under the client,
 * which is still sending and then reads the answer).
 */
function bodyStream(req: http.IncomingMessage): { stream: ReadableStream<Uint8Array>; discardRest(): void } {
  let done = false;
  const discardRest = () => {
    done = true;
    req.resume();
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      req.pause();
      req.on('data', (chunk: Buffer) => {
        if (done) return;
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 0) <= 0) req.pause();
      });
      req.on('end', () => {
        if (!done) controller.close();
        done = true;
      });
      req.on('error', (err) => {
        if (!done) controller.error(err);
        done = true;
      });
    },
    pull() {
      req.resume();
    },
    cancel: discardRest,
  });
  return { stream, discardRest };
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
  /**
   * Period of the assistant's stale-run sweep. The assistant's services start once per process,
   * as the production server starts them at boot: the first server of a test file decides.
   */
  staleSweepMs?: number;
}

/**
 * Each route module once per process, as Next.js loads it: a dynamic import on every request
 * would go through the TypeScript loader's hooks each time (milliseconds that no deployment pays).
 */
const modules = new Map<RouteDef, Promise<RouteModule>>();
function loaded(route: RouteDef): Promise<RouteModule> {
  let mod = modules.get(route);
  if (!mod) {
    mod = route.load();
    modules.set(route, mod);
    mod.catch(() => modules.delete(route));
  }
  return mod;
}

export async function startTestServer(opts: TestServerOptions = {}): Promise<TestServer> {
  // What src/instrumentation.ts starts at boot in production (src/server/housekeeping.ts).
  await startAgentServices({ staleSweepMs: opts.staleSweepMs });
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
      const mod = await loaded(route);
      const replaced = route.agent
        ? (opts.agentRoutes?.[route.agent] ?? (route.agent === 'start' ? opts.agentHandler : undefined))
        : undefined;
      const fn = replaced && (method === 'POST') === (route.agent !== 'events') ? replaced : mod[method];
      if (!fn) {
        nodeRes.writeHead(405).end('method not allowed');
        return;
      }
      const m = route.pattern.exec(url.pathname)!;
      const params: Record<string, string | string[]> = {};
      try {
        route.keys.forEach((k, i) => {
          const raw = m[i + 1]!;
          params[k] = route.catchAll ? raw.split('/').map(decodeURIComponent) : decodeURIComponent(raw);
        });
      } catch {
        // Like Next.js: a path that is not valid percent-encoding is a bad request.
        nodeRes.writeHead(400, { 'content-type': 'text/plain' }).end('bad request');
        return;
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(nodeReq.headers)) {
        if (Array.isArray(v)) for (const x of v) headers.append(k, x);
        else if (v !== undefined) headers.set(k, v);
      }
      const hasBody = method !== 'GET' && method !== ('HEAD' as never);
      const body = hasBody ? bodyStream(nodeReq) : null;
      const req = new Request(url, {
        method,
        headers,
        body: body?.stream,
        // A streamed request body (Node's fetch needs to be told).
        ...(hasBody ? { duplex: 'half' } : {}),
        signal: abort.signal,
      });
      const res = await fn(req, { params: Promise.resolve(params) });
      // What the handler did not read is read and dropped, so the client can read the answer.
      if (!nodeReq.complete) body?.discardRest();
      const outHeaders: Record<string, string[]> = {};
      res.headers.forEach((v, k) => {
        outHeaders[k] = [...(outHeaders[k] ?? []), v];
      });
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
