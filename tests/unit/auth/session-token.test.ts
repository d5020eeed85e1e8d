// The session cookie's token is read by the product's own decoder (its key derived once per secret):
// it must accept exactly what next-auth writes and next-auth's own decoder accepts, and refuse the
// rest (another secret, expired, altered, not a token).
import { decode, encode } from 'next-auth/jwt';
import { describe, expect, it } from 'vitest';
import { decodeSessionToken } from '@/server/session-token';

const SECRET = 'a-session-secret-of-enough-length-0123456789';
const OTHER = 'another-session-secret-of-enough-length-987654';

describe('session token', () => {
  it('reads the claims of a token next-auth wrote, as next-auth reads them', async () => {
    const token = await encode({ token: { uid: 'u_01abc', name: 'Ada' }, secret: SECRET });
    const ours = await decodeSessionToken(token, SECRET);
    const theirs = await decode({ token, secret: SECRET });
    expect(ours).toMatchObject({ uid: 'u_01abc', name: 'Ada' });
    expect(ours).toEqual(theirs);
  });

  it('refuses a token of another secret, also after the secret changed', async () => {
    const token = await encode({ token: { uid: 'u_1' }, secret: SECRET });
    await expect(decodeSessionToken(token, OTHER)).rejects.toThrow();
    // The key of the new secret replaced the old one: a token of the new secret reads, the old one not.
    const fresh = await encode({ token: { uid: 'u_2' }, secret: OTHER });
    expect((await decodeSessionToken(fresh, OTHER)).uid).toBe('u_2');
    expect((await decodeSessionToken(token, SECRET)).uid).toBe('u_1');
    await expect(decodeSessionToken(fresh, SECRET)).rejects.toThrow();
  });

  it('refuses an expired token (beyond next-auth’s 15 s tolerance) and accepts one within it', async () => {
    const expired = await encode({ token: { uid: 'u_1' }, secret: SECRET, maxAge: -60 });
    await expect(decodeSessionToken(expired, SECRET)).rejects.toThrow();
    await expect(decode({ token: expired, secret: SECRET })).rejects.toThrow();
    const justExpired = await encode({ token: { uid: 'u_1' }, secret: SECRET, maxAge: -5 });
    expect((await decodeSessionToken(justExpired, SECRET)).uid).toBe('u_1');
  });

  it('refuses an altered token and anything that is not a token', async () => {
    const token = await encode({ token: { uid: 'u_1' }, secret: SECRET });
    const parts = token.split('.');
    const cipher = parts[3]!;
    parts[3] = (cipher[0] === 'A' ? 'B' : 'A') + cipher.slice(1);
    await expect(decodeSessionToken(parts.join('.'), SECRET)).rejects.toThrow();
    for (const bad of ['', 'x', 'a.b.c', 'a.b.c.d.e', `${token}x`])
      await expect(decodeSessionToken(bad, SECRET)).rejects.toThrow();
  });
});
