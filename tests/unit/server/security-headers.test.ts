// The security headers (src/server/security-headers.ts) as src/proxy.ts applies them: a nonce-based
// CSP on pages, a lock-down CSP elsewhere, no framing, nosniff, a strict referrer policy, HSTS only
// over https (the request, the public URL, or a trusted proxy's X-Forwarded-Proto).
import { NextRequest } from 'next/server';
import { afterEach, describe, expect, it } from 'vitest';
import { proxy } from '@/proxy';
import { resetEnvCache } from '@/server/env';
import { isPagePath, pageContentSecurityPolicy, withSecurityHeaders } from '@/server/security-headers';

afterEach(() => {
  delete process.env.TRUST_PROXY;
  delete process.env.NEXTAUTH_URL;
  resetEnvCache();
});

const directive = (csp: string, name: string) => csp.split('; ').find((d) => d === name || d.startsWith(`${name} `));

describe('page policy', () => {
  it('runs only scripts carrying the nonce (and what they load), in production without eval', () => {
    const csp = pageContentSecurityPolicy('abc123', { dev: false, https: false });
    expect(directive(csp, 'script-src')).toBe("script-src 'self' 'nonce-abc123' 'strict-dynamic'");
    expect(directive(csp, 'frame-ancestors')).toBe("frame-ancestors 'none'");
    expect(directive(csp, 'object-src')).toBe("object-src 'none'");
    expect(directive(csp, 'connect-src')).toBe("connect-src 'self'");
    expect(directive(csp, 'upgrade-insecure-requests')).toBeUndefined();
    expect(pageContentSecurityPolicy('n', { dev: true, https: true })).toMatch(
      /'unsafe-eval'.*upgrade-insecure-requests$/,
    );
  });

  it('tells pages from API routes and files', () => {
    expect(['/', '/login', '/projects/p_1/issues/3', '/api/auth/signout'].every(isPagePath)).toBe(true);
    expect(
      ['/api/trpc/x', '/api/public/mcp', '/_next/static/chunks/a.js', '/icon.svg', '/robots.txt'].some(isPagePath),
    ).toBe(false);
  });
});

describe('proxy', () => {
  const run = (url: string, headers: Record<string, string> = {}) => proxy(new NextRequest(url, { headers }));

  it('gives a page a fresh nonce, on the response and on the request Next.js renders', () => {
    const a = run('http://127.0.0.1:3000/projects');
    const b = run('http://127.0.0.1:3000/projects');
    const nonceOf = (csp: string | null) => /'nonce-([^']+)'/.exec(csp ?? '')?.[1];
    const nonce = nonceOf(a.headers.get('content-security-policy'));
    expect(nonce).toMatch(/^[A-Za-z0-9+/]{22}==$/);
    expect(nonceOf(b.headers.get('content-security-policy'))).not.toBe(nonce);
    // Next.js reads the request's policy (forwarded as x-middleware-request-* headers).
    expect(a.headers.get('x-middleware-request-content-security-policy')).toBe(
      a.headers.get('content-security-policy'),
    );
    expect(a.headers.get('x-middleware-request-x-nonce')).toBe(nonce);
    expect(
      Object.fromEntries(
        [...a.headers].filter(([k]) => !k.startsWith('x-middleware') && k !== 'content-security-policy'),
      ),
    ).toEqual({
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'same-origin',
      'permissions-policy': expect.stringContaining('camera=()'),
      'cross-origin-opener-policy': 'same-origin',
    });
  });

  it('locks API responses down completely', () => {
    const res = run('http://127.0.0.1:3000/api/public/mcp');
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('x-middleware-request-x-nonce')).toBeNull();
  });

  it('refuses a path whose percent-escapes do not decode: 400 MALFORMED_PATH, with the headers', async () => {
    for (const path of ['/api/projects/%zz/in-app-agent', '/api/trpc/x%C0%80', '/api/projects/%/in-app-agent']) {
      const res = run(`http://127.0.0.1:3000${path}`);
      expect(res.status, path).toBe(400);
      expect(await res.json()).toEqual({
        error: { code: 'MALFORMED_PATH', message: expect.stringContaining('UTF-8') },
      });
      expect(res.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      // Answered here: Next.js does not route it on.
      expect(res.headers.get('x-middleware-next')).toBeNull();
    }
    // A page (a link with a broken escape, an address typed by hand) gets a line of text.
    const page = run('http://127.0.0.1:3000/projects/%ED%A0%80');
    expect(page.status).toBe(400);
    expect(page.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await page.text()).toContain('percent-escape');
    // Escapes that decode go on as before.
    expect(run('http://127.0.0.1:3000/projects/p%5F1').headers.get('x-middleware-next')).toBe('1');
  });

  it('sends HSTS over https only, trusting X-Forwarded-Proto only behind a trusted proxy', () => {
    expect(run('http://app.test/login').headers.get('strict-transport-security')).toBeNull();
    expect(run('https://app.test/login').headers.get('strict-transport-security')).toBe('max-age=31536000');
    expect(
      run('http://app.test/login', { 'x-forwarded-proto': 'https' }).headers.get('strict-transport-security'),
    ).toBeNull();
    process.env.TRUST_PROXY = '1';
    resetEnvCache();
    expect(
      run('http://app.test/login', { 'x-forwarded-proto': 'https' }).headers.get('strict-transport-security'),
    ).toBe('max-age=31536000');
  });
});

describe('routes the proxy does not run before (withSecurityHeaders)', () => {
  const post = (url: string, headers: Record<string, string> = {}) =>
    new Request(url, { method: 'POST', body: '{}', headers });

  it('get the proxy’s headers for a resource, keeping one the route set itself', async () => {
    const route = withSecurityHeaders(
      async () =>
        new Response('{}', { status: 201, headers: { 'content-security-policy': "default-src 'none'; sandbox" } }),
    );
    const res = await route(post('http://app.test/api/projects/p1/in-app-agent/attachments'));
    expect(res.status).toBe(201);
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox");
    expect([res.headers.get('x-frame-options'), res.headers.get('x-content-type-options')]).toEqual([
      'DENY',
      'nosniff',
    ]);
    expect(res.headers.get('strict-transport-security')).toBeNull();
    const plain = await withSecurityHeaders(async () => new Response('{}'))(post('http://app.test/api/x'));
    expect(plain.headers.get('content-security-policy')).toBe(
      "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    );
  });

  it('send HSTS as the proxy does, and reach an answer whose headers cannot change', async () => {
    process.env.TRUST_PROXY = '1';
    resetEnvCache();
    const redirect = withSecurityHeaders(async () => Response.redirect('http://app.test/login', 303));
    const res = await redirect(post('http://app.test/api/x', { 'x-forwarded-proto': 'https' }));
    expect([res.status, res.headers.get('location')]).toEqual([303, 'http://app.test/login']);
    expect(res.headers.get('strict-transport-security')).toBe('max-age=31536000');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});
