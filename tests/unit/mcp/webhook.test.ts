// Webhook delivery against a real local receiver on 127.0.0.1: success, non-2xx, refused
// connection, timeout, redirect and missing configuration are all ToolFailures with a clear message;
// destinations that could reach internal services are refused before any connection.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolFailure } from '@/features/mcp/errors';
import { classifyAddress } from '@/features/mcp/destination';
import { deliverWebhook, parseAllowPrivateNetworks, WEBHOOK_ALLOW_PRIVATE_NETWORKS } from '@/features/mcp/webhook';

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
    expect((await failure(deliverWebhook(`${base}/ok`, { ...payload, message: 'x'.repeat(20_000) }))).message).toMatch(
      /too large/,
    );
  });
});

describe('destination guard', () => {
  it('classifies addresses: metadata, link-local, "this network", multicast always refused; private and loopback apart', () => {
    const forbidden = [
      '169.254.169.254',
      '169.254.0.1',
      '0.0.0.0',
      '0.1.2.3',
      '224.0.0.1',
      '239.255.255.250',
      '255.255.255.255',
      '100.100.100.200',
      '::',
      'fe80::1',
      'febf::1',
      'ff02::1',
      'fd00:ec2::254',
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '2002:a9fe:a9fe::1',
    ];
    for (const ip of forbidden) expect(classifyAddress(ip), ip).toBe('forbidden');
    for (const ip of [
      '127.0.0.1',
      '127.9.9.9',
      '10.1.2.3',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '100.64.0.1',
      '::1',
      'fd12::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
    ]) {
      expect(classifyAddress(ip), ip).toBe('private');
    }
    for (const ip of ['93.184.216.34', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '::ffff:8.8.8.8'])
      expect(classifyAddress(ip), ip).toBe('public');
    expect(classifyAddress('not-an-ip')).toBe('forbidden');
  });

  it('refuses cloud metadata and link-local destinations, even when private networks are allowed, without connecting', async () => {
    for (const url of [
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://0.0.0.0:1/',
      'http://224.0.0.1/',
      'http://metadata.google.internal/computeMetadata/v1/',
      'http://METADATA.google.internal./',
    ]) {
      const t0 = Date.now();
      const err = await failure(deliverWebhook(url, payload, { allowPrivateNetworks: true }));
      expect(err.appCode, url).toBe('WEBHOOK_URL_REFUSED');
      expect(Date.now() - t0, url).toBeLessThan(500);
    }
  });

  it('refuses loopback and private destinations, by address or by name, unless private networks are allowed', async () => {
    bodies.length = 0;
    const port = new URL(base).port;
    for (const url of [`${base}/ok`, `http://localhost:${port}/ok`, `http://[::1]:${port}/ok`, 'http://10.0.0.1/']) {
      expect((await failure(deliverWebhook(url, payload, { allowPrivateNetworks: false }))).appCode, url).toBe(
        'WEBHOOK_URL_REFUSED',
      );
    }
    expect(bodies).toHaveLength(0);
    // Allowed: the checked lookup lets the connection through to the same receiver.
    await expect(
      deliverWebhook(`http://localhost:${port}/ok`, payload, { allowPrivateNetworks: true }),
    ).resolves.toEqual({ delivered: true, status: 200 });
    expect(bodies).toHaveLength(1);
  });

  it('reads WEBHOOK_ALLOW_PRIVATE_NETWORKS: allowed by default outside production, refused in production, invalid values stop', () => {
    expect(WEBHOOK_ALLOW_PRIVATE_NETWORKS).toBe(true); // tests run with NODE_ENV=test
    expect(parseAllowPrivateNetworks(undefined, 'test')).toBe(true);
    expect(parseAllowPrivateNetworks(undefined, 'development')).toBe(true);
    expect(parseAllowPrivateNetworks(undefined, 'production')).toBe(false);
    expect(parseAllowPrivateNetworks('', 'production')).toBe(false);
    expect(parseAllowPrivateNetworks('1', 'production')).toBe(true);
    expect(parseAllowPrivateNetworks('TRUE', 'production')).toBe(true);
    expect(parseAllowPrivateNetworks('false', 'development')).toBe(false);
    expect(() => parseAllowPrivateNetworks('yes', 'production')).toThrow(/WEBHOOK_ALLOW_PRIVATE_NETWORKS/);
  });
});
