/**
 * Single-use overrides: a server-signed token that lets one in-app-agent key run exactly one
 * non-read-only tool call, with exactly the arguments a person approved.
 *
 * Token: `base64url(JSON payload) + "." + base64url(HMAC-SHA256(secret, payload part))`. The payload
 * names the tool, the SHA-256 fingerprint of the canonical JSON of the arguments, the key id, a
 * random nonce and an expiry. The MCP route verifies the token here and then consumes the nonce once
 * in the database (`McpOverrideUse`), so a replay fails on every instance.
 *
 * No database or request code lives here: the agent side imports this module to mint tokens.
 */
import 'server-only';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { env } from '@/server/env';

/** `_meta` key of a `tools/call` request carrying the override token. */
export const OVERRIDE_META_KEY = 'in-app-agent/override';
/** `_meta` key of a `tools/call` request carrying the agent's tool-call id (recorded in the audit). */
export const TOOL_CALL_META_KEY = 'in-app-agent/toolCallId';

/** Default life of an override: long enough to execute right after the approval, no longer. */
const OVERRIDE_TTL_SECONDS = 120;
/**
 * Longest life a token may have. Verification refuses tokens that expire later than this from now,
 * so a consumed nonce older than this (plus a margin) can be forgotten: its token has expired.
 */
export const MAX_OVERRIDE_TTL_SECONDS = 3600;
const MAX_TOKEN_LENGTH = 2048;
const TOKEN_VERSION = 1;

/**
 * Canonical JSON: object keys sorted recursively, no whitespace, `undefined` members dropped (as
 * `JSON.stringify` does). Two argument objects that mean the same thing serialize identically.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortDeep(value)) ?? 'null';
}

function sortDeep(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : sortDeep(v)));
  if (value && typeof value === 'object') {
    if (typeof (value as { toJSON?: unknown }).toJSON === 'function')
      return sortDeep((value as { toJSON(): unknown }).toJSON());
    // A null-prototype object: a key named `__proto__` stays an ordinary key instead of setting
    // the prototype (which would drop it from the JSON and let two argument sets collide).
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const k of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortDeep(v);
    }
    return out;
  }
  return value;
}

/** SHA-256 (hex) of the canonical JSON of a tool call's arguments. Missing arguments count as `{}`. */
export function fingerprintArgs(args: unknown): string {
  return createHash('sha256')
    .update(canonicalJson(args ?? {}))
    .digest('hex');
}

const PayloadSchema = z
  .object({
    v: z.literal(TOKEN_VERSION),
    tool: z.string().min(1).max(100),
    fp: z.string().regex(/^[0-9a-f]{64}$/),
    kid: z.string().min(1).max(100),
    nonce: z.string().regex(/^[A-Za-z0-9_-]{16,64}$/),
    exp: z.number().int().positive(),
  })
  .strict();
export type OverridePayload = z.infer<typeof PayloadSchema>;

function sign(payloadPart: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(payloadPart).digest();
}

/** Mints a token for one call of `tool` with arguments whose fingerprint is `argsFingerprint`. */
export function mintOverride(input: {
  tool: string;
  argsFingerprint: string;
  keyId: string;
  ttlSeconds?: number;
  /** For tests: the current time in ms. */
  now?: number;
  secret?: string;
}): string {
  const now = input.now ?? Date.now();
  const ttl = input.ttlSeconds ?? OVERRIDE_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_OVERRIDE_TTL_SECONDS) {
    throw new RangeError(`Override ttlSeconds must be an integer from 1 to ${MAX_OVERRIDE_TTL_SECONDS}.`);
  }
  const payload: OverridePayload = {
    v: TOKEN_VERSION,
    tool: input.tool,
    fp: input.argsFingerprint,
    kid: input.keyId,
    nonce: randomBytes(18).toString('base64url'),
    exp: Math.floor(now / 1000) + ttl,
  };
  const payloadPart = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const sig = sign(payloadPart, input.secret ?? env().MCP_OVERRIDE_SECRET).toString('base64url');
  return `${payloadPart}.${sig}`;
}

type OverrideFailureCode =
  | 'OVERRIDE_INVALID'
  | 'OVERRIDE_EXPIRED'
  | 'OVERRIDE_WRONG_TOOL'
  | 'OVERRIDE_WRONG_ARGS'
  | 'OVERRIDE_WRONG_KEY';

export type OverrideCheck =
  | { ok: true; payload: OverridePayload }
  | { ok: false; code: OverrideFailureCode; message: string };

const fail = (code: OverrideFailureCode, message: string): OverrideCheck => ({ ok: false, code, message });

/**
 * Verifies a token's signature (constant time), expiry and binding to this tool, these arguments
 * and this key. It does not consume it: the caller records the nonce once (see the MCP server).
 */
export function verifyOverride(
  token: unknown,
  expected: { tool: string; argsFingerprint: string; keyId: string; now?: number; secret?: string },
): OverrideCheck {
  if (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH) {
    return fail('OVERRIDE_INVALID', 'The approval token is missing or malformed.');
  }
  const parts = token.split('.');
  if (parts.length !== 2 || !/^[A-Za-z0-9_-]+$/.test(parts[0]!) || !/^[A-Za-z0-9_-]+$/.test(parts[1]!)) {
    return fail('OVERRIDE_INVALID', 'The approval token is malformed.');
  }
  const [payloadPart, sigPart] = parts as [string, string];
  const expectedSig = sign(payloadPart, expected.secret ?? env().MCP_OVERRIDE_SECRET);
  const actualSig = Buffer.from(sigPart, 'base64url');
  if (actualSig.length !== expectedSig.length || !timingSafeEqual(actualSig, expectedSig)) {
    return fail('OVERRIDE_INVALID', 'The approval token has an invalid signature.');
  }
  let payload: OverridePayload;
  try {
    const parsed = PayloadSchema.safeParse(JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8')));
    if (!parsed.success) return fail('OVERRIDE_INVALID', 'The approval token is malformed.');
    payload = parsed.data;
  } catch {
    return fail('OVERRIDE_INVALID', 'The approval token is malformed.');
  }
  const nowSeconds = Math.floor((expected.now ?? Date.now()) / 1000);
  if (payload.exp <= nowSeconds)
    return fail('OVERRIDE_EXPIRED', 'The approval token has expired. Ask for approval again.');
  // Signed, but valid for longer than any token is minted for: refuse (its nonce could outlive the
  // record of its use).
  if (payload.exp > nowSeconds + MAX_OVERRIDE_TTL_SECONDS)
    return fail('OVERRIDE_INVALID', 'The approval token is valid for too long.');
  if (payload.kid !== expected.keyId)
    return fail('OVERRIDE_WRONG_KEY', 'The approval token was issued for another key.');
  if (payload.tool !== expected.tool) {
    return fail('OVERRIDE_WRONG_TOOL', `The approval token is for ${payload.tool}, not ${expected.tool}.`);
  }
  if (!safeEqualText(payload.fp, expected.argsFingerprint)) {
    return fail('OVERRIDE_WRONG_ARGS', 'The arguments differ from the ones that were approved.');
  }
  return { ok: true, payload };
}

function safeEqualText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
