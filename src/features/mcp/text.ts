/**
 * Text hygiene for the MCP server: a zod string type that refuses control characters (PostgreSQL
 * cannot store NUL in text, and no tool needs the others), and helpers that make untrusted strings
 * safe to store and log (control characters escaped, length capped without splitting a character).
 */
import { z } from 'zod';

/** C0 controls except TAB, LF and CR; DEL; C1 controls. */
const FORBIDDEN_CONTROL = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
/** Every control character, for strings that are stored or logged as one line (names, codes). */
const ANY_CONTROL = /[\u0000-\u001F\u007F-\u009F]/g;
/** Half of a surrogate pair without the other half: not valid Unicode, not encodable as UTF-8. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

const CONTROL_CHARS_MESSAGE = 'must not contain control characters (such as NUL); only tab and line breaks are allowed';

/** True when `text` holds a control character other than tab, line feed or carriage return. */
export function hasForbiddenControlChars(text: string): boolean {
  return FORBIDDEN_CONTROL.test(text);
}

function hasLoneSurrogate(text: string): boolean {
  LONE_SURROGATE.lastIndex = 0;
  return LONE_SURROGATE.test(text);
}

/**
 * A string argument of a tool: control characters other than tab, LF and CR, and broken Unicode,
 * are refused (as INVALID_ARGUMENTS), then the usual trim and length limits apply.
 */
export function toolText(opts: { min?: number; max: number; trim?: boolean }) {
  let s = z
    .string()
    .refine((v) => !hasForbiddenControlChars(v), { message: CONTROL_CHARS_MESSAGE })
    .refine((v) => !hasLoneSurrogate(v), { message: 'must be valid Unicode text' });
  if (opts.trim !== false) s = s.trim();
  if (opts.min !== undefined) s = s.min(opts.min);
  return s.max(opts.max);
}

/** Escapes every control character as `\uXXXX`, so the text is one printable line. */
export function escapeControlChars(text: string): string {
  return text.replace(ANY_CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Cuts `text` to at most `max` UTF-16 units, ending with an ellipsis when cut, never leaving half
 * of a surrogate pair behind.
 */
export function capText(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = Math.max(0, max - 1);
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut -= 1;
  return `${text.slice(0, cut)}…`;
}

/** A value from a request made fit for a database column or a log line: escaped and capped. */
export function storable(text: string, max: number): string {
  // Lone surrogates cannot be encoded as UTF-8: replace them so the database never refuses the row.
  return capText(escapeControlChars(text.replace(LONE_SURROGATE, '\uFFFD')), max);
}
