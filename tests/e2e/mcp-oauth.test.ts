// MCP authorization in a real browser against `next start`: a native MCP client registers, sends
// the browser to the authorization endpoint, the member signs in on the login page (which returns
// to the consent page), chooses scopes and presses "Allow", and the page's hand-over lands on the
// client's loopback listener with the code, the state and the issuer, under the product's real
// Content-Security-Policy (`form-action 'self'`). The code is exchanged with PKCE and the token
// lists the granted tools. "Deny" is answered on the same listener. Then the consent page, the
// account page's Connected apps and the project settings' Connected apps pass axe in the light
// theme, the dark theme and at 390 px, and the member disconnects the app by keyboard.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe';
import { BASE_URL, login, openBrowser, shot } from './browser';
import { findProjectId } from './panel';

interface Callback {
  url: URL;
}

/** The client's side: a loopback listener that receives the redirect, like a desktop MCP client. */
async function startListener(): Promise<{ port: number; next(): Promise<Callback>; close(): Promise<void> }> {
  const LISTENER_WAIT_MS = 30_000;
  const waiting: Array<(c: Callback) => void> = [];
  const received: Callback[] = [];
  const server = http.createServer((req, res) => {
    const cb = { url: new URL(req.url ?? '/', 'http://127.0.0.1') };
    if (cb.url.pathname !== '/callback') {
      // The browser also asks the listener for a favicon: not a redirect.
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>Done</title><p>Signed in.</p>');
    const w = waiting.shift();
    if (w) w(cb);
    else received.push(cb);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    next: () => {
      const ready = received.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise<Callback>((resolve, reject) => {
        // Fails with a reason instead of the test's timeout (a blocked hand-over never arrives).
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(done), 1);
          reject(new Error('No redirect reached the loopback listener (blocked by the page, e.g. its CSP?).'));
        }, LISTENER_WAIT_MS);
        const done = (c: Callback) => {
          clearTimeout(timer);
          resolve(c);
        };
        waiting.push(done);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

let browser: Browser;
let listener: Awaited<ReturnType<typeof startListener>>;
let clientId = '';
let redirectUri = '';
let projectId = '';
const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');

function authorizeUrl(state: string): string {
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    // Registered without a port: a loopback redirect matches on any port.
    redirect_uri: redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state,
    scope: 'issues:read issues:write',
    resource: `${BASE_URL}/api/public/mcp`,
  });
  return `${BASE_URL}/oauth/authorize?${q}`;
}

async function hydrated(page: Page): Promise<void> {
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
}

/** Signs in on the login page the consent page sent the browser to, and waits for the consent page. */
async function signInToConsent(page: Page, email: string): Promise<void> {
  await page.waitForURL((u) => u.pathname === '/login');
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill('demo-password');
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.waitForURL((u) => u.pathname === '/oauth/consent', { timeout: 20_000 });
  await hydrated(page);
}

let memberState: Awaited<ReturnType<BrowserContext['storageState']>>;
let consentUrl = '';
let accessToken = '';

beforeAll(async () => {
  browser = await openBrowser();
  listener = await startListener();
  redirectUri = `http://127.0.0.1:${listener.port}/callback`;
  const reg = await fetch(`${BASE_URL}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'E2E Desktop Client',
      redirect_uris: ['http://127.0.0.1/callback'],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
    }),
  });
  expect(reg.status).toBe(201);
  clientId = ((await reg.json()) as { client_id: string }).client_id;
});

afterAll(async () => {
  await browser?.close();
  await listener?.close();
});

describe('connecting an MCP client in the browser', () => {
  it('sign in, consent with chosen scopes, "Allow": the code reaches the loopback listener', async () => {
    // The real CSP: no bypass. The hand-over must work under form-action 'self'.
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL });
    const page = await ctx.newPage();
    const cspErrors: string[] = [];
    page.on('console', (m) => {
      if (/Content Security Policy|form-action/i.test(m.text())) cspErrors.push(m.text());
    });
    const state = randomBytes(8).toString('hex');
    await page.goto(authorizeUrl(state));
    await signInToConsent(page, 'member@example.com');
    consentUrl = page.url();

    await expect(page.getByRole('heading', { name: 'Connect E2E Desktop Client' }).isVisible()).resolves.toBe(true);
    expect(await page.getByTestId('consent-redirect-host').textContent()).toBe(`127.0.0.1:${listener.port}`);
    const project = page.getByLabel('Project');
    // The member's projects (the demo project, first and chosen, and the one the budget tests use).
    expect(await project.locator('option').allTextContents()).toEqual(['Acme Web (Member)', 'Budget lab (Member)']);
    // The app asked for issues:read and issues:write: preselected, one by one.
    expect(await page.getByRole('radio', { name: /Choose scopes/ }).isChecked()).toBe(true);
    expect(await page.getByRole('checkbox', { name: /issues:write/ }).isChecked()).toBe(true);
    // A member's role cannot grant deleting issues: offered as disabled.
    expect(await page.getByRole('checkbox', { name: /issues:delete/ }).isDisabled()).toBe(true);
    await page.getByRole('checkbox', { name: /members:read/ }).check();
    expect(await page.getByTestId('consent-summary').textContent()).toContain(
      'issues:read, issues:write, members:read',
    );

    await page.getByRole('button', { name: 'Allow', exact: true }).click();
    const callback = await listener.next();
    expect(callback.url.pathname).toBe('/callback');
    expect(callback.url.searchParams.get('state')).toBe(state);
    expect(callback.url.searchParams.get('iss')).toBe(BASE_URL);
    const code = callback.url.searchParams.get('code') ?? '';
    expect(code).toMatch(/^mcp_ac_/);
    await page.waitForURL((u) => u.host === `127.0.0.1:${listener.port}`);
    expect(cspErrors).toEqual([]);
    memberState = await ctx.storageState();
    await ctx.close();

    const token = await fetch(`${BASE_URL}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: verifier,
        client_id: clientId,
      }),
    });
    const tokens = (await token.json()) as { access_token: string; scope: string };
    expect(tokens.scope).toBe('issues:read issues:write members:read');
    accessToken = tokens.access_token;
    const list = await fetch(`${BASE_URL}/api/public/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const names = ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map(
      (t) => t.name,
    );
    expect(names).toContain('create_issue');
    expect(names).toContain('list_members');
    expect(names).not.toContain('get_project_summary');
  });

  it('"Deny" sends access_denied to the listener', async () => {
    const ctx = await browser.newContext({ baseURL: BASE_URL, storageState: memberState });
    const page = await ctx.newPage();
    await page.goto(authorizeUrl('deny-state'));
    await page.waitForURL((u) => u.pathname === '/oauth/consent');
    await hydrated(page);
    await page.getByRole('button', { name: 'Deny', exact: true }).click();
    const callback = await listener.next();
    expect(Object.fromEntries(callback.url.searchParams)).toMatchObject({
      error: 'access_denied',
      state: 'deny-state',
      iss: BASE_URL,
    });
    await ctx.close();
  });
});

const SETUPS: Array<{ name: string; options: BrowserContextOptions }> = [
  { name: 'light', options: { viewport: { width: 1280, height: 800 }, colorScheme: 'light' } },
  { name: 'dark', options: { viewport: { width: 1280, height: 800 }, colorScheme: 'dark' } },
  {
    name: 'touch-390',
    options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, colorScheme: 'light' },
  },
];

describe.each(SETUPS)('MCP authorization pages, $name', ({ name, options }) => {
  it('the consent page, Connected apps (account and project settings) pass axe and fit the screen', async () => {
    const ctx = await browser.newContext({ ...options, baseURL: BASE_URL, bypassCSP: true, storageState: memberState });
    const page = await ctx.newPage();
    await page.goto(consentUrl);
    await hydrated(page);
    await page.getByRole('radio', { name: /Choose scopes/ }).waitFor();
    await expectAccessible(page, `${name}-oauth-consent`);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
    expect(overflow, 'the consent page scrolls sideways').toBe(false);

    await page.goto(`${BASE_URL}/account`);
    await page.getByTestId('connected-app').first().waitFor();
    await expectAccessible(page, `${name}-account-connected-apps`);
    await ctx.close();

    const admin = await browser.newContext({ ...options, baseURL: BASE_URL, bypassCSP: true });
    const adminPage = await admin.newPage();
    await login(adminPage, 'admin@example.com');
    projectId ||= await findProjectId(adminPage);
    await adminPage.goto(`${BASE_URL}/projects/${projectId}/settings`);
    await adminPage.getByTestId('connected-app').first().waitFor();
    expect(await adminPage.getByTestId('connected-apps').textContent()).toContain('Maya Member');
    await expectAccessible(adminPage, `${name}-settings-connected-apps`);
    await shot(adminPage, `oauth-settings-${name}`).catch(() => undefined);
    await admin.close();
  });
});

describe('disconnecting', () => {
  it('the member disconnects the app from their account page by keyboard; its token stops working', async () => {
    const ctx = await browser.newContext({ baseURL: BASE_URL, storageState: memberState });
    const page = await ctx.newPage();
    await page.goto(`${BASE_URL}/`);
    await page.goto(`${BASE_URL}/projects`);
    // The user menu leads to the account page.
    await page.getByTestId('account-link').click();
    await page.waitForURL((u) => u.pathname === '/account');
    await hydrated(page);
    const row = page.getByTestId('connected-app').filter({ hasText: 'E2E Desktop Client' });
    await row.getByRole('button', { name: 'Disconnect E2E Desktop Client' }).focus();
    await page.keyboard.press('Enter');
    // The confirmation takes the focus; Enter confirms.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent ?? '')).toBe('Confirm disconnect');
    await page.keyboard.press('Enter');
    await page.getByTestId('no-connected-apps').waitFor();
    const res = await fetch(`${BASE_URL}/api/public/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${accessToken}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    await ctx.close();
  });
});
