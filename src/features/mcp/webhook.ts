/**
 * Delivery of `notify_webhook`: one JSON POST to the project's webhook URL with a timeout, a size
 * cap on what is sent and read, and no redirects. Every failure is a ToolFailure (a tool error
 * result), never an exception that escapes the call.
 *
 * Destination guard (server-side request forgery, destination.ts): the address the connection goes
 * to is checked at connect time, inside the DNS lookup of that very connection, so a name that resolves
 * differently a second time cannot slip through. Always refused: cloud metadata names and
 * addresses, link-local (169.254.0.0/16, fe80::/10), "this network" (0.0.0.0/8, ::), multicast and
 * reserved ranges. Loopback and private networks (127.0.0.0/8, 10/8, 172.16/12, 192.168/16,
 * 100.64/10, ::1, fc00::/7) only when WEBHOOK_ALLOW_PRIVATE_NETWORKS allows them (default: allowed
 * in development and tests, refused in production).
 */
import 'server-only';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { z } from 'zod';
import { bareHost, classifyAddress, guardedLookup, isMetadataHost, isRefusedDestination } from './destination';
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

function addressAllowed(ip: string, allowPrivate: boolean): boolean {
  const c = classifyAddress(ip);
  return c === 'public' || (c === 'private' && allowPrivate);
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
  /**
   * Sent as `Idempotency-Key`: the same key for a repeat of the same call (an assistant's run and
   * tool call), so a receiver that honours it can drop a duplicate.
   */
  idempotencyKey?: string;
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
  const host = bareHost(target.hostname);
  if (isMetadataHost(host)) throw new ToolFailure('WEBHOOK_URL_REFUSED', REFUSED_MESSAGE);
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

  const lookup = guardedLookup((ip) => addressAllowed(ip, allowPrivate), REFUSED_MESSAGE);

  let status: number;
  try {
    status = await post(target, body, { signal, lookup, idempotencyKey: opts.idempotencyKey });
  } catch (err) {
    if (isRefusedDestination(err)) {
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
function post(
  target: URL,
  body: string,
  opts: { signal: AbortSignal; lookup: net.LookupFunction; idempotencyKey?: string },
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const request = (target.protocol === 'https:' ? https : http).request(target, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}),
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
