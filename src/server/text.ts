/**
 * Text that can be stored. PostgreSQL refuses NUL (0x00) in `text` columns and parameters (error
 * 22021) and `\u0000` in `jsonb` (22P05), so a string carrying one would fail deep inside a query.
 * Every string that reaches the database from outside (tRPC input, page URLs, MCP arguments) is
 * validated at the boundary with one of these schemas instead, and refused with a clear message.
 *
 * - `SafeText`: free text. Refuses NUL and the other C0 control characters except tab, line feed
 *   and carriage return, and broken Unicode (half a surrogate pair, which UTF-8 cannot encode and
 *   would be stored as U+FFFD). Chain as usual: `SafeText.trim().min(1).max(200)`.
 * - `Identifier`: ids of rows (`p_…`, `u_…`, uuids): 1-64 characters of `A-Z a-z 0-9 _ -`.
 *
 * `isInvalidTextError` recognizes the database's own refusal, for the safety net that turns it into
 * a BAD_REQUEST (appCode `INVALID_TEXT`) where a schema was missed.
 */
import 'server-only';
import { z } from 'zod';

const NO_CONTROL_CHARACTERS = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F]*$/;
const IDENTIFIER = /^[A-Za-z0-9_-]+$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export const INVALID_TEXT_MESSAGE = 'Text must not contain control characters (such as NUL).';

/** Free text without NUL or other control characters (tab, line feed and carriage return allowed). */
export const SafeText = z
  .string()
  .regex(NO_CONTROL_CHARACTERS, INVALID_TEXT_MESSAGE)
  .refine((v) => !LONE_SURROGATE.test(v), 'Text must be valid Unicode.');

/** A row id: 1-64 characters of letters, digits, `_` and `-`. */
export const Identifier = z.string().min(1, 'An id is required.').max(64).regex(IDENTIFIER, 'Not a valid id.');

/** True when `value` is an acceptable `Identifier`. */
export function isIdentifier(value: unknown): value is string {
  return Identifier.safeParse(value).success;
}

/** NUL, or half of a surrogate pair: what PostgreSQL refuses in text and jsonb. */
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * True when a string anywhere in `value` (arrays and objects walked up to `maxDepth` levels; deeper
 * counts as unstorable) holds a NUL or broken Unicode: for request parts stored as they are.
 */
export function hasUnstorableText(value: unknown, maxDepth = 32): boolean {
  if (typeof value === 'string') return UNSTORABLE.test(value);
  if (value === null || typeof value !== 'object') return false;
  if (maxDepth <= 0) return true;
  const items = Array.isArray(value) ? value : Object.entries(value).flat();
  return items.some((v) => hasUnstorableText(v, maxDepth - 1));
}

/** The stable appCode of a request refused for text the database cannot store. */
export const INVALID_TEXT_APP_CODE = 'INVALID_TEXT';

/** PostgreSQL SQLSTATEs for text it cannot store: 0x00 in text (22021), \u0000 in jsonb (22P05). */
const INVALID_TEXT_SQLSTATES: ReadonlySet<string> = new Set(['22021', '22P05']);

/**
 * Whether `err` (or an error it wraps) is PostgreSQL refusing a NUL / untranslatable character:
 * a `pg` or PGlite error with `code`, or a Prisma error carrying the driver adapter's cause.
 */
export function isInvalidTextError(err: unknown, depth = 0): boolean {
  if (!err || typeof err !== 'object' || depth > 5) return false;
  const e = err as {
    code?: unknown;
    originalCode?: unknown;
    cause?: unknown;
    meta?: { driverAdapterError?: { cause?: unknown } };
  };
  for (const c of [e.code, e.originalCode]) if (typeof c === 'string' && INVALID_TEXT_SQLSTATES.has(c)) return true;
  return isInvalidTextError(e.meta?.driverAdapterError?.cause, depth + 1) || isInvalidTextError(e.cause, depth + 1);
}
