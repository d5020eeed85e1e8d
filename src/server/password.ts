import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';

/**
 * Password hashing with scrypt (memory-hard, ships with Node: no native dependency, no install
 * script), at OWASP's recommended cost: N=2^17, r=8, p=1 (128 MiB per evaluation).
 *
 * Stored format: `scrypt$N$r$p$saltB64$hashB64`. Hashes made with other (older) parameters still
 * verify; `needsRehash` tells the sign-in to store a fresh hash with the current parameters.
 */
export const SCRYPT_PARAMS = { N: 2 ** 17, r: 8, p: 1 } as const;
const KEYLEN = 32;
const SALT_BYTES = 16;

interface Params {
  N: number;
  r: number;
  p: number;
}

/** Bounds a stored hash may use: anything outside is malformed (and never costs unbounded work). */
const LIMITS = { minLogN: 10, maxLogN: 20, maxR: 32, maxP: 16, maxWork: 256 * 1024 * 1024, minKey: 16, maxKey: 64 } as const;

function scrypt(password: string, salt: Buffer, keylen: number, { N, r, p }: Params): Promise<Buffer> {
  // scrypt needs 128 * N * r * p bytes; leave headroom so the limit never refuses a valid cost.
  const maxmem = 128 * N * r * p + 32 * 1024 * 1024;
  return new Promise((resolve, reject) =>
    scryptCb(password, salt, keylen, { N, r, p, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, KEYLEN, SCRYPT_PARAMS);
  return ['scrypt', SCRYPT_PARAMS.N, SCRYPT_PARAMS.r, SCRYPT_PARAMS.p, salt.toString('base64'), key.toString('base64')].join('$');
}

interface Parsed extends Params {
  salt: Buffer;
  key: Buffer;
}

const B64 = /^[A-Za-z0-9+/]+={0,2}$/;

function parseHash(stored: string): Parsed | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return null;
  const [, n, r, p, saltB64, keyB64] = parts as [string, string, string, string, string, string];
  if (![n, r, p].every((x) => /^[1-9]\d{0,8}$/.test(x))) return null;
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  const logN = Math.log2(params.N);
  if (!Number.isInteger(logN) || logN < LIMITS.minLogN || logN > LIMITS.maxLogN) return null;
  if (params.r > LIMITS.maxR || params.p > LIMITS.maxP || 128 * params.N * params.r * params.p > LIMITS.maxWork) return null;
  if (!B64.test(saltB64) || !B64.test(keyB64)) return null;
  const salt = Buffer.from(saltB64, 'base64');
  const key = Buffer.from(keyB64, 'base64');
  if (salt.length < 8 || key.length < LIMITS.minKey || key.length > LIMITS.maxKey) return null;
  return { ...params, salt, key };
}

/** One evaluation at the current cost, for callers with nothing to compare against. */
async function burn(password: string): Promise<void> {
  await scrypt(password, randomBytes(SALT_BYTES), KEYLEN, SCRYPT_PARAMS);
}

/**
 * Checks `password` against a stored hash in constant time. Without a stored hash (unknown user,
 * account without a password) or with a malformed one, it still runs one scrypt evaluation at the
 * current cost and returns false, so the time taken does not reveal which case it was.
 */
export async function verifyPassword(password: string, stored: string | null | undefined): Promise<boolean> {
  const parsed = stored ? parseHash(stored) : null;
  if (!parsed) {
    await burn(password);
    return false;
  }
  const key = await scrypt(password, parsed.salt, parsed.key.length, parsed);
  return timingSafeEqual(key, parsed.key);
}

/** True when a stored hash was made with other parameters than the current ones (or is malformed). */
export function needsRehash(stored: string): boolean {
  const parsed = parseHash(stored);
  return (
    !parsed ||
    parsed.N !== SCRYPT_PARAMS.N ||
    parsed.r !== SCRYPT_PARAMS.r ||
    parsed.p !== SCRYPT_PARAMS.p ||
    parsed.key.length !== KEYLEN ||
    parsed.salt.length !== SALT_BYTES
  );
}
