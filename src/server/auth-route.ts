/**
 * The next-auth endpoints (`/api/auth/*`) as a plain web route handler. next-auth's own App Router
 * handler reads the request through `next/headers`, which parses cookies and bodies its own way
 * and only works inside Next's request scope. This adapter hands next-auth the same request parts
 * through its documented `NextAuth(req, res, options)` form, read from the standard Request:
 *
 * - cookies through `parseCookieHeader` (an undecodable cookie is skipped, never an error);
 * - the body capped at MAX_AUTH_BODY_BYTES, form or JSON; a malformed body is a 400, not a 500;
 * - a sign-in refused by the abuse limits (see sign-in-guard.ts) gets its real status, 429 or 503
 *   with Retry-After, instead of next-auth's generic 401;
 * - requests next-auth would answer with a 500 although the fault is the caller's are answered
 *   first: a `callbackUrl` (query or cookie) that is no http(s) URL is dropped (next-auth calls it a
 *   server configuration error), and the credentials callback takes POST only.
 *
 * Works the same under Next.js and in the integration tests' HTTP server.
 */
import 'server-only';
import type { NextApiRequest, NextApiResponse } from 'next';
import NextAuthModule from 'next-auth/next';
import { z } from 'zod';
import { parseSignInRefusal, SIGN_IN_REFUSALS } from '@/lib/sign-in-errors';
import { authOptions, cjsDefault } from './auth';
import { parseCookieHeader } from './cookies';
import { env } from './env';
import { readBodyCapped } from '@/server/request-body';

const MAX_AUTH_BODY_BYTES = 16 * 1024;

const NextAuth = cjsDefault(NextAuthModule);

const Segments = z.array(z.string().max(100)).min(1).max(4);

function jsonError(status: number, code: string, message: string): Response {
  return new Response(JSON.stringify({ error: { code, message } }), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
  });
}

class BadBody extends Error {}

async function readBody(req: Request): Promise<Record<string, unknown> | undefined> {
  if (req.method !== 'POST' || !req.body) return undefined;
  const body = await readBodyCapped(req, MAX_AUTH_BODY_BYTES);
  if (!body.ok) throw new BadBody(body.reason === 'too_large' ? 'too large' : 'unreadable');
  const text = body.text;
  const type = (req.headers.get('content-type') ?? '').toLowerCase();
  if (type.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  if (type.includes('application/json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new BadBody('malformed JSON');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new BadBody('not an object');
    // Only string fields reach next-auth (credentials, csrfToken, callbackUrl, json).
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  }
  return undefined;
}

/** The response object next-auth writes to, collected into a web Response. */
class CollectedResponse {
  statusCode = 200;
  readonly headers = new Headers();
  body: string | null = null;

  status(code: number): this {
    this.statusCode = code;
    return this;
  }
  getHeader(name: string): string[] | string | undefined {
    if (name.toLowerCase() === 'set-cookie') return this.headers.getSetCookie();
    return this.headers.get(name) ?? undefined;
  }
  setHeader(name: string, value: string | string[]): this {
    this.headers.delete(name);
    for (const v of Array.isArray(value) ? value : [value]) this.headers.append(name, v);
    return this;
  }
  json(value: unknown): void {
    this.headers.set('content-type', 'application/json');
    this.body = JSON.stringify(value);
  }
  send(value: unknown): void {
    if (value !== null && typeof value === 'object') {
      this.json(value);
      return;
    }
    this.body = value === undefined ? null : String(value);
  }
  end(): void {}

  /** The `error` code next-auth put in the URL it redirects to (or returns as JSON), if any. */
  errorCode(): string | null {
    let url = this.headers.get('location');
    if (!url && this.body && this.headers.get('content-type') === 'application/json') {
      try {
        url = (JSON.parse(this.body) as { url?: unknown }).url as string | null;
      } catch {
        url = null;
      }
    }
    if (typeof url !== 'string') return null;
    try {
      return new URL(url, 'http://localhost').searchParams.get('error');
    } catch {
      return null;
    }
  }

  toResponse(): Response {
    const refusal = parseSignInRefusal(this.errorCode());
    if (refusal) {
      // The limits' real meaning for HTTP clients; the browser's signIn() reads the same JSON.
      this.headers.set('retry-after', String(refusal.retryAfterSeconds));
      if (this.statusCode !== 302) this.statusCode = SIGN_IN_REFUSALS[refusal.code];
    }
    this.headers.set('cache-control', 'no-store');
    return new Response(this.body, { status: this.statusCode, headers: this.headers });
  }
}

const CALLBACK_URL_COOKIES = ['next-auth.callback-url', '__Secure-next-auth.callback-url'];

/** The test next-auth applies to a callback URL (absolute http(s), or a path on `base`). */
function isHttpUrl(value: string, base: string): boolean {
  try {
    return /^https?:$/.test(new URL(value, value.startsWith('/') ? base : undefined).protocol);
  } catch {
    return false;
  }
}

export async function handleAuthRequest(
  req: Request,
  ctx: { params: Promise<{ nextauth?: unknown }> },
): Promise<Response> {
  const segments = Segments.safeParse((await ctx.params).nextauth);
  if (!segments.success) return jsonError(404, 'NOT_FOUND', 'Not found.');
  let body: Record<string, unknown> | undefined;
  try {
    body = await readBody(req);
  } catch (err) {
    if (err instanceof BadBody) return jsonError(400, 'INVALID_REQUEST', 'The request body could not be read.');
    throw err;
  }
  const [action, provider] = segments.data;
  if (action === 'callback' && provider === 'credentials' && req.method !== 'POST') {
    return jsonError(405, 'METHOD_NOT_ALLOWED', 'Send the credentials with POST.');
  }
  const url = new URL(req.url);
  const base = env().NEXTAUTH_URL ?? url.origin;
  const query: Record<string, unknown> = Object.fromEntries(url.searchParams);
  if (typeof query.callbackUrl === 'string' && !isHttpUrl(query.callbackUrl, base)) delete query.callbackUrl;
  const cookies = parseCookieHeader(req.headers.get('cookie'));
  for (const name of CALLBACK_URL_COOKIES) {
    const value = cookies.get(name);
    if (value !== undefined && !isHttpUrl(value, base)) cookies.delete(name);
  }
  const request = {
    method: req.method,
    query: { ...query, nextauth: segments.data },
    headers: Object.fromEntries(req.headers),
    cookies: Object.fromEntries(cookies),
    body,
  };
  const res = new CollectedResponse();
  await NextAuth(request as unknown as NextApiRequest, res as unknown as NextApiResponse, authOptions());
  return res.toResponse();
}
