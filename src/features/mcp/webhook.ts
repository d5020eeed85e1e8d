/**
 * Delivery of `notify_webhook`: one JSON POST to the project's webhook URL with a timeout, a size
 * cap on what is sent and read, and no redirects. Every failure is a ToolFailure (a tool error
 * result), never an exception that escapes the call.
 *
 * Destination guard (server-side request forgery): the address the connection goes to is checked
 * at connect time, inside the DNS lookup of that very connection, so a name that resolves
 * differently a second time cannot slip through. Always refused: cloud metadata names and
 * addresses, link-local (169.254.0.0/16, fe80::/10), "this network" (0.0.0.0/8, ::), multicast and
 * reserved ranges. Loopback and private networks (127.0.0.0/8, 10/8, 172.16/12, 192.168/16,
 * 100.64/10, ::1, fc00::/7) only when WEBHOOK_ALLOW_PRIVATE_NETWORKS allows them (default: allowed
 * in development and tests, refused in production).
 */
import 'server-only';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { z } from 'zod';
import { ToolFailure } from './errors';

const WEBHOOK_TIMEOUT_MS = 5_000;
const WEBHOOK_MAX_REQUEST_BYTES = 16 * 1024;
const WEBHOOK_MAX_RESPONSE_BYTES = 4 * 1024;

/**
 * `WEBHOOK_ALLOW_PRIVATE_NETWORKS`: `1`/`true` or `0`/`false`; unset or blank means allowed unless
 * NODE_ENV is production. Any other value stops the app at start-up (like src/server/env.ts).
 */
export function parseAllowPrivateNetworks(raw: string | undefined, nodeEnv: string | undefined): boolean {
  const parsed = z.enum(['1', '0', 'true', 'false', '']).optional().safeParse(raw?.trim().toLowerCase());
  if (!parsed.success) {
    throw new Error(
      `Invalid environment: WEBHOOK_ALLOW_PRIVATE_NETWORKS must be 1, 0, true or false (got "${String(raw).slice(0, 20)}").`,
    );
  }
  const v = parsed.data;
  if (v === undefined || v === '') return nodeEnv !== 'production';
  return v === '1' || v === 'true';
}

/** Read once, when the module loads. */
export const WEBHOOK_ALLOW_PRIVATE_NETWORKS = parseAllowPrivateNetworks(
  process.env.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
  process.env.NODE_ENV,
);

/** Host names of cloud metadata services: refused whatever they resolve to. */
const METADATA_HOSTS: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'instance-data',
  'instance-data.ec2.internal',
]);

export type AddressClass = 'public' | 'private' | 'forbidden';

type Range = readonly [base: bigint, prefix: number, bits: 32 | 128];

function v4(a: number, b: number, c: number, d: number): bigint {
  return (BigInt(a) << 24n) | (BigInt(b) << 16n) | (BigInt(c) << 8n) | BigInt(d);
}

const V4_FORBIDDEN: Range[] = [
  [v4(0, 0, 0, 0), 8, 32], // "this network"
  [v4(169, 254, 0, 0), 16, 32], // link-local, incl. 169.254.169.254 (metadata)
  [v4(100, 100, 100, 200), 32, 32], // Alibaba Cloud metadata
  [v4(192, 0, 0, 0), 24, 32], // IETF protocol assignments (incl. 192.0.0.192 Oracle metadata)
  [v4(224, 0, 0, 0), 4, 32], // multicast
  [v4(240, 0, 0, 0), 4, 32], // reserved and broadcast
];
const V4_PRIVATE: Range[] = [
  [v4(127, 0, 0, 0), 8, 32],
  [v4(10, 0, 0, 0), 8, 32],
  [v4(172, 16, 0, 0), 12, 32],
  [v4(192, 168, 0, 0), 16, 32],
  [v4(100, 64, 0, 0), 10, 32], // carrier-grade NAT
  [v4(198, 18, 0, 0), 15, 32], // benchmarking
];
const V6_FORBIDDEN: Range[] = [
  [0n, 128, 128], // ::
  [0xfe80n << 112n, 10, 128], // link-local
  [0xff00n << 112n, 8, 128], // multicast
  [(0xfd00n << 112n) | (0x0ec2n << 96n) | 0x254n, 128, 128], // AWS metadata (fd00:ec2::254)
];
const V6_PRIVATE: Range[] = [
  [1n, 128, 128], // ::1
  [0xfc00n << 112n, 7, 128], // unique local
  [0xfec0n << 112n, 10, 128], // site-local (deprecated)
];

function inRange(value: bigint, [base, prefix, bits]: Range): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === base >> shift;
}

function parseV4(ip: string): bigint | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  let out = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    out = (out << 8n) | BigInt(Number(p));
  }
  return out;
}

function parseV6(ip: string): bigint | null {
  let text = ip.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // A trailing dotted IPv4 part (::ffff:1.2.3.4) becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const x = parseV4(dotted[1]!);
    if (x === null) return null;
    text = `${text.slice(0, dotted.index)}${(x >> 16n).toString(16)}:${(x & 0xffffn).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  let out = 0n;
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    out = (out << 16n) | BigInt(parseInt(g, 16));
  }
  return out;
}

function classifyV4(x: bigint): AddressClass {
  if (V4_FORBIDDEN.some((r) => inRange(x, r))) return 'forbidden';
  if (V4_PRIVATE.some((r) => inRange(x, r))) return 'private';
  return 'public';
}

/** Where an IP address points: the public internet, a private network, or somewhere never allowed. */
export function classifyAddress(ip: string): AddressClass {
  const family = net.isIP(ip);
  if (family === 4) {
    const x = parseV4(ip);
    return x === null ? 'forbidden' : classifyV4(x);
  }
  if (family !== 6) return 'forbidden';
  const x = parseV6(ip);
  if (x === null) return 'forbidden';
  // IPv4 carried in IPv6 is judged as IPv4: mapped (::ffff:0:0/96), compatible (::/96), NAT64
  // (64:ff9b::/96) and 6to4 (2002::/16).
  const low32 = x & 0xffffffffn;
  if (x >> 32n === 0xffffn || (x >> 32n === 0n && x > 1n)) return classifyV4(low32);
  if (x >> 32n === 0x64ff9bn << 64n) return classifyV4(low32);
  if (x >> 112n === 0x2002n) return classifyV4((x >> 80n) & 0xffffffffn);
  if (V6_FORBIDDEN.some((r) => inRange(x, r))) return 'forbidden';
  if (V6_PRIVATE.some((r) => inRange(x, r))) return 'private';
  return 'public';
}

function addressAllowed(ip: string, allowPrivate: boolean): boolean {
  const c = classifyAddress(ip);
  return c === 'public' || (c === 'private' && allowPrivate);
}

class RefusedDestination extends Error {
  readonly code = 'EWEBHOOKDESTINATION';
}

const REFUSED_MESSAGE =
  'The project webhook URL points to an address the product does not send to (cloud metadata, link-local, multicast, ' +
  'or a private network when those are not allowed). Use a public URL.';

export interface WebhookPayload {
  project: { id: string; slug: string; name: string };
  message: string;
}

export interface WebhookDelivery {
  delivered: true;
  status: number;
}

export interface WebhookOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Defaults to WEBHOOK_ALLOW_PRIVATE_NETWORKS. */
  allowPrivateNetworks?: boolean;
}

export async function deliverWebhook(
  url: string | null,
  payload: WebhookPayload,
  opts: WebhookOptions = {},
): Promise<WebhookDelivery> {
  if (!url)
    throw new ToolFailure(
      'WEBHOOK_NOT_CONFIGURED',
      'This project has no webhook URL configured. An admin can set one in the project settings.',
    );
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ToolFailure('WEBHOOK_FAILED', 'The project webhook URL is not a valid URL.');
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    throw new ToolFailure('WEBHOOK_FAILED', 'The project webhook URL must use http or https.');
  }
  const allowPrivate = opts.allowPrivateNetworks ?? WEBHOOK_ALLOW_PRIVATE_NETWORKS;
  const host = target.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
  if (METADATA_HOSTS.has(host)) throw new ToolFailure('WEBHOOK_URL_REFUSED', REFUSED_MESSAGE);
  // An IP literal is connected to without a lookup: check it here. Names are checked in `lookup`.
  if (net.isIP(host) && !addressAllowed(host, allowPrivate))
    throw new ToolFailure('WEBHOOK_URL_REFUSED', REFUSED_MESSAGE);

  const body = JSON.stringify(payload);
  if (Buffer.byteLength(body) > WEBHOOK_MAX_REQUEST_BYTES) {
    throw new ToolFailure('WEBHOOK_FAILED', 'The webhook message is too large.');
  }
  const timeoutMs = opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([timeout, ...(opts.signal ? [opts.signal] : [])]);

  const lookup: net.LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses;
      if (list.length === 0 || list.some((a) => !addressAllowed(a.address, allowPrivate))) {
        return callback(new RefusedDestination(REFUSED_MESSAGE), '', 0);
      }
      if (options.all) return callback(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };

  let status: number;
  try {
    status = await post(target, body, { signal, lookup });
  } catch (err) {
    if (err instanceof RefusedDestination || (err as { cause?: unknown }).cause instanceof RefusedDestination) {
      throw new ToolFailure('WEBHOOK_URL_REFUSED', REFUSED_MESSAGE);
    }
    if (timeout.aborted)
      throw new ToolFailure('WEBHOOK_FAILED', `The webhook did not answer within ${timeoutMs / 1000} s.`);
    if (signal.aborted) throw new ToolFailure('WEBHOOK_FAILED', 'The webhook call was cancelled.');
    throw new ToolFailure('WEBHOOK_FAILED', `Could not reach the webhook (${connectionReason(err)}).`);
  }
  if (status < 200 || status > 299) {
    throw new ToolFailure('WEBHOOK_FAILED', `The webhook answered HTTP ${status}; the message was not delivered.`, {
      httpStatus: status,
    });
  }
  return { delivered: true, status };
}

/** One POST without redirects; resolves with the status after reading at most a few KiB of the answer. */
function post(target: URL, body: string, opts: { signal: AbortSignal; lookup: net.LookupFunction }): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        'user-agent': 'tracker-webhook/1.0',
      },
      // A fresh connection per delivery: every connection goes through the checked lookup.
      agent: false,
      lookup: opts.lookup,
      signal: opts.signal,
    });
    request.on('error', reject);
    request.on('response', (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.byteLength;
        // The answer body does not matter; only the status does.
        if (read > WEBHOOK_MAX_RESPONSE_BYTES) {
          res.destroy();
          resolve(status);
        }
      });
      res.on('end', () => resolve(status));
      res.on('error', () => resolve(status));
      res.on('close', () => resolve(status));
    });
    request.end(body);
  });
}

function connectionReason(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const raw = typeof e.code === 'string' ? e.code : typeof e.cause?.code === 'string' ? e.cause.code : '';
  if (raw === 'ECONNREFUSED') return 'connection refused';
  if (raw === 'ENOTFOUND' || raw === 'EAI_AGAIN') return 'host not found';
  if (raw === 'ECONNRESET') return 'connection reset';
  if (raw.startsWith('CERT') || raw.includes('TLS') || raw.includes('SSL')) return 'TLS error';
  return 'network error';
}
