/**
 * Delivery of `notify_webhook`: one JSON POST to the project's webhook URL with a timeout, a size
 * cap on what is sent and read, and no redirects. Every failure is a ToolFailure (a tool error
 * result), never an exception that escapes the call.
 */
import { ToolFailure } from './errors';

export const WEBHOOK_TIMEOUT_MS = 5_000;
export const WEBHOOK_MAX_REQUEST_BYTES = 16 * 1024;
const WEBHOOK_MAX_RESPONSE_BYTES = 4 * 1024;

export interface WebhookPayload {
  project: { id: string; slug: string; name: string };
  message: string;
}

export interface WebhookDelivery {
  delivered: true;
  status: number;
}

export async function deliverWebhook(
  url: string | null,
  payload: WebhookPayload,
  opts: { signal?: AbortSignal; timeoutMs?: number } = {},
): Promise<WebhookDelivery> {
  if (!url) throw new ToolFailure('WEBHOOK_NOT_CONFIGURED', 'This project has no webhook URL configured. An admin can set one in the project settings.');
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ToolFailure('WEBHOOK_FAILED', 'The project webhook URL is not a valid URL.');
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') {
    throw new ToolFailure('WEBHOOK_FAILED', 'The project webhook URL must use http or https.');
  }
  const body = JSON.stringify(payload);
  if (Buffer.byteLength(body) > WEBHOOK_MAX_REQUEST_BYTES) {
    throw new ToolFailure('WEBHOOK_FAILED', 'The webhook message is too large.');
  }
  const timeoutMs = opts.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const signals = [AbortSignal.timeout(timeoutMs), ...(opts.signal ? [opts.signal] : [])];
  let res: Response;
  try {
    res = await fetch(target, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'tracker-webhook/1.0' },
      body,
      redirect: 'manual',
      signal: AbortSignal.any(signals),
    });
  } catch (err) {
    const name = (err as Error).name;
    if (name === 'TimeoutError') throw new ToolFailure('WEBHOOK_FAILED', `The webhook did not answer within ${timeoutMs / 1000} s.`);
    if (name === 'AbortError') throw new ToolFailure('WEBHOOK_FAILED', 'The webhook call was cancelled.');
    throw new ToolFailure('WEBHOOK_FAILED', `Could not reach the webhook (${connectionReason(err)}).`);
  }
  // Read (and discard) at most a few KiB of the answer so the connection is released.
  await drain(res, WEBHOOK_MAX_RESPONSE_BYTES);
  if (res.status < 200 || res.status > 299) {
    throw new ToolFailure('WEBHOOK_FAILED', `The webhook answered HTTP ${res.status}; the message was not delivered.`, { httpStatus: res.status });
  }
  return { delivered: true, status: res.status };
}

function connectionReason(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? cause.code : '';
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ECONNRESET') return 'connection reset';
  if (code.startsWith('CERT') || code.includes('TLS') || code.includes('SSL')) return 'TLS error';
  return 'network error';
}

async function drain(res: Response, max: number): Promise<void> {
  if (!res.body) return;
  const reader = res.body.getReader();
  let read = 0;
  try {
    while (read <= max) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
    await reader.cancel();
  } catch {
    // The answer body does not matter; only the status does.
  }
}
