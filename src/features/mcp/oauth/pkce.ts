/**
 * PKCE (RFC 7636), S256 only: the authorization request carries the SHA-256 of a secret verifier
 * (`code_challenge`), the token request the verifier itself.
 */
import 'server-only';
import { createHash, timingSafeEqual } from 'node:crypto';

/** 43 to 128 unreserved characters (RFC 7636 §4.1). */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
/** base64url of 32 bytes, without padding. */
const S256_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

export function isCodeVerifier(value: string): boolean {
  return VERIFIER.test(value);
}

export function isS256Challenge(value: string): boolean {
  return S256_CHALLENGE.test(value);
}

export function s256(verifier: string): string {
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** Whether `verifier` is well formed and hashes to `challenge` (constant-time comparison). */
export function verifierMatches(verifier: string, challenge: string): boolean {
  if (!isCodeVerifier(verifier) || !isS256Challenge(challenge)) return false;
  return timingSafeEqual(Buffer.from(s256(verifier)), Buffer.from(challenge));
}
