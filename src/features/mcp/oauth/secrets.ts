/**
 * Opaque secrets of the authorization server: access and refresh tokens, authorization codes and
 * client secrets are 256 random bits behind a prefix that says what they are; only their SHA-256
 * is stored (enough for values this random), so a database leak hands out nothing usable.
 */
import 'server-only';
import { createHash, randomBytes } from 'node:crypto';

export const SECRET_PREFIX = {
  accessToken: 'mcp_at_',
  refreshToken: 'mcp_rt_',
  code: 'mcp_ac_',
  clientSecret: 'mcp_cs_',
} as const;
type SecretKind = keyof typeof SECRET_PREFIX;

/** 32 random bytes, base64url: 43 characters. */
const BODY = '[A-Za-z0-9_-]{43}';
const PATTERNS: Record<SecretKind, RegExp> = {
  accessToken: new RegExp(`^${SECRET_PREFIX.accessToken}${BODY}$`),
  refreshToken: new RegExp(`^${SECRET_PREFIX.refreshToken}${BODY}$`),
  code: new RegExp(`^${SECRET_PREFIX.code}${BODY}$`),
  clientSecret: new RegExp(`^${SECRET_PREFIX.clientSecret}${BODY}$`),
};

export function newSecret(kind: SecretKind): string {
  return `${SECRET_PREFIX[kind]}${randomBytes(32).toString('base64url')}`;
}

/** Whether `value` has the exact shape of a minted secret of this kind (checked before any query). */
export function isSecretOf(kind: SecretKind, value: string): boolean {
  return PATTERNS[kind].test(value);
}

export function hashSecret(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
