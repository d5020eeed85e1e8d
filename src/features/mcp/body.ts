/**
 * Request-body guards that run before any JSON parsing: a byte cap (declared Content-Length first,
 * then enforced while streaming) and a linear nesting-depth scan.
 */

export const MAX_BODY_BYTES = 256 * 1024;
export const MAX_JSON_DEPTH = 32;

export type BodyRead = { ok: true; text: string } | { ok: false; reason: 'too_large' | 'unreadable' };

/** Reads the body as UTF-8, refusing more than `maxBytes` without buffering past the cap. */
export async function readBodyCapped(req: Request, maxBytes = MAX_BODY_BYTES): Promise<BodyRead> {
  const declared = req.headers.get('content-length');
  if (declared !== null) {
    const n = Number(declared);
    if (!Number.isFinite(n) || n < 0) return { ok: false, reason: 'unreadable' };
    if (n > maxBytes) return { ok: false, reason: 'too_large' };
  }
  if (!req.body) return { ok: true, text: '' };
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        // Stop reading; buffered chunks are dropped. Not cancelling lets the server answer 413
        // before the connection closes instead of resetting it under the client.
        reader.releaseLock();
        return { ok: false, reason: 'too_large' };
      }
      chunks.push(value);
    }
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  const buf = new Uint8Array(total);
  let offset = 0;
  for (const c of chunks) {
    buf.set(c, offset);
    offset += c.byteLength;
  }
  return { ok: true, text: new TextDecoder('utf-8', { fatal: false }).decode(buf) };
}

/**
 * True when the JSON text nests arrays/objects deeper than `maxDepth`. A single pass that skips
 * string contents (with escapes), so it is cheap and safe to run on untrusted input before parsing.
 */
export function jsonTooDeep(text: string, maxDepth = MAX_JSON_DEPTH): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c /* \ */) i++;
      else if (c === 0x22 /* " */) inString = false;
      continue;
    }
    if (c === 0x22) inString = true;
    else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      depth++;
      if (depth > maxDepth) return true;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) depth--;
  }
  return false;
}
