// Password hashing (src/server/password.ts): scrypt at OWASP's cost, constant-time checks, refusal
// of wrong passwords and malformed hashes, old hashes still verify and are flagged for a re-hash.
import { randomBytes, scryptSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashPassword, needsRehash, SCRYPT_PARAMS, verifyPassword } from '@/server/password';

/** A hash in the stored format made independently of the module, with any parameters. */
function legacyHash(password: string, N: number, r = 8, p = 1, keylen = 32): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, keylen, { N, r, p, maxmem: 256 * 1024 * 1024 });
  return ['scrypt', N, r, p, salt.toString('base64'), key.toString('base64')].join('$');
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
}

describe('hashPassword / verifyPassword', () => {
  it('uses N=2^17, r=8, p=1 and a random salt', async () => {
    expect(SCRYPT_PARAMS).toEqual({ N: 131072, r: 8, p: 1 });
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).toMatch(/^scrypt\$131072\$8\$1\$[A-Za-z0-9+/]+=*\$[A-Za-z0-9+/]+=*$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain('correct horse');
  });

  it('round-trips and refuses a wrong password', async () => {
    const stored = await hashPassword('s3cret pass');
    expect(await verifyPassword('s3cret pass', stored)).toBe(true);
    expect(await verifyPassword('s3cret pasS', stored)).toBe(false);
    expect(await verifyPassword('', stored)).toBe(false);
    expect(await verifyPassword('s3cret pass ', stored)).toBe(false);
    expect(needsRehash(stored)).toBe(false);
  });

  it('returns false (never throws) for a missing or malformed hash', async () => {
    const good = await hashPassword('pw');
    const [, , , , salt, key] = good.split('$') as [string, string, string, string, string, string];
    const malformed = [
      '',
      'garbage',
      'scrypt$abc',
      `bcrypt$131072$8$1$${salt}$${key}`,
      `scrypt$131071$8$1$${salt}$${key}`, // N not a power of two
      `scrypt$1073741824$8$1$${salt}$${key}`, // 2^30: would need 128 GiB
      `scrypt$131072$8$64$${salt}$${key}`, // p too large
      `scrypt$131072$0$1$${salt}$${key}`,
      `scrypt$131072$8$1$$${key}`, // no salt
      `scrypt$131072$8$1$${salt}$`, // no key
      `scrypt$131072$8$1$${salt}$${key.slice(0, 8)}`, // truncated key
      `scrypt$131072$8$1$${salt}$${key}$extra`,
      `scrypt$131072$8$1$${salt}$not base64!`,
    ];
    for (const stored of malformed) {
      await expect(verifyPassword('pw', stored), stored).resolves.toBe(false);
      expect(needsRehash(stored), stored).toBe(true);
    }
    expect(await verifyPassword('pw', null)).toBe(false);
    expect(await verifyPassword('pw', undefined)).toBe(false);
  });

  it('still verifies hashes made with older parameters, and flags them for a re-hash', async () => {
    const old = legacyHash('old password', 2 ** 14);
    expect(await verifyPassword('old password', old)).toBe(true);
    expect(await verifyPassword('other password', old)).toBe(false);
    expect(needsRehash(old)).toBe(true);
    const oldR = legacyHash('pw', 2 ** 12, 4, 2, 64);
    expect(await verifyPassword('pw', oldR)).toBe(true);
    expect(needsRehash(oldR)).toBe(true);
  });

  it('costs about one scrypt evaluation at the current cost without a stored hash (unknown user)', async () => {
    const stored = await hashPassword('pw');
    await verifyPassword('warm-up', stored);
    const real: number[] = [];
    const missing: number[] = [];
    for (let i = 0; i < 3; i++) {
      real.push(await timed(() => verifyPassword('wrong', stored)));
      missing.push(await timed(() => verifyPassword('wrong', null)));
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
    const ratio = median(missing) / median(real);
    // Equal work; wide bounds absorb scheduling noise on a shared machine.
    expect(ratio).toBeGreaterThan(0.4);
    expect(ratio).toBeLessThan(2.5);
    // A cheap malformed hash does not short-cut either.
    const malformed = await timed(() => verifyPassword('wrong', 'garbage'));
    expect(malformed / median(real)).toBeGreaterThan(0.4);
  });
});
