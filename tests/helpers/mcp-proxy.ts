// A pass-through HTTP proxy in front of the product's MCP endpoint: records the bearer keys the
// agent sends, and can hold `tools/call` requests for a while (a slow tool) to observe whether the
// caller cancels them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface McpProxy {
  url: string;
  /** Authorization headers of every request, in order. */
  auth: string[];
  /** Hold each `tools/call` this long before forwarding it (0: forward at once). */
  toolDelayMs: number;
  /** Tool names of `tools/call` requests forwarded to the MCP endpoint. */
  forwarded: string[];
  /** Tool names of `tools/call` requests whose caller went away while they were held. */
  cancelled: string[];
  close(): Promise<void>;
}

function toolNameOf(body: Buffer): string | null {
  try {
    const msg = JSON.parse(body.toString('utf8')) as { method?: string; params?: { name?: string } };
    return msg.method === 'tools/call' ? String(msg.params?.name ?? '') : null;
  } catch {
    return null;
  }
}

export async function startMcpProxy(target: () => string): Promise<McpProxy> {
  const proxy: Omit<McpProxy, 'url' | 'close'> = { auth: [], toolDelayMs: 0, forwarded: [], cancelled: [] };
  const s = http.createServer(async (req, res) => {
    proxy.auth.push(String(req.headers.authorization ?? ''));
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks);
    const tool = req.method === 'POST' ? toolNameOf(body) : null;
    if (tool !== null && proxy.toolDelayMs > 0) {
      const gone = await new Promise<boolean>((resolve) => {
        const t = setTimeout(() => resolve(false), proxy.toolDelayMs);
        res.once('close', () => {
          clearTimeout(t);
          resolve(!res.writableFinished);
        });
      });
      if (gone) {
        proxy.cancelled.push(tool);
        return;
      }
    }
    if (tool !== null) proxy.forwarded.push(tool);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      if (typeof v === 'string' && k !== 'host' && k !== 'content-length') headers[k] = v;
    try {
      const upstream = await fetch(`${target()}/api/public/mcp`, {
        method: req.method,
        headers,
        body: req.method === 'POST' ? body : undefined,
      });
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
      res.end(Buffer.from(await upstream.arrayBuffer()));
    } catch {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    }
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${(s.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((r) => {
        s.closeAllConnections();
        s.close(() => r());
      }),
  });
}
