/**
 * Reads the session cookie's token (next-auth's encrypted JWT: `dir` + `A256GCM`, its key derived
 * from NEXTAUTH_SECRET by HKDF-SHA256 with next-auth's fixed info string). next-auth's own `decode`
 * derives that key again for every token, which was a millisecond of CPU on every request; here it
 * is derived once per secret and process. Tokens are the ones next-auth writes (sign-in is
 * unchanged); `tests/integration/auth/session-token.test.ts` checks both read them the same.
 */
import 'server-only';
import { hkdfSync } from 'node:crypto';
import { jwtDecrypt, type JWTPayload } from 'jose';
import { processWide } from './process-wide';

/** next-auth's HKDF info for the session token's key (no salt: the default cookie). */
const KEY_INFO = 'NextAuth.js Generated Encryption Key';
/** As next-auth: a token's times are checked with 15 s of tolerance. */
const CLOCK_TOLERANCE_SECONDS = 15;

const keys = processWide('session-token-keys', () => new Map<string, Uint8Array>());

function keyFor(secret: string): Uint8Array {
  let key = keys.get(secret);
  if (!key) {
    key = new Uint8Array(hkdfSync('sha256', secret, '', KEY_INFO, 32));
    // One secret in practice; a rotated secret replaces, never accumulates.
    keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** The token's claims; throws when it is not a valid, unexpired token of this secret. */
export async function decodeSessionToken(token: string, secret: string): Promise<JWTPayload> {
  const { payload } = await jwtDecrypt(token, keyFor(secret), { clockTolerance: CLOCK_TOLERANCE_SECONDS });
  return payload;
}
