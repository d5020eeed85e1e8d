// The assistant's project settings and "always allow" in a real browser against `next start` with
// the demo data and the offline demo model: a member allows create_issue for the rest of a
// conversation from its approval card, the next call runs without a card, the "Allowed in this
// conversation" list revokes it and the card is back; an admin edits the tool permissions table
// with the keyboard, reviews and saves, and a second admin who saved meanwhile is told, shown the
// newer version and can apply their change again; the instructions' counter, save and conflict; the
// changes on the audit page; axe in the light and dark themes and on a 390 px screen. The project's
// settings are put back to the defaults afterwards (the other browser tests share the database).
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectAccessible } from './axe';
import { BASE_URL, login, openBrowser, shot } from './browser';
import { PANEL, ask, ensureOpen, findProjectId, waitIdle } from './panel';

let browser: Browser;
let projectId = '';
const contexts: BrowserContext[] = [];

const DESKTOP: BrowserContextOptions = { viewport: { width: 1280, height: 800 } };
const SETUPS: Array<{ name: string; options: BrowserContextOptions }> = [
  { name: 'light', options: { ...DESKTOP, colorScheme: 'light' } },
  { name: 'dark', options: { ...DESKTOP, colorScheme: 'dark' } },
  { name: 'touch-390', options: { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } },
];

/** A signed-in page in its own context (axe is injected as a script tag: the CSP is bypassed). */
async function signedIn(email: string, options: BrowserContextOptions = DESKTOP): Promise<Page> {
  const ctx = await browser.newContext({ ...options, baseURL: BASE_URL, bypassCSP: true });
  contexts.push(ctx);
  const page = await ctx.newPage();
  await login(page, email);
  return page;
}

async function hydrated(page: Page): Promise<void> {
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
}

/** A tRPC call through the app's HTTP API with the page's session (superjson envelope). */
async function trpc<T>(page: Page, path: string, input: unknown, mutation = false): Promise<T> {
  const res = mutation
    ? await page.request.post(`${BASE_URL}/api/trpc/${path}`, {
        data: { json: input },
        headers: { origin: BASE_URL, 'content-type': 'application/json' },
      })
    : await page.request.get(
        `${BASE_URL}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`,
      );
  expect(res.status(), `${path}: ${await res.text()}`).toBe(200);
  return ((await res.json()) as { result: { data: { json: T } } }).result.data.json;
}

type Settings = { policy: { version: number }; instructions: { version: number; text: string } };

/** Puts the project's tool permissions and instructions back to the defaults. */
async function restoreDefaults(page: Page): Promise<void> {
  const s = await trpc<Settings>(page, 'agent.settings.get', { projectId });
  await trpc(
    page,
    'agent.settings.savePolicy',
    { projectId, baseVersion: s.policy.version, policy: { cells: {}, rules: {} } },
    true,
  );
  if (s.instructions.text)
    await trpc(
      page,
      'agent.settings.saveInstructions',
      { projectId, baseVersion: s.instructions.version, text: '' },
      true,
    );
}

async function openSettings(page: Page): Promise<void> {
  await page.goto(`${BASE_URL}/projects/${projectId}/settings`);
  await hydrated(page);
  await page.getByRole('heading', { name: 'Assistant', exact: true }).waitFor();
}

const cell = (page: Page, tool: string, role: string) =>
  page.locator(`[data-testid="policy-cell"][data-tool="${tool}"][data-role="${role}"]`);
const card = (page: Page, state?: string) =>
  page.locator(
    `${PANEL} [data-testid="approval-card"][data-tool="create_issue"]${state ? `[data-state="${state}"]` : ''}`,
  );

beforeAll(async () => {
  browser = await openBrowser();
  const admin = await signedIn('admin@example.com');
  projectId = await findProjectId(admin);
  await restoreDefaults(admin);
});

afterAll(async () => {
  const admin = await signedIn('admin@example.com').catch(() => null);
  if (admin) await restoreDefaults(admin).catch(() => undefined);
  for (const ctx of contexts) await ctx.close().catch(() => undefined);
  await browser?.close();
});

describe('always allow in this conversation', () => {
  let member: Page;

  beforeAll(async () => {
    member = await signedIn('member@example.com');
    await member.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await hydrated(member);
    await member.evaluate(() => window.localStorage.clear());
    await member.reload();
    await hydrated(member);
    await ensureOpen(member);
    await member.locator(`${PANEL} [data-testid="assistant-new"]`).click();
  });

  it('runs later calls without a card, lists the tool, and asks again once revoked', async () => {
    await ask(member, 'create an issue titled Always allow one');
    await card(member, 'open').waitFor();
    const theCard = card(member).last();
    const always = theCard.getByTestId('approval-always');
    expect(await always.textContent()).toContain('Always allow “Create issue” in this conversation');
    // Checking it chooses Approve.
    await always.getByRole('checkbox').check();
    expect(await theCard.getAttribute('data-state')).toBe('chosen-approve');
    for (const setup of SETUPS.slice(0, 2)) {
      await member.emulateMedia({ colorScheme: setup.options.colorScheme ?? 'light' });
      await expectAccessible(member, `always-allow-card-${setup.name}`);
    }
    await member.emulateMedia({ colorScheme: 'light' });
    await shot(member, 'always-allow-card', { fullPage: false });
    await member.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await card(member, 'approved').waitFor();
    await waitIdle(member);
    expect(await card(member, 'approved').getByTestId('approval-outcome').textContent()).toContain(
      'allowed for the rest of this conversation',
    );
    const allowed = member.locator(`${PANEL} [data-testid="conversation-allowances"]`);
    await allowed.waitFor();
    expect(await allowed.locator('[data-testid="allowance"]').allTextContents()).toEqual([
      expect.stringContaining('Create an issue'),
    ]);

    // The next call of the tool in this conversation: no card, the issue is made.
    await ask(member, 'create an issue titled Always allow two');
    await member.waitForFunction(
      (sel) =>
        [...document.querySelectorAll(`${sel} [data-testid="tool-card"]`)].some((e) =>
          e.textContent?.includes('Always allow two'),
        ),
      PANEL,
    );
    expect(await card(member, 'open').count()).toBe(0);
    await expectAccessible(member, 'always-allow-list-light');
    await shot(member, 'always-allow-list', { fullPage: false });

    // Revoked from the list (by keyboard): the list goes, and the next call asks again.
    await allowed.getByRole('button', { name: 'Revoke: Create an issue' }).focus();
    await member.keyboard.press('Enter');
    await allowed.waitFor({ state: 'detached' });
    await ask(member, 'create an issue titled Always allow three');
    await card(member, 'open').waitFor();
  });

  it('fits a 390 px screen with the card and the list', async () => {
    const phone = await signedIn('member@example.com', SETUPS[2]!.options);
    await phone.goto(`${BASE_URL}/projects/${projectId}/issues`);
    await hydrated(phone);
    await ensureOpen(phone);
    await phone.locator(`${PANEL} [data-testid="assistant-new"]`).click();
    await ask(phone, 'create an issue titled Always allow on a phone');
    const open = card(phone, 'open');
    await open.waitFor();
    await open.getByTestId('approval-always').getByRole('checkbox').check();
    await phone.locator(`${PANEL} [data-testid="approval-submit"]`).click();
    await phone.locator(`${PANEL} [data-testid="conversation-allowances"]`).waitFor();
    await expectAccessible(phone, 'always-allow-touch-390');
    await shot(phone, 'always-allow-touch-390', { fullPage: false });
  });
});

describe('the Assistant section of the project settings', () => {
  it('edits Tool permissions with the keyboard, saves after review, and handles a save made meanwhile', async () => {
    const admin = await signedIn('admin@example.com');
    const owner = await signedIn('owner@example.com');
    // The owner opens the settings first: their page holds the version before the admin's save.
    await openSettings(owner);
    await openSettings(admin);

    // Cells beyond a role's permissions are disabled; tools that always ask cannot run unasked.
    expect(await cell(admin, 'create_issue', 'VIEWER').isDisabled()).toBe(true);
    expect(await cell(admin, 'create_issue', 'VIEWER').inputValue()).toBe('off');
    expect(await cell(admin, 'delete_issue', 'OWNER').locator('option[value="auto"]').isDisabled()).toBe(true);
    expect(await cell(admin, 'create_issue', 'MEMBER').getAttribute('aria-label')).toBe('Create an issue, Member');

    // Keyboard: from "Asks for approval" one up is "Runs without asking".
    await cell(admin, 'create_issue', 'MEMBER').focus();
    await admin.keyboard.press('ArrowUp');
    expect(await cell(admin, 'create_issue', 'MEMBER').inputValue()).toBe('auto');
    // An argument rule for update_issue: status changes run without asking.
    const rules = admin.locator('[data-testid="rule-editor"][data-tool="update_issue"]');
    await rules.getByRole('button', { name: 'Add a rule' }).click();
    await rules.getByLabel('Rule 1: field').selectOption('status');
    await admin.getByRole('button', { name: 'Review and save' }).first().click();
    const confirm = admin.getByTestId('policy-confirm');
    expect(await confirm.textContent()).toContain('Create an issue · Member: Asks for approval → Runs without asking');
    expect(await confirm.textContent()).toContain('When Status changes: runs without asking');
    await expectAccessible(admin, 'tool-permissions-confirm-light');
    await confirm.getByRole('button', { name: 'Save tool permissions' }).click();
    await admin.getByText(/Saved as version \d+\. It applies from the assistant's next answer/).waitFor();
    const saved = await trpc<{ policy: { version: number; policy: { cells: Record<string, unknown> } } }>(
      admin,
      'agent.settings.get',
      { projectId },
    );
    expect(saved.policy.policy.cells).toEqual({ create_issue: { MEMBER: 'auto' } });

    // The owner, still on the older version, takes list_members away from viewers and saves.
    await cell(owner, 'list_members', 'VIEWER').selectOption('off');
    await owner.getByRole('button', { name: 'Review and save' }).first().click();
    await owner.getByTestId('policy-confirm').getByRole('button', { name: 'Save tool permissions' }).click();
    const conflict = owner.getByTestId('policy-error');
    await conflict.waitFor();
    expect(await conflict.textContent()).toContain(
      `Someone saved the tool permissions (version ${saved.policy.version})`,
    );
    expect(await conflict.textContent()).toContain('List members · Viewer: Runs without asking → Not available');
    // The table shows the newer version; the owner applies their change on top of it and saves.
    expect(await cell(owner, 'create_issue', 'MEMBER').inputValue()).toBe('auto');
    expect(await cell(owner, 'list_members', 'VIEWER').inputValue()).toBe('auto');
    await conflict.getByRole('button', { name: 'Apply my changes again' }).click();
    expect(await cell(owner, 'list_members', 'VIEWER').inputValue()).toBe('off');
    await owner.getByRole('button', { name: 'Review and save' }).first().click();
    await owner.getByTestId('policy-confirm').getByRole('button', { name: 'Save tool permissions' }).click();
    await owner.getByText(`Saved as version ${saved.policy.version + 1}.`, { exact: false }).waitFor();
    await shot(owner, 'tool-permissions-saved');
  });

  it('edits Assistant instructions with a counter, saves after review, and shows a newer version on conflict', async () => {
    const admin = await signedIn('admin@example.com');
    const owner = await signedIn('owner@example.com');
    await openSettings(owner);
    await openSettings(admin);
    const text = admin.getByLabel('Instructions for the assistant');
    await text.fill('Answer briefly. Refer to issues as #N.');
    expect(await admin.getByTestId('instructions-count').textContent()).toBe('38 / 4,000 characters');
    await admin.getByTestId('assistant-instructions').getByRole('button', { name: 'Review and save' }).click();
    await admin.getByTestId('instructions-confirm').getByRole('button', { name: 'Save instructions' }).click();
    await admin
      .getByTestId('instructions-notice')
      .getByText(/Saved as version \d+/)
      .waitFor();

    await owner.getByLabel('Instructions for the assistant').fill('Be formal.');
    await owner.getByTestId('assistant-instructions').getByRole('button', { name: 'Review and save' }).click();
    await owner.getByTestId('instructions-confirm').getByRole('button', { name: 'Save instructions' }).click();
    const newer = owner.getByTestId('instructions-newer');
    await newer.waitFor();
    expect(await newer.textContent()).toBe('Answer briefly. Refer to issues as #N.');
    // The owner's text is kept while they decide.
    expect(await owner.getByLabel('Instructions for the assistant').inputValue()).toBe('Be formal.');
    await owner.getByRole('button', { name: 'Keep mine and review again' }).click();
    await owner.getByTestId('instructions-confirm').getByRole('button', { name: 'Save instructions' }).click();
    await owner
      .getByTestId('instructions-notice')
      .getByText(/Saved as version \d+/)
      .waitFor();
  });

  it('lists the changes on the audit page', async () => {
    const admin = await signedIn('admin@example.com');
    await admin.goto(`${BASE_URL}/projects/${projectId}/audit`);
    await hydrated(admin);
    const rows = admin.locator('[data-testid="settings-history-row"]');
    await rows.first().waitFor();
    const text = (await rows.allTextContents()).join('\n');
    expect(text).toContain('List members · Viewer: Runs without asking → Not available');
    expect(text).toContain('Create an issue · Member: Asks for approval → Runs without asking');
    expect(text).toMatch(/Always allowed “Create an issue” in a conversation/);
    expect(text).toMatch(/Revoked by Maya Member/);
    expect(text).toContain('Assistant instructions, version');
    await expectAccessible(admin, 'audit-settings-history-light');
  });

  it.each(SETUPS)('passes axe and fits the screen, $name', async ({ name, options }) => {
    const admin = await signedIn('admin@example.com', options);
    await openSettings(admin);
    await admin.getByTestId('tool-permissions-table').waitFor();
    await expectAccessible(admin, `assistant-settings-${name}`);
    const width = await admin.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
    expect(width[0]).toBeLessThanOrEqual(width[1]!);
    await admin.getByTestId('assistant-settings').scrollIntoViewIfNeeded();
    await shot(admin, `assistant-settings-${name}`, { fullPage: false });
  });
});
