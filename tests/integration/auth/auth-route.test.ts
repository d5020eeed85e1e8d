// The next-auth endpoints over real HTTP answer malformed requests with a 4xx, never a 500
// (each case was a 500 before, found by `npm run fuzz`): a callback URL that is no URL (query,
// cookie or body), the credentials callback without POST, and bodies that cannot be read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetEnvCache } from '@/server/env';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  process.env.NEXTAUTH_URL = server.url;
  resetEnvCache();
});
afterAll(async () => {
  delete process.env.NEXTAUTH_URL;
  resetEnvCache();
  await server?.close();
});

describe('/api/auth with malformed input', () => {
  it('drops a callback URL that is no http(s) URL (query or cookie) instead of failing', async () => {
    for (const [path, cookie] of [
      ['/api/auth/providers?callbackUrl=%00', ''],
      ['/api/auth/session?callbackUrl=javascript:alert(1)', ''],
      ['/api/auth/csrf', 'next-auth.callback-url=%E0%A4%A'],
      ['/api/auth/csrf', 'next-auth.callback-url=not%20a%20url'],
    ] as const) {
      const res = await fetch(`${server.url}${path}`, { headers: cookie ? { cookie } : {} });
      expect([path, cookie, res.status]).toEqual([path, cookie, 200]);
    }
  });

  it('refuses the credentials callback without POST (405), and unreadable bodies (400)', async () => {
    expect((await fetch(`${server.url}/api/auth/callback/credentials`)).status).toBe(405);
    const json = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"email": ',
    });
    expect(json.status).toBe(400);
    const huge = await fetch(`${server.url}/api/auth/callback/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `email=${'x'.repeat(100_000)}`,
    });
    expect(huge.status).toBe(400);
  });

  it('a callback URL in the credentials form that is no URL leads home, not to an error', async () => {
    const csrf = await fetch(`${server.url}/api/auth/csrf`);
    const { csrfToken } = (await csrf.json()) as { csrfToken: string };
    const cookie = csrf.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const res = await fetch(`${server.url}/api/auth/signin/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrfToken, callbackUrl: '\u0000::not a url', json: 'true' }),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { url: string }).url.startsWith(server.url)).toBe(true);
  });
});
