// Sign-in abuse limits through next-auth's real credentials flow over HTTP (GET /api/auth/csrf,
// then POST /api/auth/callback/credentials as the login form does): lockout per account after N
// failures (even for the right password), unknown accounts answered identically, per-address
// limits only behind a trusted proxy, and the password-hash gate under a burst of 30 attempts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signInErrorMessage } from '@/lib/sign-in-errors';
import { resetEnvCache } from '@/server/env';
import { hashPassword, passwordHashGauge, resetPasswordHashPeak } from '@/server/password';
import { createUser } from '../../helpers/fixtures';
import { windowWithRoom } from '../../helpers/limits-window';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;

const LIMITS = {
  SIGNIN_ACCOUNT_MAX_FAILURES: '3',
  SIGNIN_ADDRESS_MAX_FAILURES: '4',
  SIGNIN_WINDOW_MINUTES: '15',
  PASSWORD_HASH_CONCURRENCY: '2',
  PASSWORD_HASH_QUEUE: '4',
};

function setEnv(values: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  resetEnvCache();
}

beforeAll(async () => {
  server = await startTestServer();
  setEnv({ ...LIMITS, NEXTAUTH_URL: server.url, TRUST_PROXY: undefined });
});
afterAll(async () => {
  await server?.close();
  setEnv({
    ...Object.fromEntries(Object.keys(LIMITS).map((k) => [k, undefined])),
    NEXTAUTH_URL: undefined,
    TRUST_PROXY: undefined,
  });
});
beforeEach(() => setEnv({ TRUST_PROXY: undefined }));

interface Outcome {
  status: number;
  /** next-auth's error code (`CredentialsSignin`, `SIGNIN_LOCKED:840`...), null on success. */
  error: string | null;
  retryAfter: string | null;
  signedIn: boolean;
}

let seq = 0;
const uniqueEmail = (name: string) => `${name}.${++seq}.${Date.now()}@nowhere.test`;

/** The login form's request sequence: a CSRF token, then the credentials callback with json=true. */
async function signIn(email: string, password: string, headers: Record<string, string> = {}): Promise<Outcome> {
  const csrf = await fetch(`${server.url}/api/auth/csrf`, { headers });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const cookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const res = await fetch(`${server.url}/api/auth/callback/credentials`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie, ...headers },
    body: new URLSearchParams({ csrfToken, email, password, json: 'true', callbackUrl: `${server.url}/projects` }),
  });
  const { url } = (await res.json()) as { url: string };
  return {
    status: res.status,
    error: new URL(url).searchParams.get('error'),
    retryAfter: res.headers.get('retry-after'),
    signedIn: res.headers.getSetCookie().some((c) => c.startsWith('next-auth.session-token=')),
  };
}

/** Status and error code without the retry delay (which depends on the moment in the window). */
const shape = (o: Outcome) => [o.status, o.error?.split(':')[0] ?? null];

describe('per-account lockout', () => {
  it('locks an account after 3 failures, also for the right password, with a clear message', async () => {
    const user = await createUser('Locked', { passwordHash: await hashPassword('right password') });
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 3; i++) outcomes.push(await signIn(user.email, `wrong ${i}`));
    const started = passwordHashGauge().started;
    const locked = await signIn(user.email, 'right password');

    expect(outcomes.map(shape)).toEqual([
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
    ]);
    expect(shape(locked)).toEqual([429, 'SIGNIN_LOCKED']);
    expect(locked.signedIn).toBe(false);
    // Refused before the password check: no hash ran for it.
    expect(passwordHashGauge().started).toBe(started);
    const seconds = Number(locked.retryAfter);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(30 * 60);
    expect(locked.error).toBe(`SIGNIN_LOCKED:${seconds}`);
    // What the login form shows: the wait in minutes, nothing about the account.
    const minutes = Math.ceil(seconds / 60);
    expect(signInErrorMessage(locked.error)).toBe(
      `Too many sign-in attempts. Try again ${minutes <= 1 ? 'in a minute' : `in ${minutes} minutes`}.`,
    );
    expect(signInErrorMessage(outcomes[0]!.error)).toBe('Invalid email or password.');
  });

  it('answers an unknown email exactly like an existing account, step by step', async () => {
    const user = await createUser('Real', { passwordHash: await hashPassword('pw of real') });
    // The limits count per fixed window and estimate a sliding one (src/server/limits.ts): attempts
    // that cross a window's edge see the earlier ones fade, so the two accounts' waits would differ
    // by when each attempt fell, not by whether the account exists. Start with a minute to spare.
    await windowWithRoom(Number(LIMITS.SIGNIN_WINDOW_MINUTES) * 60, 60_000);
    const unknown = uniqueEmail('ghost');
    const real: Outcome[] = [];
    const ghost: Outcome[] = [];
    for (let i = 0; i < 5; i++) {
      real.push(await signIn(user.email, `nope ${i}`));
      ghost.push(await signIn(unknown, `nope ${i}`));
    }
    expect(real.map(shape)).toEqual(ghost.map(shape));
    expect(ghost.map(shape)).toEqual([
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
      [429, 'SIGNIN_LOCKED'],
      [429, 'SIGNIN_LOCKED'],
    ]);
    expect(signInErrorMessage(ghost[3]!.error)).toBe(signInErrorMessage(real[3]!.error));
  }, 120_000);

  it('a successful sign-in clears the failures; the email is matched case-insensitively', async () => {
    const user = await createUser('Forgetful', { passwordHash: await hashPassword('finally') });
    await signIn(user.email, 'one');
    await signIn(user.email.toUpperCase(), 'two');
    const ok = await signIn(user.email, 'finally');
    expect([ok.status, ok.error, ok.signedIn]).toEqual([200, null, true]);
    const after = [
      await signIn(user.email, 'three'),
      await signIn(user.email, 'four'),
      await signIn(user.email, 'five'),
    ];
    expect(after.map(shape)).toEqual([
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
    ]);
  });
});

describe('a burst of 30 parallel attempts', () => {
  it('on one account: only 3 reach the password check, the rest are refused as locked', async () => {
    const user = await createUser('Burst', { passwordHash: await hashPassword('secret') });
    resetPasswordHashPeak();
    const before = passwordHashGauge().started;
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => signIn(user.email, `guess ${i}`)));
    const codes = outcomes.map((o) => o.error?.split(':')[0]);
    expect(codes.filter((c) => c === 'CredentialsSignin')).toHaveLength(3);
    expect(codes.filter((c) => c === 'SIGNIN_LOCKED')).toHaveLength(27);
    expect(passwordHashGauge().started - before).toBe(3);
    expect(passwordHashGauge().peakActive).toBeLessThanOrEqual(2);
  });

  it('on 30 accounts: at most 2 hashes run at once, a bounded queue waits, the rest are told to retry', async () => {
    resetPasswordHashPeak();
    const refusedBefore = passwordHashGauge().refused;
    const outcomes = await Promise.all(
      Array.from({ length: 30 }, (_, i) => signIn(uniqueEmail(`spray${i}`), 'password123')),
    );
    expect(passwordHashGauge().peakActive).toBeLessThanOrEqual(2);
    expect(passwordHashGauge()).toMatchObject({ active: 0, waiting: 0 });
    const busy = outcomes.filter((o) => o.error?.startsWith('SIGNIN_BUSY'));
    const checked = outcomes.filter((o) => o.error === 'CredentialsSignin');
    expect(busy.length + checked.length).toBe(30);
    expect(busy.length).toBeGreaterThan(0);
    expect(passwordHashGauge().refused - refusedBefore).toBe(busy.length);
    for (const b of busy) expect([b.status, b.retryAfter]).toEqual([503, '5']);
    expect(signInErrorMessage(busy[0]!.error)).toBe('The server is busy. Try again in a few seconds.');
  });
});

describe('per-address limit', () => {
  const spray = async (n: number, headers: Record<string, string>) => {
    const out: Outcome[] = [];
    for (let i = 0; i < n; i++) out.push(await signIn(uniqueEmail('victim'), 'Winter2026!', headers));
    return out.map(shape);
  };

  it('behind a trusted proxy, counts failures per client address across accounts', async () => {
    setEnv({ TRUST_PROXY: '1' });
    // The client prepended a fake address; the proxy appended the real one, which is what counts.
    const attacker = { 'x-forwarded-for': '198.51.100.1, 203.0.113.7' };
    expect(await spray(5, attacker)).toEqual([
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
      [401, 'CredentialsSignin'],
      [429, 'SIGNIN_LOCKED'],
    ]);
    // Another address is not affected, nor is the attacker's prepended one.
    expect(await spray(1, { 'x-forwarded-for': '203.0.113.8' })).toEqual([[401, 'CredentialsSignin']]);
    expect(await spray(1, { 'x-forwarded-for': '198.51.100.1' })).toEqual([[401, 'CredentialsSignin']]);
    // IPv6 addresses count per /64.
    expect(await spray(4, { 'x-forwarded-for': '2001:db8:1:2::1' })).toHaveLength(4);
    expect(await spray(1, { 'x-forwarded-for': '2001:db8:1:2:ffff::9' })).toEqual([[429, 'SIGNIN_LOCKED']]);
  });

  it('without TRUST_PROXY the forwarding headers are ignored (per-account limits only)', async () => {
    const headers = { 'x-forwarded-for': '192.0.2.50', 'x-real-ip': '192.0.2.50' };
    expect(await spray(6, headers)).toEqual(Array.from({ length: 6 }, () => [401, 'CredentialsSignin']));
  });
});
