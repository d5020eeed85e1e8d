/**
 * Reads a request body as UTF-8 with a byte cap: the declared Content-Length is checked first, then
 * the cap is enforced while streaming, so an oversized body is never buffered past it. One reader
 * for every route that takes a body (the assistant's route, tRPC, MCP, sign-in).
 */
import 'server-only';

export type BodyRead =
  | { ok: true; text: string }
  | { ok: false; reason: 'unreadable' }
  /** `prefix`: the start of the body (at most `prefixBytes`), when asked for. */
  | { ok: false; reason: 'too_large'; prefix: string };

function decode(chunks: Uint8Array[], limit: number): string {
  const total = Math.min(
    limit,
    chunks.reduce((n, c) => n + c.byteLength, 0),
  );
  const buf = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    if (offset >= total) break;
    const part = c.byteLength > total - offset ? c.subarray(0, total - offset) : c;
    buf.set(part, offset);
    offset += part.byteLength;
  }
  return new TextDecoder('utf-8', { fatal: false }).decode(buf);
}

/**
 * Reads the body as UTF-8, refusing more than `maxBytes` without buffering past the cap. A refused
 * body comes back with its first `prefixBytes` (default none), read even when Content-Length
 * already declared it too large.
 */
export async function readBodyCapped(
  req: Request,
  maxBytes: number,
  opts: { prefixBytes?: number } = {},
): Promise<BodyRead> {
  const prefixBytes = opts.prefixBytes ?? 0;
  let limit = maxBytes;
  let declaredTooLarge = false;
  const declared = req.headers.get('content-length');
  if (declared !== null) {
    const n = Number(declared);
    if (!Number.isFinite(n) || n < 0) return { ok: false, reason: 'unreadable' };
    if (n > maxBytes) {
      if (prefixBytes === 0 || !req.body) return { ok: false, reason: 'too_large', prefix: '' };
      declaredTooLarge = true;
      limit = prefixBytes;
    }
  }
  if (!req.body) return { ok: true, text: '' };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.byteLength;
      if (total > limit || (declaredTooLarge && total >= limit)) {
        // Stop reading; the rest is never buffered. Not cancelling lets the server answer 413
        // before the connection closes instead of resetting it under the client.
        reader.releaseLock();
        return { ok: false, reason: 'too_large', prefix: decode(chunks, prefixBytes) };
      }
    }
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  if (declaredTooLarge) return { ok: false, reason: 'too_large', prefix: decode(chunks, prefixBytes) };
  return { ok: true, text: decode(chunks, total) };
}

export type BytesRead = { ok: true; bytes: Uint8Array } | { ok: false; reason: 'unreadable' | 'too_large' };

/**
 * Reads the body as bytes (an upload), refusing more than `maxBytes`: a declared Content-Length
 * over the cap is refused before reading, and the cap is enforced while streaming, so at most
 * `maxBytes` (plus the chunk that crossed it) is ever buffered.
 */
export async function readBytesCapped(req: Request, maxBytes: number): Promise<BytesRead> {
  const declared = req.headers.get('content-length');
  if (declared !== null) {
    const n = Number(declared);
    if (!Number.isFinite(n) || n < 0) return { ok: false, reason: 'unreadable' };
    if (n > maxBytes) return { ok: false, reason: 'too_large' };
  }
  if (!req.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        reader.releaseLock();
        return { ok: false, reason: 'too_large' };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  // Fewer bytes than declared: the body was cut short on its way (a proxy's copy of it, a broken
  // connection). A file is never stored in part.
  if (declared !== null && total !== Number(declared)) return { ok: false, reason: 'unreadable' };
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return { ok: true, bytes };
}
