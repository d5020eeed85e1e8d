/**
 * Browser helpers for the end-to-end tests: Debian's Chromium driven by playwright-core against
 * the server tests/e2e/global-setup.ts started for this worker (or E2E_BASE_URL).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type Cookie, chromium, type Page } from 'playwright-core';
import { inject } from 'vitest';

export type { Browser, Page };

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const screenshotsDir = path.join(root, 'test-artifacts', 'screenshots');

/**
 * Base URL of the app under test, without a trailing slash, e.g. `http://127.0.0.1:41234`: the
 * worker's own server (workers are numbered from 1 by `VITEST_POOL_ID`, one server each).
 */
const APPS = inject('e2eBaseUrls') ?? [];
export const BASE_URL: string =
  APPS[(Number(process.env.VITEST_POOL_ID ?? '1') - 1) % Math.max(APPS.length, 1)] ?? process.env.E2E_BASE_URL ?? '';
if (!BASE_URL) throw new Error('No app URL: run the browser tests with `npm run test:e2e`.');

const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Launches headless Chromium. Each launch gets a fresh, throw-away user-data dir (playwright-core
 * creates one per `launch()` and removes it on close; it refuses an explicit --user-data-dir).
 */
export async function openBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** A page in its own browser context (own cookies and storage), 1280x800. */
export async function newPage(browser: Browser): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: BASE_URL });
  return context.newPage();
}

function isUnderProjects(url: URL): boolean {
  return url.pathname === '/projects' || url.pathname.startsWith('/projects/');
}

/** The session cookie of each account's first sign-in in this test file, by email and password. */
const sessions = new Map<string, Cookie[]>();
const isSessionCookie = (c: Cookie) => /(^|\.)session-token(\.\d+)?$/.test(c.name);

/**
 * Signs in and waits until the app shows a page under /projects. The first time in a test file for
 * an account, through the login form; after that with the session cookie that sign-in got, which the
 * server still has to accept (when it does not, a signed-out page, the form again). Tests of the
 * form itself use the form directly.
 */
export async function login(page: Page, email: string, password = 'demo-password'): Promise<void> {
  const account = `${email}\n${password}`;
  const saved = sessions.get(account);
  if (saved) {
    await page.context().addCookies(saved);
    await page.goto(`${BASE_URL}/projects`);
    if (isUnderProjects(new URL(page.url()))) return;
    sessions.delete(account);
    await page.context().clearCookies();
  }
  await loginWithForm(page, email, password);
  const cookies = (await page.context().cookies()).filter(isSessionCookie);
  if (cookies.length) sessions.set(account, cookies);
}

/** Signs in through the login form and waits until the app shows a page under /projects. */
async function loginWithForm(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${BASE_URL}/login`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  try {
    await page.waitForURL(isUnderProjects, { timeout: 20_000 });
  } catch (err) {
    const alert = await page
      .getByRole('alert')
      .allTextContents()
      .catch(() => [] as string[]);
    await shot(page, `login-failed-${email}`).catch(() => undefined);
    throw new Error(
      `Login as ${email} did not reach /projects (still at ${page.url()})` +
        `${alert.length ? `; the page says: ${alert.join(' | ')}` : ''}. ${(err as Error).message}`,
    );
  }
}

/**
 * Saves what the viewport shows as docs/images/<name>.png, the pictures the README and docs/ show,
 * so they follow the product; returns its path. Commit the file when the picture changed.
 */
export async function docsImage(page: Page, name: string): Promise<string> {
  const dir = path.join(root, 'docs', 'images');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: false, animations: 'disabled', caret: 'hide' });
  return file;
}

/**
 * Saves a PNG to test-artifacts/screenshots/<name>.png and returns its path: the full page by
 * default, or what the viewport shows (`fullPage: false`, right for fixed elements such as the
 * assistant panel).
 */
export async function shot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<string> {
  mkdirSync(screenshotsDir, { recursive: true });
  const file = path.join(screenshotsDir, `${name.replace(/[^\w.@-]+/g, '-')}.png`);
  await page.screenshot({ path: file, fullPage: opts.fullPage ?? true });
  return file;
}
