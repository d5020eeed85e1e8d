// Security headers in a real browser against `next start`: every page, API route and file carries
// them; a page of another origin cannot frame the app (the frame stays empty, while the same page
// frames a harmless page of its own origin fine); the whole app — sign-in, pages, the assistant
// streaming an answer — runs under the nonce-based CSP with NO violation; a malformed session
// cookie on a page means "signed out"; an address with a broken percent-escape is a 400, not a 500;
// and the login form states the sign-in limit clearly.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, newPage, openBrowser, shot, type Browser } from './browser';

let browser: Browser;
let other: { url: string; close(): Promise<void> };
let projectId = '';

/** A site of another origin (another port) that tries to frame the app, and frames itself. */
async function startOtherOrigin(): Promise<typeof other> {
  const server = http.createServer((req, res) => {
    res.setHeader('content-type', 'text/html; charset=utf-8');
    if (req.url === '/harmless') return res.end('<!doctype html><p id="own">own content</p>');
    const target = decodeURIComponent((req.url ?? '/').replace(/^\/frame\?/, ''));
    res.end(`<!doctype html><title>Win a prize</title>
      <iframe id="victim" src="${target}" width="900" height="600"></iframe>
      <iframe id="own" src="/harmless" width="300" height="100"></iframe>`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function findProjectId(page: Page): Promise<string> {
  await page.goto(`${BASE_URL}/projects`);
  const href = await page.$eval('a[href^="/projects/"]', (a) => a.getAttribute('href') ?? '');
  return decodeURIComponent(href.split(/[/?#]/)[2]!);
}

/** Collects CSP violations of every document the page loads: DOM events and console reports. */
async function watchCsp(page: Page): Promise<string[]> {
  const violations: string[] = [];
  await page.exposeFunction('__reportCspViolation', (v: string) => violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      (window as unknown as { __reportCspViolation(v: string): void }).__reportCspViolation(
        `${e.violatedDirective} blocked ${e.blockedURI || '(inline)'} in ${e.documentURI}`,
      );
    });
  });
  page.on('console', (m) => {
    if (/Content Security Policy|Refused to (load|execute|apply|connect|evaluate|frame|create)/i.test(m.text()))
      violations.push(m.text());
  });
  return violations;
}

beforeAll(async () => {
  browser = await openBrowser();
  other = await startOtherOrigin();
  const page = await newPage(browser);
  await login(page, 'owner@example.com');
  projectId = await findProjectId(page);
  await page.context().close();
});
afterAll(async () => {
  await browser?.close();
  await other?.close();
});

describe('security headers', () => {
  it('are on every page, API response and file', async () => {
    const login = await fetch(`${BASE_URL}/login`);
    const html = await login.text();
    const chunk = /<script[^>]+src="(\/_next\/static\/[^"]+\.js)"/.exec(html)?.[1];
    expect(chunk).toBeDefined();
    const urls = [
      '/login',
      '/projects',
      '/api/trpc/tracker.projects.list',
      '/api/public/mcp',
      '/api/auth/csrf',
      '/icon.svg',
      chunk!,
    ];
    for (const path of urls) {
      const res = await fetch(`${BASE_URL}${path}`, { redirect: 'manual' });
      await res.arrayBuffer();
      const h = (name: string) => res.headers.get(name);
      expect([path, h('x-frame-options'), h('x-content-type-options'), h('referrer-policy')]).toEqual([
        path,
        'DENY',
        'nosniff',
        'same-origin',
      ]);
      expect(h('content-security-policy'), path).toContain("frame-ancestors 'none'");
      // Served over plain http here: no HSTS (it would be ignored anyway).
      expect(h('strict-transport-security'), path).toBeNull();
    }
    // The run's start and the uploads add them themselves (the proxy does not run before them):
    // also on a refusal.
    for (const path of [
      '/api/projects/p_none/in-app-agent',
      '/api/projects/p_none/in-app-agent/attachments?name=a.txt',
    ]) {
      const res = await fetch(`${BASE_URL}${path}`, {
        method: 'POST',
        headers: { origin: BASE_URL, 'content-type': 'application/json' },
        body: '{}',
      });
      await res.arrayBuffer();
      const h = (name: string) => res.headers.get(name);
      expect([path, res.status, h('x-frame-options'), h('x-content-type-options'), h('referrer-policy')]).toEqual([
        path,
        401,
        'DENY',
        'nosniff',
        'same-origin',
      ]);
      expect(h('content-security-policy'), path).toMatch(/^default-src 'none'.*frame-ancestors 'none'/);
      expect(h('strict-transport-security'), path).toBeNull();
    }
    // The page's policy runs only nonce-carrying scripts, and every script on the page has the nonce.
    const csp = login.headers.get('content-security-policy')!;
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(csp).toMatch(/script-src 'self' 'nonce-[^']+' 'strict-dynamic'(;|$)/);
    expect(csp).not.toContain('unsafe-eval');
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
    // A second request gets another nonce.
    expect((await fetch(`${BASE_URL}/login`)).headers.get('content-security-policy')).not.toBe(csp);
    // API responses may not run or load anything.
    expect((await fetch(`${BASE_URL}/api/public/mcp`)).headers.get('content-security-policy')).toMatch(
      /^default-src 'none'/,
    );
  });

  it('a page of another origin cannot frame the project page: the frame stays empty', async () => {
    const page = await newPage(browser);
    await login(page, 'owner@example.com');
    const refusals: string[] = [];
    page.on('console', (m) => {
      if (/frame-ancestors|X-Frame-Options|Refused to (display|frame)/i.test(m.text())) refusals.push(m.text());
    });
    await page.goto(`${other.url}/frame?${encodeURIComponent(`${BASE_URL}/projects/${projectId}`)}`);
    // The harmless same-origin frame renders: framing itself works, and this check can see it.
    const own = page.frameLocator('#own').locator('#own');
    await own.waitFor({ timeout: 15_000 });
    expect(await own.textContent()).toBe('own content');
    // The app's frame: Chrome blocks it and shows nothing of the app.
    await page.waitForTimeout(1500);
    const victim = page
      .frames()
      .find(
        (f) => f.parentFrame() === page.mainFrame() && f.name() !== 'own' && f !== page.frame({ url: /\/harmless$/ }),
      )!;
    expect(victim).toBeDefined();
    expect(victim.url().startsWith(BASE_URL)).toBe(false);
    const appContent = await victim
      .evaluate(() => document.querySelectorAll('[data-testid], main, form').length)
      .catch(() => 0);
    expect(appContent).toBe(0);
    expect(refusals.join('\n')).toMatch(/frame-ancestors|X-Frame-Options/);
    await shot(page, 'security-framing-refused', { fullPage: false });
    await page.context().close();
  });
});

describe('the app under its CSP', () => {
  it('signs in, renders every page and streams an assistant answer with no CSP violation', async () => {
    const page = await newPage(browser);
    const violations = await watchCsp(page);
    await login(page, 'owner@example.com');
    for (const path of ['', '/issues', '/issues/1', '/members', '/settings', '/audit']) {
      await page.goto(`${BASE_URL}/projects/${projectId}${path}`);
      await page.waitForFunction(() => document.body.dataset.hydrated === 'true', undefined, { timeout: 20_000 });
    }
    // The assistant: open the panel, ask, and wait for the streamed answer with its tool card.
    await page.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await page.waitForFunction(() => document.body.dataset.hydrated === 'true');
    await page.getByTestId('assistant-toggle').click();
    const input = page.locator('[data-testid="assistant-panel"] [data-testid="assistant-input"]');
    await input.fill('list open issues');
    await input.press('Enter');
    await page
      .locator('[data-testid="assistant-panel"] [data-testid="assistant-send"]')
      .waitFor({ state: 'visible', timeout: 30_000 });
    const answer = await page.$$eval(
      '[data-testid="assistant-message"][data-role="assistant"]',
      (els) => els.at(-1)?.textContent ?? '',
    );
    expect(answer).toMatch(/Here (is 1 issue|are \d+ issues)/);
    expect(await page.locator('[data-testid="assistant-panel"] [data-testid="tool-card"]').count()).toBeGreaterThan(0);
    await shot(page, 'security-assistant-under-csp', { fullPage: false });
    expect(violations).toEqual([]);
    await page.context().close();
  });

  it('a malformed session cookie on a page is "signed out", not an error', async () => {
    const page = await newPage(browser);
    await page.context().addCookies([{ name: 'next-auth.session-token', value: '%E0%A4%A', url: BASE_URL }]);
    const res = await page.goto(`${BASE_URL}/projects`);
    await page.waitForURL((u) => u.pathname === '/login');
    expect(res?.status()).toBe(200);
    await page.context().close();
  });
});

describe('addresses whose percent-escapes do not decode', () => {
  // Past the proxy, Next.js fails to decode such a path as a route's parameter and answers 500
  // (its own plain "Internal Server Error", nothing in its log); the proxy refuses them first.
  it('get 400 MALFORMED_PATH on every route, the run start and uploads included, never a 500', async () => {
    const api = [
      ['POST', `/api/projects/${projectId}%zz/in-app-agent`],
      ['POST', '/api/projects/%C0%80/in-app-agent'],
      ['POST', '/api/projects/%/in-app-agent/attachments'],
      ['GET', `/api/projects/${projectId}/in-app-agent/attachments/%ED%A0%80`],
      ['GET', `/api/projects/${projectId}/in-app-agent/runs/%FF/events`],
      ['POST', '/api/trpc/tracker.issues.close%C0%80'],
      ['GET', '/api/public/mcp%zz'],
    ] as const;
    for (const [method, path] of api) {
      const res = await fetch(`${BASE_URL}${path}`, {
        method,
        headers: { 'content-type': 'application/json', origin: BASE_URL },
        ...(method === 'POST' ? { body: '{}' } : {}),
      });
      expect(res.status, `${method} ${path}`).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: 'MALFORMED_PATH' } });
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    for (const path of ['/projects/%zz', '/api/auth/%FF']) {
      const res = await fetch(`${BASE_URL}${path}`);
      expect(res.status, path).toBe(400);
      expect(await res.text()).toContain('percent-escape');
    }
  });
});

describe('sign-in limits on the login form', () => {
  it('says "too many attempts" with the wait, and nothing about whether the account exists', async () => {
    const page = await newPage(browser);
    await page.goto(`${BASE_URL}/login`);
    await page.waitForFunction(() => document.body.dataset.hydrated === 'true');
    const email = `nobody-${Date.now()}@example.com`;
    const alerts: string[] = [];
    const button = page.getByRole('button', { name: 'Sign in', exact: true });
    for (let i = 0; i < 6; i++) {
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(`guess ${i}`);
      const answered = page.waitForResponse((r) => r.url().includes('/api/auth/callback/credentials'));
      await button.click();
      await answered;
      // The message comes back with the answer, and the button is enabled again.
      await page.waitForFunction(() => {
        const b = document.querySelector<HTMLButtonElement>('form button[type="submit"]');
        return b !== null && !b.disabled && document.getElementById('login-error') !== null;
      });
      alerts.push((await page.locator('#login-error').textContent()) ?? '');
    }
    expect(alerts.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => 'Invalid email or password.'));
    expect(alerts[5]).toMatch(/^Too many sign-in attempts\. Try again in (a minute|\d+ minutes)\.$/);
    await shot(page, 'security-login-locked');
    await page.context().close();
  });
});
