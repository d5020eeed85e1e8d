// The built app answers in a real browser: the login page renders, signed-out visitors are sent to
// it, and a demo account gets in.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, newPage, openBrowser, shot, type Browser } from './browser';

let browser: Browser;

describe('smoke', () => {
  beforeAll(async () => {
    browser = await openBrowser();
  });
  afterAll(async () => {
    await browser?.close();
  });

  it('renders the login page', async () => {
    const page = await newPage(browser);
    const res = await page.goto(`${BASE_URL}/login`);
    expect(res?.status()).toBe(200);
    await expect(page.getByLabel('Email').isVisible()).resolves.toBe(true);
    await expect(page.getByLabel('Password').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('button', { name: 'Sign in', exact: true }).isVisible()).resolves.toBe(true);
    await shot(page, 'smoke-login');
    await page.context().close();
  });

  it('sends a signed-out visitor of /projects to /login', async () => {
    const page = await newPage(browser);
    await page.goto(`${BASE_URL}/projects`);
    await page.waitForURL((u) => u.pathname === '/login', { timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe('/login');
    await page.context().close();
  });

  it('signs in a demo user and shows the project list', async () => {
    const page = await newPage(browser);
    await login(page, 'viewer@example.com');
    await page.goto(`${BASE_URL}/projects`);
    await expect(page.getByText('Acme Web').first().isVisible()).resolves.toBe(true);
    // Projects the user is not a member of stay hidden.
    await expect(page.getByText('Internal Tools').count()).resolves.toBe(0);
    await shot(page, 'smoke-projects');
    await page.context().close();
  });
});
