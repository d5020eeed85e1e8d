/**
 * Request-body guards of the MCP endpoint that run before any JSON parsing: the byte cap (shared
 * reader in `src/server/request-body.ts`), a linear nesting-depth scan, and a shallow scan that finds the
 * `tools/call` requests of a body that will not be parsed (so a refused call can still be audited).
 */
import 'server-only';

export const MAX_BODY_BYTES = 256 * 1024;
export const MAX_JSON_DEPTH = 32;
/** How much of an oversized body is read to find the tool it calls (for the audit trail). */
export const OVERSIZE_PREFIX_BYTES = 8 * 1024;

export { readBodyCapped } from '@/server/request-body';

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

export interface ScannedToolCall {
  /** `params.name` when it is a string, else null. */
  name: string | null;
  /** `params.arguments` as raw JSON text (never parsed), capped; null when absent or cut off. */
  argumentsText: string | null;
  /** `params._meta[metaKey]` when it is a string. */
  metaValue: string | null;
}

const MAX_SCANNED_STRING = 1000;
/** Containers tracked by the scanner: batch array, message, params, _meta or arguments. */
const TRACKED_LEVELS = 4;

interface Frame {
  isObject: boolean;
  /** The key under which this container sits in its parent object (null in arrays and at the root). */
  key: string | null;
  /** Object frames: the key whose value comes next, and whether the next string is a key. */
  pendingKey: string | null;
  expectKey: boolean;
  /** Offset of the opening bracket. */
  start: number;
  /** Set on message frames. */
  msg?: { method: string | null; hasId: boolean; call: ScannedToolCall };
}

function decodeJsonString(raw: string): string | null {
  if (raw.length > MAX_SCANNED_STRING) return null;
  try {
    const v: unknown = JSON.parse(raw);
    return typeof v === 'string' ? v : null;
  } catch {
    return null;
  }
}

/**
 * Finds the `tools/call` requests (messages with an `id`) of a JSON-RPC body WITHOUT parsing it:
 * one linear pass that keeps only the outer four container levels, and decodes only the few short
 * strings it needs (`method`, `params.name`, one `_meta` entry). It copes with truncated or invalid
 * JSON (returning what it recognized) and with bodies nested far too deep to parse. Duplicate keys
 * resolve as in JSON.parse (the last wins). At most `maxCalls` calls are returned.
 */
export function scanToolCalls(text: string, opts: { maxCalls: number; metaKey: string }): ScannedToolCall[] {
  const out: ScannedToolCall[] = [];
  const stack: Frame[] = [];
  let rootIsArray = false;
  /** Depth of containers below the tracked levels (skipped, only counted). */
  let untracked = 0;
  const msgLevel = () => (rootIsArray ? 2 : 1);

  const finishMessage = (f: Frame | undefined) => {
    if (f?.msg && f.msg.method === 'tools/call' && f.msg.hasId && out.length < opts.maxCalls) out.push(f.msg.call);
  };

  /** A value ended in the innermost tracked container: record it if its place matters. */
  const onValue = (value: { string: string | null } | { container: Frame; end: number } | null) => {
    const top = stack.at(-1);
    if (!top?.isObject) return;
    const key = top.pendingKey;
    top.pendingKey = null;
    top.expectKey = true;
    const m = msgLevel();
    const msg = stack[m - 1]?.msg;
    if (!msg || key === null) return;
    const str = value && 'string' in value ? value.string : null;
    const level = stack.length;
    if (level === m) {
      if (key === 'method') msg.method = str;
      else if (key === 'id') msg.hasId = true;
    } else if (level === m + 1 && stack[m]!.key === 'params') {
      if (key === 'name') msg.call.name = str;
      else if (key === 'arguments') {
        msg.call.argumentsText =
          value && 'container' in value
            ? text.slice(value.container.start, Math.min(value.end + 1, value.container.start + MAX_SCANNED_STRING))
            : null;
      }
    } else if (level === m + 2 && stack[m]!.key === 'params' && stack[m + 1]!.key === '_meta' && key === opts.metaKey) {
      msg.call.metaValue = str;
    }
  };

  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (j < text.length && text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c ? 2 : 1;
      if (j >= text.length) break; // cut off inside a string
      const raw = text.slice(i, j + 1);
      i = j;
      if (untracked > 0) continue;
      const top = stack.at(-1);
      if (top?.isObject && top.expectKey) {
        top.pendingKey = decodeJsonString(raw) ?? '';
        top.expectKey = false;
      } else {
        onValue({ string: decodeJsonString(raw) });
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      if (untracked > 0 || stack.length >= TRACKED_LEVELS) {
        untracked++;
        continue;
      }
      const parent = stack.at(-1);
      if (!parent && c === 0x5b) rootIsArray = true;
      const frame: Frame = {
        isObject: c === 0x7b,
        key: parent?.isObject ? parent.pendingKey : null,
        pendingKey: null,
        expectKey: c === 0x7b,
        start: i,
      };
      if (frame.isObject && stack.length + 1 === msgLevel()) {
        frame.msg = { method: null, hasId: false, call: { name: null, argumentsText: null, metaValue: null } };
      }
      stack.push(frame);
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      if (untracked > 0) {
        untracked--;
        if (untracked === 0) onValue(null);
        continue;
      }
      const f = stack.pop();
      if (!f) break; // unbalanced
      finishMessage(f);
      if (stack.length === 0) {
        if (rootIsArray) continue;
        break;
      }
      onValue({ container: f, end: i });
    } else if (untracked === 0 && c > 0x20 && c !== 0x3a /* : */ && c !== 0x2c /* , */) {
      // A number, true, false or null.
      let j = i;
      while (j < text.length && !' \t\n\r,:]}'.includes(text[j]!)) j++;
      onValue({ string: null });
      i = j - 1;
    }
  }
  // A body cut off (an oversized one) still reports the message it was in.
  if (stack.length >= msgLevel()) finishMessage(stack[msgLevel() - 1]);
  return out;
}
