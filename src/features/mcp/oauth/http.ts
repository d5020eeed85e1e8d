/**
 * HTTP helpers of the authorization server's endpoints: CORS for browser-based MCP clients (the
 * metadata, token, registration and revocation endpoints and the MCP endpoint itself carry no
 * cookies, so any origin may call them; a preflight is always answered, never with 401), JSON
 * answers that are never cached, and capped form and JSON bodies.
 */
import 'server-only';
import { readBodyCapped } from '@/server/request-body';

const ALLOWED_HEADERS = 'authorization, content-type, accept, mcp-protocol-version, mcp-session-id, last-event-id';
const EXPOSED_HEADERS = 'www-authenticate, mcp-session-id, mcp-protocol-version, retry-after';

/** The CORS headers of every answer of these endpoints. */
export function corsHeaders(): Record<string, string> {
  return { 'access-control-allow-origin': '*', 'access-control-expose-headers': EXPOSED_HEADERS };
}

/** The answer to a CORS preflight (`OPTIONS`), for `methods`. */
export function preflight(methods: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      ...corsHeaders(),
      'access-control-allow-methods': `${methods}, OPTIONS`,
      'access-control-allow-headers': ALLOWED_HEADERS,
      'access-control-max-age': '600',
      allow: `${methods}, OPTIONS`,
    },
  });
}

/** `res` with the CORS headers added (for answers made elsewhere, such as the MCP endpoint's). */
export function withCors(res: Response): Response {
  const headers = new Headers(res.headers);
  for (const [name, value] of Object.entries(corsHeaders())) headers.set(name, value);
  return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
}

/** A JSON answer that no cache keeps (tokens, registrations). */
export function noStoreJson(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return Response.json(body, {
    status,
    headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...corsHeaders(), ...headers },
  });
}

/** Largest form or JSON body these endpoints read. */
export const MAX_OAUTH_BODY_BYTES = 16 * 1024;

export type BodyRead<T> = { ok: true; value: T } | { ok: false; description: string };

/** An `application/x-www-form-urlencoded` body, capped; a parameter given twice is refused (RFC 6749 §3.1). */
export async function readForm(req: Request): Promise<BodyRead<Map<string, string>>> {
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded')
    return { ok: false, description: 'Send the parameters as application/x-www-form-urlencoded.' };
  const body = await readBodyCapped(req, MAX_OAUTH_BODY_BYTES);
  if (!body.ok)
    return {
      ok: false,
      description: body.reason === 'too_large' ? 'The request body is too large.' : 'Could not read the body.',
    };
  const params = new URLSearchParams(body.text);
  const out = new Map<string, string>();
  for (const [name, value] of params) {
    if (out.has(name)) return { ok: false, description: `The parameter ${name.slice(0, 40)} is given more than once.` };
    out.set(name, value);
  }
  return { ok: true, value: out };
}

/** A JSON body, capped. */
export async function readJson(req: Request): Promise<BodyRead<unknown>> {
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return { ok: false, description: 'Send the metadata as application/json.' };
  const body = await readBodyCapped(req, MAX_OAUTH_BODY_BYTES);
  if (!body.ok)
    return {
      ok: false,
      description: body.reason === 'too_large' ? 'The request body is too large.' : 'Could not read the body.',
    };
  try {
    return { ok: true, value: JSON.parse(body.text) as unknown };
  } catch {
    return { ok: false, description: 'The body is not valid JSON.' };
  }
}
