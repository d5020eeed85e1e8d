// Webhook delivery against a real local receiver on 127.0.0.1: success, non-2xx, refused
// connection, timeout, redirect and missing configuration are all ToolFailures with a clear message.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolFailure } from '@/features/mcp/errors';
import { deliverWebhook } from '@/features/mcp/webhook';

let server: http.Server;
let base: string;
const bodies: string[] = [];

beforeAll(async () => {
  server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    bodies.push(Buffer.concat(chunks).toString('utf8'));
    if (req.url === '/slow') {
      setTimeout(() => res.writeHead(200).end(), 2000).unref();
      return;
    }
    if (req.url === '/fail') return void res.writeHead(500).end('boom');
    if (req.url === '/redirect') return void res.writeHead(302, { location: '/ok' }).end();
    res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(100_000));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const payload = { project: { id: 'p_1', slug: 'acme', name: 'Acme' }, message: 'hello' };

async function failure(p: Promise<unknown>): Promise<ToolFailure> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ToolFailure);
  return err as ToolFailure;
}

describe('deliverWebhook', () => {
  it('POSTs {project, message} as JSON and reports the status (large answers are not read in full)', async () => {
    bodies.length = 0;
    await expect(deliverWebhook(`${base}/ok`, payload)).resolves.toEqual({ delivered: true, status: 200 });
    expect(JSON.parse(bodies[0]!)).toEqual(payload);
  });

  it('reports a missing URL as WEBHOOK_NOT_CONFIGURED', async () => {
    expect((await failure(deliverWebhook(null, payload))).appCode).toBe('WEBHOOK_NOT_CONFIGURED');
  });

  it('reports a non-2xx answer, a redirect, a refused connection and a timeout as WEBHOOK_FAILED', async () => {
    const e500 = await failure(deliverWebhook(`${base}/fail`, payload));
    expect(e500.appCode).toBe('WEBHOOK_FAILED');
    expect(e500.message).toMatch(/HTTP 500/);

    expect((await failure(deliverWebhook(`${base}/redirect`, payload))).message).toMatch(/HTTP 302/);

    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const refused = await failure(deliverWebhook(`http://127.0.0.1:${port}/hook`, payload));
    expect(refused.message).toMatch(/connection refused/);

    const t0 = Date.now();
    const slow = await failure(deliverWebhook(`${base}/slow`, payload, { timeoutMs: 300 }));
    expect(slow.message).toMatch(/did not answer within 0.3 s/);
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('refuses URLs that are not http(s) and messages over the size cap', async () => {
    expect((await failure(deliverWebhook('file:///etc/passwd', payload))).appCode).toBe('WEBHOOK_FAILED');
    expect((await failure(deliverWebhook('not a url', payload))).appCode).toBe('WEBHOOK_FAILED');
    expect((await failure(deliverWebhook(`${base}/ok`, { ...payload, message: 'x'.repeat(20_000) }))).message).toMatch(/too large/);
  });
});
