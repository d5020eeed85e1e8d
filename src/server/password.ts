import 'server-only';
import { randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { env } from './env';
import { processWide } from '@/server/process-wide';

/**
 * Password hashing with scrypt (memory-hard, ships with Node: no native dependency, no install
 * script), at OWASP's recommended cost: N=2^17, r=8, p=1 (128 MiB per evaluation).
 *
 * Every evaluation goes through a per-process gate (see `withHashSlot`): a burst of sign-ins waits
 * in a bounded queue or is told to retry (PasswordHashBusyError), never runs all at once.
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
const LIMITS = {
  minLogN: 10,
  maxLogN: 20,
  maxR: 32,
  maxP: 16,
  maxWork: 256 * 1024 * 1024,
  minKey: 16,
  maxKey: 64,
} as const;

/** Thrown instead of queueing when every hash slot is taken and the queue is full: retry later. */
export class PasswordHashBusyError extends Error {
  constructor() {
    super('Too many password checks are running; try again shortly.');
    this.name = 'PasswordHashBusyError';
  }
}

/**
 * The process-wide gate in front of scrypt: at most PASSWORD_HASH_CONCURRENCY evaluations at once
 * (each takes 128 MiB and a thread-pool thread for ~0.2 s), at most PASSWORD_HASH_QUEUE waiting;
 * beyond that a caller gets PasswordHashBusyError at once instead of queueing without end, so a
 * burst of sign-ins cannot starve the server of memory and threads. Kept on globalThis: Next.js
 * can load this module twice, and there must be one gate per process.
 */
interface HashGate {
  active: number;
  /** Highest `active` seen since the last reset: the gauge tests and operators read. */
  peakActive: number;
  /** Callers refused as busy since the process started. */
  refused: number;
  /** Evaluations started since the process started. */
  started: number;
  /** Callers waiting; each is handed a slot by the caller that releases one. */
  waiting: Array<() => void>;
}
const gate: HashGate = processWide<HashGate>('__passwordHashGate', () => ({
  active: 0,
  peakActive: 0,
  refused: 0,
  started: 0,
  waiting: [],
}));

export interface PasswordHashGauge {
  active: number;
  peakActive: number;
  waiting: number;
  refused: number;
  started: number;
}

/** A snapshot of the hash gate: running, highest running since reset, waiting, refused, started. */
export function passwordHashGauge(): PasswordHashGauge {
  const { active, peakActive, refused, started } = gate;
  return { active, peakActive, waiting: gate.waiting.length, refused, started };
}

/** Starts a new measurement of `peakActive` (tests, diagnostics). */
export function resetPasswordHashPeak(): void {
  gate.peakActive = gate.active;
}

async function withHashSlot<T>(fn: () => Promise<T>): Promise<T> {
  const { PASSWORD_HASH_CONCURRENCY: concurrency, PASSWORD_HASH_QUEUE: queue } = env();
  if (gate.active >= concurrency) {
    if (gate.waiting.length >= queue) {
      gate.refused += 1;
      throw new PasswordHashBusyError();
    }
    // The releasing caller passes its slot on: `active` stays counted across the hand-over.
    await new Promise<void>((resolve) => gate.waiting.push(resolve));
  } else {
    gate.active += 1;
  }
  gate.peakActive = Math.max(gate.peakActive, gate.active);
  gate.started += 1;
  try {
    return await fn();
  } finally {
    const next = gate.waiting.shift();
    if (next) next();
    else gate.active -= 1;
  }
}

function scrypt(password: string, salt: Buffer, keylen: number, { N, r, p }: Params): Promise<Buffer> {
  // scrypt needs 128 * N * r * p bytes; leave headroom so the limit never refuses a valid cost.
  const maxmem = 128 * N * r * p + 32 * 1024 * 1024;
  return withHashSlot(
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scryptCb(password, salt, keylen, { N, r, p, maxmem }, (err, key) => (err ? reject(err) : resolve(key))),
      ),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await scrypt(password, salt, KEYLEN, SCRYPT_PARAMS);
  return [
    'scrypt',
    SCRYPT_PARAMS.N,
    SCRYPT_PARAMS.r,
    SCRYPT_PARAMS.p,
    salt.toString('base64'),
    key.toString('base64'),
  ].join('$');
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
  if (params.r > LIMITS.maxR || params.p > LIMITS.maxP || 128 * params.N * params.r * params.p > LIMITS.maxWork)
    return null;
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
