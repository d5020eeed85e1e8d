/**
 * Reading the `Cookie` request header. Cookie values come from the client as they are: a value
 * that is not valid percent-encoding (`%E0%A4%A`) or a name sent twice must never break a request.
 * An undecodable value is skipped, as if the cookie were absent, so a broken session cookie means
 * "no session" (the user is asked to sign in and the cookie is replaced), never an error.
 */
import 'server-only';

/** Longest Cookie header read; browsers send at most a few KiB per site. */
const MAX_COOKIE_HEADER_CHARS = 64 * 1024;

function decodeValue(raw: string): string | undefined {
  const value = raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw.slice(1, -1) : raw;
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/**
 * The cookies of a `Cookie` header by name. The first occurrence of a name wins (browsers send the
 * cookie of the most specific path first); undecodable values are left out.
 */
export function parseCookieHeader(header: string | null | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.slice(0, MAX_COOKIE_HEADER_CHARS).split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!name || cookies.has(name)) continue;
    const value = decodeValue(part.slice(eq + 1).trim());
    if (value !== undefined) cookies.set(name, value);
  }
  return cookies;
}

/**
 * One cookie, also when it was split into chunks (`name.0`, `name.1`, ..., as next-auth does for
 * large tokens). A chunked cookie with a missing or undecodable chunk is treated as absent.
 */
export function readCookie(cookies: Map<string, string>, name: string): string | undefined {
  const direct = cookies.get(name);
  if (direct !== undefined) return direct;
  const chunks: Array<{ index: number; value: string }> = [];
  for (const [cookieName, value] of cookies) {
    if (!cookieName.startsWith(`${name}.`)) continue;
    const suffix = cookieName.slice(name.length + 1);
    if (!/^\d{1,3}$/.test(suffix)) continue;
    chunks.push({ index: Number(suffix), value });
  }
  if (chunks.length === 0) return undefined;
  chunks.sort((a, b) => a.index - b.index);
  // A gap means a chunk was dropped (e.g. it could not be decoded): the token is incomplete.
  if (chunks.some((c, i) => c.index !== i)) return undefined;
  return chunks.map((c) => c.value).join('');
}
