/**
 * An authorization request between its check (GET /oauth/authorize) and the user's decision on the
 * consent page: the checked parameters, sealed with an HMAC (a key derived from NEXTAUTH_SECRET) and
 * carried in the consent page's URL and form, so nothing is stored for a request nobody answers and
 * nothing in it can be changed on the way. It expires after PENDING_TTL_MS (the user may need to
 * sign in first). Compact (short member names, no resource: it is always the MCP endpoint), because
 * the login page carries the consent page's URL back and forth.
 */
import 'server-only';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { env } from '@/server/env';
import type { Scope } from '@/server/rbac';
import { KEY_SCOPES } from '../key-scopes';
import { MAX_REDIRECT_URI_CHARS } from './redirect-uri';

export const PENDING_TTL_MS = 10 * 60_000;
/** Longest `state` accepted (clients send a few dozen characters). */
export const MAX_STATE_CHARS = 500;

export interface PendingAuthorization {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  /** The known scopes the client asked for (none: the user chooses). */
  scopes: Scope[];
  state: string | null;
  /** Expiry, milliseconds since the epoch. */
  exp: number;
}

const Sealed = z
  .object({
    c: z.string().min(1).max(500),
    r: z.string().min(1).max(MAX_REDIRECT_URI_CHARS),
    p: z.string().length(43),
    s: z.array(z.enum(KEY_SCOPES)).max(KEY_SCOPES.length),
    t: z.string().max(MAX_STATE_CHARS).nullable(),
    e: z.number().int(),
  })
  .strict();

function key(): Buffer {
  return createHash('sha256').update(`mcp-oauth-pending:${env().NEXTAUTH_SECRET}`).digest();
}

function mac(payload: string): string {
  return createHmac('sha256', key()).update(payload).digest('base64url');
}

/** The request, sealed: `<base64url JSON>.<base64url HMAC>`. */
export function sealPending(p: Omit<PendingAuthorization, 'exp'>, now = Date.now()): string {
  const body: z.infer<typeof Sealed> = {
    c: p.clientId,
    r: p.redirectUri,
    p: p.codeChallenge,
    s: p.scopes,
    t: p.state,
    e: now + PENDING_TTL_MS,
  };
  const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
  return `${payload}.${mac(payload)}`;
}

export type OpenedPending = { ok: true; pending: PendingAuthorization } | { ok: false; reason: 'invalid' | 'expired' };

/** The request a sealed value carries, when the seal is intact and it has not expired. */
export function openPending(sealed: unknown, now = Date.now()): OpenedPending {
  if (typeof sealed !== 'string' || sealed.length > 6000) return { ok: false, reason: 'invalid' };
  const dot = sealed.indexOf('.');
  if (dot <= 0) return { ok: false, reason: 'invalid' };
  const payload = sealed.slice(0, dot);
  const given = Buffer.from(sealed.slice(dot + 1));
  const expected = Buffer.from(mac(payload));
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'invalid' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return { ok: false, reason: 'invalid' };
  }
  const r = Sealed.safeParse(parsed);
  if (!r.success) return { ok: false, reason: 'invalid' };
  const v = r.data;
  if (v.e <= now) return { ok: false, reason: 'expired' };
  return {
    ok: true,
    pending: { clientId: v.c, redirectUri: v.r, codeChallenge: v.p, scopes: v.s, state: v.t, exp: v.e },
  };
}
