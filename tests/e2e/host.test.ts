// The Tracker in a real browser against the built app with the seeded demo data: each role sees
// what it may use, a member creates, edits and closes an issue, an owner manages members (and is
// stopped from removing or demoting the last owner), lower roles are refused pages by direct URL,
// an outsider gets 404s, and malformed URLs are 404s rather than server errors.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, login, newPage, openBrowser, shot, type Browser, type Page } from './browser';

let browser: Browser;
let projectId = '';

const SEEDED_ISSUE = 'Checkout button unresponsive on Safari 17';

async function acmeProjectId(page: Page): Promise<string> {
  await page.goto(`${BASE_URL}/projects`);
  const href = await page.getByRole('link', { name: 'Acme Web', exact: true }).getAttribute('href');
  const m = /^\/projects\/([^/?#]+)$/.exec(href ?? '');
  if (!m) throw new Error(`No Acme Web link on /projects (href ${href})`);
  return m[1]!;
}

/** Script errors and console errors per page (hydration mismatches show up here). */
const pageErrors = new WeakMap<Page, string[]>();

async function signedIn(email: string): Promise<Page> {
  const page = await newPage(browser);
  const errors: string[] = [];
  pageErrors.set(page, errors);
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('console', (m) => {
    // A 404 document is expected where the test asks for one.
    if (m.type() === 'error' && !/status of 404/.test(m.text())) errors.push(`console: ${m.text()}`);
  });
  await login(page, email);
  return page;
}

/** Opens a page and waits until React has hydrated it, so clicks reach the client components. */
async function open(page: Page, path: string): Promise<void> {
  await page.goto(`${BASE_URL}${path}`);
  await hydrated(page);
}

async function hydrated(page: Page): Promise<void> {
  await page.locator('body[data-hydrated="true"]').waitFor({ state: 'attached', timeout: 30_000 });
}

/** A tRPC mutation as the page's signed-in user (setup and cleanup, not the subject of a test). */
async function mutate<T>(page: Page, path: string, input: unknown): Promise<T> {
  const res = await page.request.post(`${BASE_URL}/api/trpc/${path}`, {
    headers: { 'content-type': 'application/json', origin: BASE_URL },
    data: { json: input },
  });
  const body = (await res.json()) as { result?: { data: { json: T } }; error?: unknown };
  if (!res.ok() || !body.result) throw new Error(`${path} failed with ${res.status()}: ${JSON.stringify(body.error)}`);
  return body.result.data.json;
}

/** The "Not allowed" page that a role sees for a section it may not use. */
async function expectNotAllowed(page: Page, path: string): Promise<void> {
  const res = await page.goto(`${BASE_URL}/projects/${projectId}/${path}`);
  expect(res?.status(), path).toBe(200);
  await hydrated(page);
  expect(await page.getByRole('heading', { level: 1 }).textContent(), path).toBe('Not allowed');
  expect(await page.getByText(/does not allow you to/).count(), path).toBe(1);
}

async function navLinks(page: Page): Promise<string[]> {
  return (await page.getByRole('navigation', { name: 'Project' }).getByRole('link').allTextContents()).map((t) =>
    t.trim(),
  );
}

beforeAll(async () => {
  browser = await openBrowser();
  const page = await signedIn('owner@example.com');
  projectId = await acmeProjectId(page);
  await page.context().close();
});

afterAll(async () => {
  await browser?.close();
});

describe('each role sees what it may use', () => {
  const ROLES = [
    { email: 'owner@example.com', role: 'Owner', manage: true, write: true },
    { email: 'admin@example.com', role: 'Admin', manage: true, write: true },
    { email: 'member@example.com', role: 'Member', manage: false, write: true },
    { email: 'viewer@example.com', role: 'Viewer', manage: false, write: false },
  ] as const;

  it.each(ROLES)('$email', async ({ email, role, manage, write }) => {
    const page = await signedIn(email);
    await open(page, '/projects');
    const card = page.getByTestId('project-card').filter({ hasText: 'Acme Web' });
    expect(await card.getByTestId('role-badge').textContent()).toBe(role);
    expect(await page.getByText('Internal Tools').count()).toBe(0);
    const name = email.split('@')[0]!;
    await shot(page, `host-projects-${name}`);

    await open(page, `/projects/${projectId}/issues`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Issues');
    expect(await page.getByRole('link', { name: SEEDED_ISSUE }).count()).toBe(1);
    expect(await page.getByRole('link', { name: 'New issue' }).count()).toBe(write ? 1 : 0);
    const nav = await navLinks(page);
    expect(nav).toContain('Issues');
    expect(nav).toContain('Members');
    expect(nav.includes('Settings')).toBe(manage);
    expect(nav.includes('Audit')).toBe(manage);
    expect(nav.includes('Assistant review')).toBe(manage);
    expect(await page.getByRole('button', { name: 'Log out' }).count()).toBe(1);
    expect(await page.locator('#header-actions').count()).toBe(1);
    await shot(page, `host-issues-${name}`);

    await open(page, `/projects/${projectId}/members`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Members');
    expect(await page.getByTestId('member-row').count()).toBeGreaterThanOrEqual(4);
    expect(await page.getByRole('button', { name: 'Add member' }).count()).toBe(manage ? 1 : 0);
    const removeButtons = await page.getByRole('button', { name: /^Remove / }).count();
    const roleSelects = await page.getByRole('combobox', { name: /^Role of / }).count();
    if (manage) {
      expect(removeButtons).toBeGreaterThan(0);
      expect(roleSelects).toBeGreaterThan(0);
    } else {
      expect(removeButtons + roleSelects).toBe(0);
    }
    await shot(page, `host-members-${name}`);

    await open(page, `/projects/${projectId}/issues/1`);
    expect(await page.getByTestId('issue-title').textContent()).toContain(SEEDED_ISSUE);
    // The support-inbox comment is marked as external.
    const external = page.locator('[data-testid="comment"][data-external="true"]');
    expect(await external.count()).toBeGreaterThanOrEqual(1);
    expect(await external.first().getByTestId('external-badge').textContent()).toBe('External');
    expect(await page.getByRole('button', { name: 'Close issue' }).count()).toBe(write ? 1 : 0);
    expect(await page.getByRole('button', { name: 'Edit', exact: true }).count()).toBe(write ? 1 : 0);
    expect(await page.getByLabel('Add a comment').count()).toBe(write ? 1 : 0);
    expect(await page.getByRole('button', { name: 'Delete issue' }).count()).toBe(manage ? 1 : 0);
    await shot(page, `host-issue-${name}`);
    expect(pageErrors.get(page)).toEqual([]);
    await page.context().close();
  });
});

describe('member', () => {
  it('creates an issue, comments on it and closes it', async () => {
    const page = await signedIn('member@example.com');
    await open(page, `/projects/${projectId}/issues`);
    await page.getByRole('link', { name: 'New issue' }).click();
    await page.waitForURL(/\/issues\/new$/);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('New issue');
    const title = `Broken footer link ${Date.now()}`;
    await page.getByLabel('Title').fill(title);
    await page.getByLabel('Description').fill('The "Careers" link in the footer returns 404.');
    await page.getByLabel('Priority').selectOption('HIGH');
    await shot(page, 'host-new-issue');
    await page.getByRole('button', { name: 'Create issue' }).click();
    await page.waitForURL(/\/issues\/\d+$/, { timeout: 30_000 });
    await page.getByTestId('issue-title').filter({ hasText: title }).waitFor();
    const number = Number(new URL(page.url()).pathname.split('/').pop());
    expect(number).toBeGreaterThan(10);

    await page.getByLabel('Add a comment').fill('Looking into it.');
    await page.getByRole('button', { name: 'Comment', exact: true }).click();
    await page.getByTestId('comment').filter({ hasText: 'Looking into it.' }).waitFor();
    expect(
      await page.getByTestId('comment').filter({ hasText: 'Looking into it.' }).getAttribute('data-external'),
    ).toBe('false');

    await page.getByRole('button', { name: 'Close issue' }).click();
    await page.getByRole('button', { name: 'Reopen issue' }).waitFor();
    expect(await page.locator('article [data-testid="issue-status"]').getAttribute('data-status')).toBe('CLOSED');
    await shot(page, 'host-issue-closed');

    // The list shows it under the Closed filter, and search finds it.
    await open(page, `/projects/${projectId}/issues?status=CLOSED`);
    expect(await page.getByRole('link', { name: title }).count()).toBe(1);
    await open(page, `/projects/${projectId}/issues?status=OPEN`);
    expect(await page.getByRole('link', { name: title }).count()).toBe(0);
    await open(page, `/projects/${projectId}/issues?q=${encodeURIComponent('careers footer')}`);
    expect(await page.getByRole('link', { name: title }).count()).toBe(1);
    await shot(page, 'host-issues-search');
    // A member may not delete.
    expect(await page.getByRole('button', { name: 'Delete issue' }).count()).toBe(0);
    expect(pageErrors.get(page)).toEqual([]);
    await page.context().close();
  });

  it('filters through the form', async () => {
    const page = await signedIn('member@example.com');
    await open(page, `/projects/${projectId}/issues`);
    await page.getByLabel('Label').selectOption('docs');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.waitForURL(/label=docs/);
    const rows = await page.getByTestId('issue-row').count();
    expect(rows).toBeGreaterThan(0);
    expect(await page.getByRole('link', { name: 'Document the webhook retry policy' }).count()).toBe(1);
    expect(await page.getByRole('link', { name: SEEDED_ISSUE }).count()).toBe(0);
    await page.context().close();
  });
});

describe('member: editing an issue', () => {
  it('edits title, description and priority in place; cancel discards', async () => {
    const page = await signedIn('member@example.com');
    const original = `Edit me ${Date.now()}`;
    const { number } = await mutate<{ number: number }>(page, 'tracker.issues.create', {
      projectId,
      title: original,
      body: 'Original text.',
    });
    await open(page, `/projects/${projectId}/issues/${number}`);
    expect(await page.getByTestId('issue-title').textContent()).toContain(original);

    // Cancel leaves everything as it was.
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('form', { name: 'Edit issue' });
    await form.getByLabel('Title').fill('Discarded title');
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    expect(await page.getByTestId('issue-title').textContent()).toContain(original);

    const edited = `Edited ${Date.now()}`;
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    expect(await form.getByLabel('Title').inputValue()).toBe(original);
    expect(await form.getByLabel('Description').inputValue()).toBe('Original text.');
    await form.getByLabel('Title').fill(edited);
    await form.getByLabel('Description').fill('Updated description.\nWith a second line.');
    await form.getByLabel('Priority').selectOption('URGENT');
    await shot(page, 'host-issue-editing');
    await form.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('issue-title').filter({ hasText: edited }).waitFor();
    await form.waitFor({ state: 'detached' });

    // Saved, not just shown: a fresh load has it, and the list shows the new title.
    await open(page, `/projects/${projectId}/issues/${number}`);
    expect(await page.getByTestId('issue-title').textContent()).toContain(edited);
    // (Browsers may submit a textarea's line breaks as CRLF.)
    expect((await page.getByTestId('issue-body').textContent())?.replace(/\r\n/g, '\n')).toBe(
      'Updated description.\nWith a second line.',
    );
    expect(await page.locator('article').getByText('Urgent', { exact: true }).count()).toBeGreaterThanOrEqual(1);
    await shot(page, 'host-issue-edited');
    await open(page, `/projects/${projectId}/issues`);
    expect(await page.getByRole('link', { name: edited }).count()).toBe(1);
    expect(await page.getByRole('link', { name: original }).count()).toBe(0);
    expect(pageErrors.get(page)).toEqual([]);
    await page.context().close();
  });
});

describe('refused by direct URL', () => {
  it('a member is refused the settings, audit and assistant review pages', async () => {
    const page = await signedIn('member@example.com');
    for (const path of ['settings', 'audit', 'assistant/review', 'assistant/review/cv_doesnotmatter'])
      await expectNotAllowed(page, path);
    expect(await page.getByLabel('Key name').count()).toBe(0);
    await shot(page, 'host-member-review-refused');
    await page.context().close();
  });

  it('a viewer is refused the audit and assistant review pages too', async () => {
    const page = await signedIn('viewer@example.com');
    for (const path of ['audit', 'assistant/review']) await expectNotAllowed(page, path);
    await page.context().close();
  });

  it('an admin manages members but cannot touch the owner or grant the owner role', async () => {
    const page = await signedIn('admin@example.com');
    await open(page, `/projects/${projectId}/members`);
    const ownerRow = page.locator('[data-testid="member-row"][data-email="owner@example.com"]');
    expect(await ownerRow.getByText('Only owners can change owners').count()).toBe(1);
    expect(await ownerRow.getByRole('combobox').count()).toBe(0);
    expect(await ownerRow.getByRole('button').count()).toBe(0);
    const roleOptions = await page
      .getByRole('form', { name: 'Add a member' })
      .getByLabel('Role', { exact: true })
      .locator('option')
      .allTextContents();
    expect(roleOptions).toEqual(['Admin', 'Member', 'Viewer']);
    const memberRow = page.locator('[data-testid="member-row"][data-email="member@example.com"]');
    expect(
      await memberRow.getByRole('combobox', { name: 'Role of Maya Member' }).locator('option').allTextContents(),
    ).toEqual(['Admin', 'Member', 'Viewer']);
    await shot(page, 'host-members-admin');
    expect(pageErrors.get(page)).toEqual([]);
    await page.context().close();
  });
});

describe('viewer', () => {
  it('is refused the new-issue and settings pages', async () => {
    const page = await signedIn('viewer@example.com');
    for (const path of ['issues/new', 'settings']) {
      await open(page, `/projects/${projectId}/${path}`);
      expect(await page.getByTestId('not-allowed').count()).toBe(1);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Not allowed');
      expect(await page.getByLabel('Title').count()).toBe(0);
      expect(await page.getByLabel('Webhook URL').count()).toBe(0);
    }
    await shot(page, 'host-viewer-settings-refused');
    await page.context().close();
  });
});

describe('admin', () => {
  it('creates an API key (secret shown once) and revokes it', async () => {
    const page = await signedIn('admin@example.com');
    await open(page, `/projects/${projectId}/settings`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Settings');
    const name = `e2e key ${Date.now()}`;
    await page.getByLabel('Key name').fill(name);
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByTestId('new-key-secret');
    await secretBox.waitFor();
    const secret = await page.getByLabel('Secret').inputValue();
    expect(secret).toMatch(/^sk_/);
    expect(await secretBox.textContent()).toContain('will not be shown again');
    await shot(page, 'host-settings-key-created');

    await open(page, `/projects/${projectId}/settings`);
    expect(await page.content()).not.toContain(secret);
    const row = page.getByTestId('key-row').filter({ hasText: name });
    expect(await row.getAttribute('data-status')).toBe('active');
    await row.getByRole('button', { name: `Revoke ${name}` }).click();
    await row.getByRole('button', { name: 'Confirm revoke' }).click();
    await page.locator('[data-testid="key-row"][data-status="revoked"]', { hasText: name }).waitFor();
    await shot(page, 'host-settings-key-revoked');
    expect(pageErrors.get(page)).toEqual([]);
    await page.context().close();
  });

  it('creates a read-only key that expires, sees its scopes listed, and the key lists only read tools', async () => {
    const page = await signedIn('admin@example.com');
    await open(page, `/projects/${projectId}/settings`);
    const name = `read-only e2e ${Date.now()}`;
    await page.getByLabel('Key name').fill(name);
    await page.getByLabel('Expires').selectOption({ label: 'In 30 days' });
    // Read-only is the default; choose it explicitly anyway, as a careful admin would.
    await page.getByRole('radio', { name: /^Read-only/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secretBox = page.getByTestId('new-key-secret');
    await secretBox.waitFor();
    expect(await secretBox.textContent()).toContain('project:read, issues:read, members:read');
    const secret = await page.getByLabel('Secret').inputValue();

    const row = page.getByTestId('key-row').filter({ hasText: name });
    await row.waitFor();
    expect(await row.getByTestId('key-scopes').textContent()).toBe('Read-onlyproject:read, issues:read, members:read');
    const scopesCell = row.getByTestId('key-scopes');
    expect(await scopesCell.getAttribute('data-scopes')).toBe('project:read issues:read members:read');
    expect(await row.getByTestId('key-expires').textContent()).toMatch(/UTC$/);
    await shot(page, 'host-settings-key-read-only');

    // Individual scopes: the boxes name the tools each scope unlocks.
    const custom = `comments e2e ${Date.now()}`;
    await page.getByLabel('Key name').fill(custom);
    await page.getByRole('radio', { name: /^Choose scopes/ }).check();
    const boxes = page.getByTestId('key-scope-choices');
    expect(await boxes.textContent()).toContain('create_issue, update_issue, assign_issue, close_issue');
    await boxes.getByRole('checkbox', { name: /project:read/ }).uncheck();
    await boxes.getByRole('checkbox', { name: /members:read/ }).uncheck();
    await boxes.getByRole('checkbox', { name: /comments:write/ }).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('new-key-secret').filter({ hasText: custom }).waitFor();
    const customRow = page.getByTestId('key-row').filter({ hasText: custom });
    await customRow.waitFor();
    expect(await customRow.getByTestId('key-scopes').textContent()).toBe('issues:read, comments:write');
    expect(await customRow.getByTestId('key-expires').textContent()).toBe('Never');

    // What an MCP client pasted with the read-only secret gets: the read tools only.
    const listed = await page.request.post(`${BASE_URL}/api/public/mcp`, {
      headers: {
        authorization: `Bearer ${secret}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      data: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    const body = (await listed.json()) as { result: { tools: Array<{ name: string }> } };
    const tools = body.result.tools.map((t) => t.name).sort();
    expect(tools).toEqual([
      'get_issue',
      'get_project_summary',
      'list_issues',
      'list_labels',
      'list_members',
      'search_issues',
    ]);
    expect(pageErrors.get(page)).toEqual([]);
    await page.context().close();
  });
});

describe('outsiders and signed-out visitors', () => {
  it('outsider@example.com cannot see acme-web', async () => {
    const page = await signedIn('outsider@example.com');
    await open(page, '/projects');
    expect(await page.getByRole('link', { name: 'Acme Web' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Internal Tools' }).count()).toBe(1);
    for (const path of ['issues', 'issues/1', 'members', 'settings']) {
      const res = await page.goto(`${BASE_URL}/projects/${projectId}/${path}`);
      expect(res?.status()).toBe(404);
      expect(await page.getByText(SEEDED_ISSUE).count()).toBe(0);
      expect(await page.getByText('Olivia Owner').count()).toBe(0);
    }
    await shot(page, 'host-outsider-404');
    await page.context().close();
  });

  it('a signed-out visitor is sent to /login and comes back after signing in', async () => {
    const page = await newPage(browser);
    await page.goto(`${BASE_URL}/projects/${projectId}/members`);
    await page.waitForURL((u) => u.pathname === '/login');
    expect(new URL(page.url()).searchParams.get('callbackUrl')).toBe(`/projects/${projectId}/members`);
    await hydrated(page);
    await page.getByLabel('Email').fill('viewer@example.com');
    await page.getByLabel('Password').fill('wrong-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'Invalid email or password.' }).waitFor();
    await shot(page, 'host-login-failed');
    await page.getByLabel('Password').fill('demo-password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL((u) => u.pathname === `/projects/${projectId}/members`, { timeout: 30_000 });
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Members');

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.waitForURL((u) => u.pathname === '/login', { timeout: 30_000 });
    await page.goto(`${BASE_URL}/projects`);
    await page.waitForURL((u) => u.pathname === '/login');
    await page.context().close();
  });
});

describe('owner: members', () => {
  it('adds an existing user, changes their role, removes them; the last owner stays', async () => {
    const page = await signedIn('owner@example.com');
    const rowOf = (email: string) => page.locator(`[data-testid="member-row"][data-email="${email}"]`);
    const outsider = rowOf('outsider@example.com');
    try {
      await open(page, `/projects/${projectId}/members`);
      expect(await outsider.count()).toBe(0);

      // Add an existing user (the outsider of the demo data) as a viewer.
      const add = page.getByRole('form', { name: 'Add a member' });
      await add.getByLabel('Email of an existing user').fill('outsider@example.com');
      await add.getByLabel('Role', { exact: true }).selectOption('VIEWER');
      await add.getByRole('button', { name: 'Add member' }).click();
      await add.getByText('Oscar Outsider was added as viewer.').waitFor();
      await outsider.getByTestId('role-badge').filter({ hasText: 'Viewer' }).waitFor();
      // A second time is refused with a message.
      await add.getByLabel('Email of an existing user').fill('outsider@example.com');
      await add.getByRole('button', { name: 'Add member' }).click();
      await add.getByRole('alert').filter({ hasText: 'already a member' }).waitFor();
      // An unknown address too.
      await add.getByLabel('Email of an existing user').fill('nobody-here@example.com');
      await add.getByRole('button', { name: 'Add member' }).click();
      await add.getByRole('alert').filter({ hasText: 'need an account first' }).waitFor();
      await shot(page, 'host-members-added');

      // Change the role.
      await outsider.getByRole('combobox', { name: 'Role of Oscar Outsider' }).selectOption('MEMBER');
      await outsider.getByTestId('role-badge').filter({ hasText: 'Member' }).waitFor();
      await open(page, `/projects/${projectId}/members`);
      expect(await outsider.getByTestId('role-badge').textContent()).toBe('Member');

      // The last owner can be neither demoted nor removed, and is told why.
      const owner = rowOf('owner@example.com');
      await owner.getByRole('combobox', { name: 'Role of Olivia Owner' }).selectOption('ADMIN');
      await owner.getByRole('alert').filter({ hasText: 'at least one owner' }).waitFor();
      await shot(page, 'host-members-last-owner-demote');
      await owner.getByRole('button', { name: 'Remove Olivia Owner' }).click();
      await owner.getByRole('button', { name: 'Confirm remove' }).click();
      await owner.getByRole('alert').filter({ hasText: 'The last owner cannot be removed.' }).waitFor();
      await shot(page, 'host-members-last-owner-remove');
      await open(page, `/projects/${projectId}/members`);
      expect(await owner.getByTestId('role-badge').textContent()).toBe('Owner');
      expect(await owner.getByRole('combobox', { name: 'Role of Olivia Owner' }).inputValue()).toBe('OWNER');

      // Remove the added member again.
      await outsider.getByRole('button', { name: 'Remove Oscar Outsider' }).click();
      await outsider.getByRole('button', { name: 'Confirm remove' }).click();
      await outsider.waitFor({ state: 'detached' });
      await open(page, `/projects/${projectId}/members`);
      expect(await outsider.count()).toBe(0);
      expect(pageErrors.get(page)?.filter((e) => !/status of (400|409)/.test(e))).toEqual([]);
    } finally {
      // Leave the demo data as it was even when a step above failed.
      const listed = await page.request.get(
        `${BASE_URL}/api/trpc/tracker.members.list?input=${encodeURIComponent(JSON.stringify({ json: { projectId } }))}`,
      );
      const body = (await listed.json()) as { result?: { data: { json: Array<{ userId: string; email: string }> } } };
      const stray = body.result?.data.json.find((m) => m.email === 'outsider@example.com');
      if (stray)
        await mutate(page, 'tracker.members.remove', { projectId, userId: stray.userId }).catch(() => undefined);
      await page.context().close();
    }
  });
});

describe('malformed URLs', () => {
  it('a NUL or other control character in the project id, the issue number or a filter is a 404, never a 500', async () => {
    const page = await signedIn('member@example.com');
    const cases: Array<[string, number[]]> = [
      [`/projects/${projectId}/issues?q=a%00b`, [404]],
      [`/projects/${projectId}/issues?label=bug%01`, [404]],
      [`/projects/${projectId}/issues?assignee=u%00`, [404]],
      [`/projects/${projectId}/issues/1%00`, [404]],
      [`/projects/${projectId}%00/issues`, [400, 404]],
      [`/projects/p%00x/members`, [400, 404]],
    ];
    for (const [path, expected] of cases) {
      const res = await page.goto(`${BASE_URL}${path}`);
      expect(expected, `${path} answered ${res?.status()}`).toContain(res?.status());
    }
    // The filters themselves still work.
    const ok = await page.goto(`${BASE_URL}/projects/${projectId}/issues?q=${encodeURIComponent('safari')}`);
    expect(ok?.status()).toBe(200);
    await page.context().close();
  });
});
