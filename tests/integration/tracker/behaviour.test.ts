// Tracker behaviour through the real tRPC endpoint: numbering, filters, search, comments, members,
// API keys, webhook settings, input validation (including text the database cannot store, such as
// NUL) and request hygiene.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRPCClientError } from '@trpc/client';
import { TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import superjson from 'superjson';
import { z } from 'zod';
import { changeRole, removeMember } from '@/features/tracker/services/members';
import { verifyKey } from '@/server/api-keys';
import { appRouter } from '@/server/api-root';
import { type AppError, createCallerFactory, projectProcedure, router } from '@/server/trpc';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { createProject, createUser, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';

let server: TestServer;
let p: TestProject;

beforeAll(async () => {
  server = await startTestServer();
  p = await createProject('Behaviour');
});
afterAll(() => server?.close());

const as = (role: keyof TestProject['users'], project: TestProject = p) =>
  trpcClient(server.url, project.users[role].cookie).tracker;

async function appCode(promise: Promise<unknown>): Promise<string | null> {
  try {
    await promise;
    return null;
  } catch (err) {
    if (err instanceof TRPCClientError) return (err.data as { appCode?: string | null }).appCode ?? null;
    throw err;
  }
}

describe('issues', () => {
  it('numbers issues 1, 2, 3 per project, also under concurrency, and never reuses a number', async () => {
    const q = await createProject('Numbers');
    const member = as('MEMBER', q);
    const a = await member.issues.create.mutate({ projectId: q.id, title: 'First' });
    const b = await member.issues.create.mutate({ projectId: q.id, title: 'Second' });
    expect([a.number, b.number]).toEqual([1, 2]);
    const many = await Promise.all(
      [3, 4, 5, 6, 7].map((i) => member.issues.create.mutate({ projectId: q.id, title: `Issue ${i}` })),
    );
    expect(many.map((i) => i.number).sort((x, y) => x - y)).toEqual([3, 4, 5, 6, 7]);
    await as('ADMIN', q).issues.delete.mutate({ projectId: q.id, number: 7 });
    const next = await member.issues.create.mutate({ projectId: q.id, title: 'After delete' });
    expect(next.number).toBe(8);
    // Another project starts at 1.
    const other = await createProject('Numbers2');
    expect((await as('MEMBER', other).issues.create.mutate({ projectId: other.id, title: 'x' })).number).toBe(1);
  });

  it('creates with body, priority, assignee and labels, records the reporter', async () => {
    const issue = await as('MEMBER').issues.create.mutate({
      projectId: p.id,
      title: '  Crash on save  ',
      body: 'Steps...',
      priority: 'HIGH',
      assigneeId: p.users.ADMIN.email,
      labels: ['bug'],
    });
    expect(issue).toMatchObject({
      title: 'Crash on save',
      body: 'Steps...',
      priority: 'HIGH',
      status: 'OPEN',
      assignee: { id: p.users.ADMIN.id },
      reporter: { id: p.users.MEMBER.id },
      labels: [{ name: 'bug' }],
    });
    // A write answers with the issue, not its comments (see write-paths.test.ts).
    expect(issue).not.toHaveProperty('comments');
    expect(await appCode(as('MEMBER').issues.create.mutate({ projectId: p.id, title: 'x', labels: ['nope'] }))).toBe(
      'LABEL_NOT_FOUND',
    );
  });

  it('filters by status, assignee and label, searches title and body, pages newest first', async () => {
    const q = await createProject('Filters');
    const m = as('MEMBER', q);
    const mk = (title: string, extra: Record<string, unknown> = {}) =>
      m.issues.create.mutate({ projectId: q.id, title, ...extra });
    await mk('Login page broken', { labels: ['bug'], assigneeId: q.users.MEMBER.id, body: 'Safari only' });
    await mk('Add dark mode', { labels: ['feature'] });
    await mk('Export to CSV', {
      labels: ['feature'],
      assigneeId: q.users.ADMIN.id,
      body: 'finance wants a csv download',
    });
    await mk('Crash in checkout', { labels: ['bug'] });
    await m.issues.close.mutate({ projectId: q.id, number: 4 });

    const titles = async (filters: Record<string, unknown>) =>
      (await m.issues.list.query({ projectId: q.id, ...filters })).issues.map((i) => i.title);

    expect(await titles({})).toEqual(['Crash in checkout', 'Export to CSV', 'Add dark mode', 'Login page broken']);
    expect(await titles({ status: 'CLOSED' })).toEqual(['Crash in checkout']);
    expect(await titles({ status: 'OPEN' })).toEqual(['Export to CSV', 'Add dark mode', 'Login page broken']);
    expect(await titles({ assigneeId: q.users.MEMBER.id })).toEqual(['Login page broken']);
    expect(await titles({ assigneeId: null })).toEqual(['Crash in checkout', 'Add dark mode']);
    expect(await titles({ label: 'bug' })).toEqual(['Crash in checkout', 'Login page broken']);
    expect(await titles({ label: 'bug', status: 'OPEN' })).toEqual(['Login page broken']);
    expect(await titles({ search: 'safari' })).toEqual(['Login page broken']);
    expect(await titles({ search: 'CSV finance' })).toEqual(['Export to CSV']);
    expect(await titles({ search: 'nothing-like-this' })).toEqual([]);
    // LIKE wildcards are matched literally.
    expect(await titles({ search: '%' })).toEqual([]);
    expect(await titles({ search: '_' })).toEqual([]);
    await mk('Progress at 100%_done');
    expect(await titles({ search: '100%_' })).toEqual(['Progress at 100%_done']);
    await as('ADMIN', q).issues.delete.mutate({ projectId: q.id, number: 5 });

    const page1 = await m.issues.list.query({ projectId: q.id, limit: 3 });
    expect(page1.total).toBe(4);
    expect(page1.nextOffset).toBe(3);
    const page2 = await m.issues.list.query({ projectId: q.id, limit: 3, offset: 3 });
    expect(page2.issues.map((i) => i.title)).toEqual(['Login page broken']);
    expect(page2.nextOffset).toBeNull();

    const found = await m.issues.search.query({ projectId: q.id, query: 'csv' });
    expect(found.map((i) => i.title)).toEqual(['Export to CSV']);
  });

  it('updates, closes and reopens; closedAt follows the status', async () => {
    const m = as('MEMBER');
    const { number } = await m.issues.create.mutate({ projectId: p.id, title: 'Lifecycle' });
    const updated = await m.issues.update.mutate({
      projectId: p.id,
      number,
      title: 'Lifecycle 2',
      labels: ['feature', 'bug'],
      priority: 'URGENT',
    });
    expect(updated.title).toBe('Lifecycle 2');
    expect(updated.labels.map((l) => l.name)).toEqual(['bug', 'feature']);
    const closed = await m.issues.close.mutate({ projectId: p.id, number });
    expect(closed.status).toBe('CLOSED');
    expect(closed.closedAt).toBeInstanceOf(Date);
    const reopened = await m.issues.reopen.mutate({ projectId: p.id, number });
    expect(reopened.status).toBe('OPEN');
    expect(reopened.closedAt).toBeNull();
    const cleared = await m.issues.update.mutate({ projectId: p.id, number, labels: [] });
    expect(cleared.labels).toEqual([]);
  });

  it('deletes an issue with its comments', async () => {
    const { number } = await as('MEMBER').issues.create.mutate({ projectId: p.id, title: 'Doomed' });
    await as('MEMBER').comments.add.mutate({ projectId: p.id, number, body: 'bye' });
    await as('ADMIN').issues.delete.mutate({ projectId: p.id, number });
    expect(await appCode(as('MEMBER').issues.get.query({ projectId: p.id, number }))).toBe('ISSUE_NOT_FOUND');
    expect(await appCode(as('ADMIN').issues.delete.mutate({ projectId: p.id, number }))).toBe('ISSUE_NOT_FOUND');
  });

  it('shows comments in order, marking external ones', async () => {
    const prisma = await getPrisma();
    const { number, id } = await as('MEMBER').issues.create.mutate({ projectId: p.id, title: 'With comments' });
    await as('MEMBER').comments.add.mutate({ projectId: p.id, number, body: 'First from a member' });
    await prisma.comment.create({
      data: { id: newId('c_'), issueId: id, externalAuthor: 'Dana (support inbox)', body: 'From outside' },
    });
    const issue = await as('VIEWER').issues.get.query({ projectId: p.id, number });
    expect(issue.comments.map((c) => [c.authorName, c.external, c.body])).toEqual([
      [p.users.MEMBER.name, false, 'First from a member'],
      ['Dana (support inbox)', true, 'From outside'],
    ]);
  });
});

describe('members', () => {
  it('adds an existing user by email, refuses unknown users and duplicates', async () => {
    const q = await createProject('Members');
    const admin = as('ADMIN', q);
    const newcomer = await createUser('Newcomer');
    const m = await admin.members.add.mutate({ projectId: q.id, email: newcomer.email.toUpperCase(), role: 'MEMBER' });
    expect(m).toMatchObject({ userId: newcomer.id, role: 'MEMBER' });
    expect(await appCode(admin.members.add.mutate({ projectId: q.id, email: newcomer.email }))).toBe('ALREADY_MEMBER');
    expect(await appCode(admin.members.add.mutate({ projectId: q.id, email: 'nobody@nowhere.test' }))).toBe(
      'USER_NOT_FOUND',
    );
    // The newcomer now sees the project.
    const list = await trpcClient(server.url, newcomer.cookie).tracker.projects.list.query();
    expect(list.map((x) => x.id)).toEqual([q.id]);
  });

  it('never removes or demotes the last owner', async () => {
    const q = await createProject('LastOwner');
    const owner = as('OWNER', q);
    expect(await appCode(owner.members.remove.mutate({ projectId: q.id, userId: q.users.OWNER.id }))).toBe(
      'LAST_OWNER',
    );
    expect(
      await appCode(owner.members.changeRole.mutate({ projectId: q.id, userId: q.users.OWNER.id, role: 'ADMIN' })),
    ).toBe('LAST_OWNER');
    // With a second owner, the first may step down; then the second is the last one.
    await owner.members.changeRole.mutate({ projectId: q.id, userId: q.users.ADMIN.id, role: 'OWNER' });
    await owner.members.changeRole.mutate({ projectId: q.id, userId: q.users.OWNER.id, role: 'MEMBER' });
    const second = as('ADMIN', q);
    expect(await appCode(second.members.remove.mutate({ projectId: q.id, userId: q.users.ADMIN.id }))).toBe(
      'LAST_OWNER',
    );
    const members = await second.members.list.query({ projectId: q.id });
    expect(members.filter((m) => m.role === 'OWNER').map((m) => m.userId)).toEqual([q.users.ADMIN.id]);
  });

  it('two owners demoting each other at once leave one owner', async () => {
    const q = await createProject('Race');
    await as('OWNER', q).members.changeRole.mutate({ projectId: q.id, userId: q.users.ADMIN.id, role: 'OWNER' });
    const results = await Promise.allSettled([
      as('OWNER', q).members.changeRole.mutate({ projectId: q.id, userId: q.users.ADMIN.id, role: 'MEMBER' }),
      as('ADMIN', q).members.changeRole.mutate({ projectId: q.id, userId: q.users.OWNER.id, role: 'MEMBER' }),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const prisma = await getPrisma();
    expect(await prisma.projectMembership.count({ where: { projectId: q.id, role: 'OWNER' } })).toBe(1);
  });

  it('many owners stepping down at once always leave exactly one owner', async () => {
    const prisma = await getPrisma();
    const q = await createProject('Stampede');
    const owners = [q.users.OWNER.id];
    for (let i = 0; i < 5; i++) {
      const u = await createUser(`Owner ${i}`);
      await prisma.projectMembership.create({
        data: { id: newId('m_'), projectId: q.id, userId: u.id, role: 'OWNER' },
      });
      owners.push(u.id);
    }
    const results = await Promise.allSettled(
      owners.map((userId, i) =>
        i % 2 ? changeRole(prisma, q.id, { userId, role: 'VIEWER' }) : removeMember(prisma, q.id, { userId }),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(owners.length - 1);
    expect(await prisma.projectMembership.count({ where: { projectId: q.id, role: 'OWNER' } })).toBe(1);
  });

  it('removing a member unassigns their issues and hides the project from them', async () => {
    const q = await createProject('Removal');
    const issue = await as('MEMBER', q).issues.create.mutate({
      projectId: q.id,
      title: 'Mine',
      assigneeId: q.users.MEMBER.id,
    });
    await as('ADMIN', q).members.remove.mutate({ projectId: q.id, userId: q.users.MEMBER.id });
    expect((await as('ADMIN', q).issues.get.query({ projectId: q.id, number: issue.number })).assignee).toBeNull();
    expect(await errorCode(as('MEMBER', q).issues.list.query({ projectId: q.id }))).toBe('NOT_FOUND');
  });
});

describe('API keys', () => {
  it('shows the secret once, stores only a hash, lists without secrets, revokes', async () => {
    const prisma = await getPrisma();
    const admin = as('ADMIN');
    const created = await admin.apiKeys.create.mutate({ projectId: p.id, name: 'CI bot', scopes: ['issues:read'] });
    expect(created.secret).toMatch(/^sk_/);
    expect(created.key).toMatchObject({ name: 'CI bot', status: 'active', lastUsedAt: null, revokedAt: null });

    const row = await prisma.apiKey.findUniqueOrThrow({ where: { id: created.key.id } });
    expect(JSON.stringify(row)).not.toContain(created.secret);
    expect(row.secretHash).not.toContain(created.secret.slice(-20));

    const listed = await admin.apiKeys.list.query({ projectId: p.id });
    const listedJson = JSON.stringify(superjson.serialize(listed));
    expect(listedJson).not.toContain(created.secret);
    expect(listedJson).not.toContain(row.secretHash);
    expect(listed.find((k) => k.id === created.key.id)).not.toHaveProperty('secret');

    // The secret works, and its use shows as lastUsedAt.
    const check = await verifyKey(prisma, { publicKey: created.key.publicKey, secret: created.secret });
    expect(check.ok).toBe(true);
    const afterUse = await admin.apiKeys.list.query({ projectId: p.id });
    expect(afterUse.find((k) => k.id === created.key.id)?.lastUsedAt).toBeInstanceOf(Date);

    const revoked = await admin.apiKeys.revoke.mutate({ projectId: p.id, keyId: created.key.id });
    expect(revoked.status).toBe('revoked');
    const again = await admin.apiKeys.list.query({ projectId: p.id });
    expect(again.find((k) => k.id === created.key.id)).toMatchObject({ status: 'revoked' });
    expect((await verifyKey(prisma, { publicKey: created.key.publicKey, secret: created.secret })).ok).toBe(false);
  });

  it('lists only PROJECT keys, never in-app-agent keys', async () => {
    const prisma = await getPrisma();
    await prisma.apiKey.create({
      data: {
        id: newId('k_'),
        kind: 'IN_APP_AGENT',
        name: 'agent run',
        publicKey: `pk_${newId('x')}`,
        secretHash: 'x',
        projectId: p.id,
      },
    });
    const keys = await as('OWNER').apiKeys.list.query({ projectId: p.id });
    expect(keys.every((k) => k.name !== 'agent run')).toBe(true);
  });
});

describe('settings', () => {
  it('sets and clears the webhook URL; only http(s) URLs', async () => {
    const owner = as('OWNER');
    await owner.settings.setWebhook.mutate({ projectId: p.id, url: 'https://hooks.example.com/abc' });
    expect((await owner.settings.get.query({ projectId: p.id })).webhookUrl).toBe('https://hooks.example.com/abc');
    for (const bad of ['javascript:alert(1)', 'ftp://x.example.com', 'not a url', 'https://user:pw@example.com/']) {
      expect(await errorCode(owner.settings.setWebhook.mutate({ projectId: p.id, url: bad }))).toBe('BAD_REQUEST');
    }
    await owner.settings.setWebhook.mutate({ projectId: p.id, url: '' });
    expect((await owner.settings.get.query({ projectId: p.id })).webhookUrl).toBeNull();
  });
});

describe('input and request hygiene', () => {
  it('bad input is BAD_REQUEST with details, never a 500', async () => {
    const m = as('MEMBER');
    const bad: Array<() => Promise<unknown>> = [
      () => m.issues.create.mutate({ projectId: p.id, title: '' }),
      () => m.issues.create.mutate({ projectId: p.id, title: 'x'.repeat(201) }),
      () => m.issues.create.mutate({ projectId: p.id, title: 'ok', priority: 'SOMEDAY' as never }),
      () => m.issues.create.mutate({ projectId: p.id, title: 'ok', extra: 1 } as never),
      () => m.issues.get.query({ projectId: p.id, number: -1 }),
      () => m.issues.get.query({ projectId: p.id, number: 'one' as never }),
      () => m.issues.list.query({ projectId: p.id, limit: 100_000 }),
      () => m.comments.add.mutate({ projectId: p.id, number: 1, body: '   ' }),
      () => m.issues.list.query({ projectId: 'x'.repeat(500) }),
    ];
    for (const call of bad) expect(await errorCode(call())).toBe('BAD_REQUEST');
  });

  it('text with NUL or other control characters is BAD_REQUEST, never a 500, and stores nothing', async () => {
    const prisma = await getPrisma();
    const before = await prisma.issue.count({ where: { projectId: p.id } });
    const { number } = await as('MEMBER').issues.create.mutate({ projectId: p.id, title: 'Control characters target' });
    const o = as('OWNER');
    const m = as('MEMBER');
    const bad: Array<[string, () => Promise<unknown>]> = [
      ['issues.list projectId', () => m.issues.list.query({ projectId: 'p\0' })],
      ['issues.list projectId (C0)', () => m.issues.list.query({ projectId: `${p.id}\u0001` })],
      ['issues.list search', () => m.issues.list.query({ projectId: p.id, search: 'a\0b' })],
      ['issues.list label', () => m.issues.list.query({ projectId: p.id, label: 'bu\0g' })],
      ['issues.list assignee', () => m.issues.list.query({ projectId: p.id, assigneeId: 'u\0' })],
      ['issues.search query', () => m.issues.search.query({ projectId: p.id, query: 'x\0' })],
      ['issues.create title', () => m.issues.create.mutate({ projectId: p.id, title: 'x\0y' })],
      ['issues.create title (escape)', () => m.issues.create.mutate({ projectId: p.id, title: 'x\u001by' })],
      ['issues.create body', () => m.issues.create.mutate({ projectId: p.id, title: 'ok', body: 'line\0' })],
      [
        'issues.create body (broken Unicode)',
        () => m.issues.create.mutate({ projectId: p.id, title: 'ok', body: 'half \ud800 a pair' }),
      ],
      ['issues.create labels', () => m.issues.create.mutate({ projectId: p.id, title: 'ok', labels: ['\0'] })],
      ['issues.update title', () => m.issues.update.mutate({ projectId: p.id, number, title: '\0' })],
      ['issues.assign', () => m.issues.assign.mutate({ projectId: p.id, number, assigneeId: 'a\0@example.com' })],
      ['comments.add', () => m.comments.add.mutate({ projectId: p.id, number, body: 'hi\0' })],
      ['members.add', () => o.members.add.mutate({ projectId: p.id, email: 'a\0@example.com' })],
      ['members.changeRole', () => o.members.changeRole.mutate({ projectId: p.id, userId: 'u\0', role: 'ADMIN' })],
      ['members.remove', () => o.members.remove.mutate({ projectId: p.id, userId: 'u\0' })],
      ['apiKeys.create', () => o.apiKeys.create.mutate({ projectId: p.id, name: 'key\0', scopes: ['issues:read'] })],
      ['apiKeys.revoke', () => o.apiKeys.revoke.mutate({ projectId: p.id, keyId: 'k\0' })],
      [
        'settings.setWebhook',
        () => o.settings.setWebhook.mutate({ projectId: p.id, url: 'https://hooks.example.com/\0' }),
      ],
      // Not validated by a text schema of its own: the database's refusal is mapped (INVALID_TEXT).
      [
        'agent.conversations.get',
        () =>
          trpcClient(server.url, p.users.MEMBER.cookie).agent.conversations.get.query({
            projectId: p.id,
            conversationId: 'c\0',
          }),
      ],
    ];
    for (const [name, call] of bad) expect(await errorCode(call()), name).toBe('BAD_REQUEST');
    // Tab, line feed and carriage return are ordinary text.
    const ok = await m.issues.create.mutate({ projectId: p.id, title: 'Tabs\tare fine 🎉', body: 'a\r\nb\n\tc' });
    expect(ok.body).toBe('a\r\nb\n\tc');
    expect(ok.title).toBe('Tabs\tare fine 🎉');
    const after = await prisma.issue.findMany({ where: { projectId: p.id }, select: { title: true } });
    expect(after).toHaveLength(before + 2);
    expect(after.some((i) => /[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(i.title))).toBe(false);
    expect((await prisma.project.findUniqueOrThrow({ where: { id: p.id } })).webhookUrl).toBeNull();
  });

  it('raw HTTP: a NUL in any input is a 400 with a stable code, not a 500', async () => {
    const get = (path: string, input: unknown) =>
      fetch(`${server.url}/api/trpc/${path}?input=${encodeURIComponent(JSON.stringify({ json: input }))}`, {
        headers: { cookie: p.users.MEMBER.cookie },
      });
    for (const [path, input] of [
      ['tracker.issues.list', { projectId: 'p\0' }],
      ['tracker.issues.list', { projectId: p.id, search: 'a\0b' }],
      ['agent.conversations.get', { projectId: p.id, conversationId: 'c\0' }],
    ] as const) {
      const res = await get(path, input);
      expect(res.status, path).toBe(400);
      const body = (await res.json()) as {
        error: { json: { message: string; data: { code: string; appCode: string | null } } };
      };
      expect(body.error.json.data.code).toBe('BAD_REQUEST');
      expect(body.error.json.message).not.toMatch(/Something went wrong/);
    }
    const created = await fetch(`${server.url}/api/trpc/tracker.issues.create`, {
      method: 'POST',
      headers: { cookie: p.users.MEMBER.cookie, 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({ json: { projectId: p.id, title: 'x\u0000y' } }),
    });
    expect(created.status).toBe(400);
  });

  it('the safety net: a database refusal of NUL inside any procedure is BAD_REQUEST / INVALID_TEXT', async () => {
    // A procedure that passes unvalidated text straight to the database, as a future one might.
    const prisma = await getPrisma();
    const probe = router({
      find: projectProcedure('issues:read')
        .input(z.object({ title: z.string() }))
        .query(({ ctx, input }) =>
          ctx.prisma.issue.findFirst({ where: { projectId: input.projectId, title: input.title } }),
        ),
    });
    const user = { id: p.users.MEMBER.id, email: p.users.MEMBER.email, name: p.users.MEMBER.name, isAdmin: false };
    const caller = createCallerFactory(probe)({ req: new Request('http://127.0.0.1/'), user, prisma });
    expect(await caller.find({ projectId: p.id, title: 'no such title' })).toBeNull();
    const err = await caller.find({ projectId: p.id, title: 'a\0b' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TRPCError);
    expect((err as TRPCError).code).toBe('BAD_REQUEST');
    expect(((err as TRPCError).cause as AppError).appCode).toBe('INVALID_TEXT');
  });

  it('the error formatter maps a NUL refusal outside any procedure to a 400 as well', async () => {
    const res = await fetchRequestHandler({
      endpoint: '/api/trpc',
      req: new Request(`${server.url}/api/trpc/tracker.projects.list`),
      router: appRouter,
      createContext: () => {
        // What pg and PGlite throw for a NUL in a text parameter.
        throw Object.assign(new Error('invalid byte sequence for encoding "UTF8": 0x00'), { code: '22021' });
      },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { json: { data: { code: string; appCode: string } } } };
    expect(body.error.json.data).toMatchObject({ code: 'BAD_REQUEST', appCode: 'INVALID_TEXT' });
  });

  it('raw HTTP: unauthenticated is 401, malformed JSON is 400', async () => {
    const unauth = await fetch(`${server.url}/api/trpc/tracker.projects.list`);
    expect(unauth.status).toBe(401);
    const malformed = await fetch(`${server.url}/api/trpc/tracker.issues.create`, {
      method: 'POST',
      headers: { cookie: p.users.MEMBER.cookie, 'content-type': 'application/json', origin: server.url },
      body: '{not json',
    });
    expect(malformed.status).toBe(400);
  });

  it('refuses cross-origin mutations and creates nothing', async () => {
    const prisma = await getPrisma();
    const before = await prisma.issue.count({ where: { projectId: p.id } });
    const res = await fetch(`${server.url}/api/trpc/tracker.issues.create`, {
      method: 'POST',
      headers: { cookie: p.users.MEMBER.cookie, 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ json: { projectId: p.id, title: 'CSRF' } }),
    });
    expect(res.status).toBe(403);
    const body = (await res.json()) as { error: { json: { data: { appCode: string } } } };
    expect(body.error.json.data.appCode).toBe('CROSS_ORIGIN');
    const fromSite = await fetch(`${server.url}/api/trpc/tracker.issues.create`, {
      method: 'POST',
      headers: { cookie: p.users.MEMBER.cookie, 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      body: JSON.stringify({ json: { projectId: p.id, title: 'CSRF 2' } }),
    });
    expect(fromSite.status).toBe(403);
    expect(await prisma.issue.count({ where: { projectId: p.id } })).toBe(before);
  });

  it('a forged session cookie is unauthenticated', async () => {
    const c = trpcClient(server.url, 'next-auth.session-token=forged.token.value');
    expect(await errorCode(c.tracker.projects.list.query())).toBe('UNAUTHORIZED');
  });
});
