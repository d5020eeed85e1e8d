// OAuth sign-in rules (src/server/auth.ts): providers exist only when both variables of their pair
// are set; an identity is linked to an account, or creates one, only with a provider-verified email.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { decideOAuthSignIn, isOAuthEmailVerified, oauthProviders } from '@/server/auth';
import { parseEnv } from '@/server/env';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('OAuth providers', () => {
  const ids = (source: Record<string, string>) => oauthProviders(parseEnv(source)).map((p) => p.id);

  it('are enabled only when both variables of a pair are set', () => {
    expect(ids({})).toEqual([]);
    expect(ids({ GITHUB_ID: 'id', GITHUB_SECRET: 'secret' })).toEqual(['github']);
    expect(ids({ GOOGLE_CLIENT_ID: 'id', GOOGLE_CLIENT_SECRET: 'secret' })).toEqual(['google']);
    expect(ids({ GITHUB_ID: 'a', GITHUB_SECRET: 'b', GOOGLE_CLIENT_ID: 'c', GOOGLE_CLIENT_SECRET: 'd' })).toEqual([
      'github',
      'google',
    ]);
    // Blank counts as unset.
    expect(ids({ GITHUB_ID: ' ', GITHUB_SECRET: '' })).toEqual([]);
  });

  it('a half-configured pair is refused at start-up, naming the missing variable', () => {
    expect(() => ids({ GITHUB_ID: 'id' })).toThrow(/GITHUB_SECRET: is required when GITHUB_ID is set/);
    expect(() => ids({ GOOGLE_CLIENT_SECRET: 'secret' })).toThrow(
      /GOOGLE_CLIENT_ID: is required when GOOGLE_CLIENT_SECRET is set/,
    );
  });

  it('the login page lists exactly the configured providers', async () => {
    vi.stubEnv('GITHUB_ID', 'gh-id');
    vi.stubEnv('GITHUB_SECRET', 'gh-secret');
    vi.stubEnv('GOOGLE_CLIENT_ID', '');
    vi.stubEnv('GOOGLE_CLIENT_SECRET', '');
    vi.resetModules();
    const { enabledOAuthProviders } = await import('@/server/auth');
    expect(enabledOAuthProviders()).toEqual([{ id: 'github', name: 'GitHub' }]);
  });
});

describe('decideOAuthSignIn', () => {
  const base = { linkedUserId: null, email: 'ann@example.com', emailVerified: true, existingUser: null };

  it('an identity linked before signs in as its user, whatever the email says now', () => {
    expect(decideOAuthSignIn({ ...base, linkedUserId: 'u_1', emailVerified: false })).toEqual({
      kind: 'signIn',
      userId: 'u_1',
    });
    expect(decideOAuthSignIn({ ...base, linkedUserId: 'u_1', email: null })).toEqual({ kind: 'signIn', userId: 'u_1' });
  });

  it('links to the account with that email only when the provider verified it', () => {
    expect(decideOAuthSignIn({ ...base, existingUser: { id: 'u_2' } })).toEqual({ kind: 'link', userId: 'u_2' });
    expect(decideOAuthSignIn({ ...base, existingUser: { id: 'u_2' }, emailVerified: false })).toEqual({
      kind: 'refuse',
      reason: 'EMAIL_NOT_VERIFIED',
    });
  });

  it('creates an account only for a verified email', () => {
    expect(decideOAuthSignIn(base)).toEqual({ kind: 'create' });
    expect(decideOAuthSignIn({ ...base, emailVerified: false })).toEqual({
      kind: 'refuse',
      reason: 'EMAIL_NOT_VERIFIED',
    });
    expect(decideOAuthSignIn({ ...base, email: null })).toEqual({ kind: 'refuse', reason: 'NO_EMAIL' });
  });
});

describe('isOAuthEmailVerified', () => {
  it('Google: the email_verified claim for that very email', async () => {
    const check = (profile: unknown) => isOAuthEmailVerified({ provider: 'google', email: 'Ann@Example.com', profile });
    expect(await check({ email: 'ann@example.com', email_verified: true })).toBe(true);
    expect(await check({ email: 'ann@example.com', email_verified: false })).toBe(false);
    expect(await check({ email: 'ann@example.com', email_verified: 'true' })).toBe(false);
    expect(await check({ email: 'ann@example.com' })).toBe(false);
    expect(await check({ email: 'other@example.com', email_verified: true })).toBe(false);
    expect(await check(undefined)).toBe(false);
  });

  /** GitHub's `GET /user/emails` as the API answers it, for the token `gho_test`. */
  function github(
    emails: unknown,
    status = 200,
  ): { fetch: typeof fetch; calls: Array<{ url: string; auth: string | null }> } {
    const calls: Array<{ url: string; auth: string | null }> = [];
    const fake = async (input: string | URL | Request, init?: RequestInit) => {
      const auth = new Headers(init?.headers).get('authorization');
      calls.push({ url: String(input), auth });
      if (auth !== 'Bearer gho_test')
        return new Response(JSON.stringify({ message: 'Bad credentials' }), { status: 401 });
      return new Response(JSON.stringify(emails), { status, headers: { 'content-type': 'application/json' } });
    };
    return { fetch: fake as typeof fetch, calls };
  }

  it('GitHub: the verified flag of that address in /user/emails', async () => {
    const list = [
      { email: 'ann@example.com', verified: true, primary: true, visibility: 'public' },
      { email: 'ann@old.example', verified: false, primary: false, visibility: null },
    ];
    const gh = github(list);
    const check = (email: string, accessToken: string | null = 'gho_test') =>
      isOAuthEmailVerified({ provider: 'github', email, accessToken }, gh.fetch);
    expect(await check('ANN@example.com')).toBe(true);
    expect(await check('ann@old.example')).toBe(false);
    expect(await check('someone@else.example')).toBe(false);
    expect(gh.calls[0]).toEqual({ url: 'https://api.github.com/user/emails', auth: 'Bearer gho_test' });
    // No token, a refused token, an error answer or an unexpected body: not verified.
    expect(await check('ann@example.com', null)).toBe(false);
    expect(await check('ann@example.com', 'gho_wrong')).toBe(false);
    expect(
      await isOAuthEmailVerified(
        { provider: 'github', email: 'ann@example.com', accessToken: 'gho_test' },
        github(list, 500).fetch,
      ),
    ).toBe(false);
    expect(
      await isOAuthEmailVerified(
        { provider: 'github', email: 'ann@example.com', accessToken: 'gho_test' },
        github({ nope: 1 }).fetch,
      ),
    ).toBe(false);
    const failing = (async () => {
      throw new TypeError('fetch failed');
    }) as typeof fetch;
    expect(
      await isOAuthEmailVerified({ provider: 'github', email: 'ann@example.com', accessToken: 'gho_test' }, failing),
    ).toBe(false);
  });

  it('an unknown provider never vouches', async () => {
    expect(
      await isOAuthEmailVerified({ provider: 'gitlab', email: 'ann@example.com', profile: { email_verified: true } }),
    ).toBe(false);
  });
});
