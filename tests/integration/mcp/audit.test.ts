// The audit trail: rows for allowed, denied and failed calls with the caller's identity and capped
// previews, and the `mcp.audit.list` procedure behind the audit page (ADMIN+, filters, paging).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditFacets } from '@/features/mcp/audit';
import { TOOL_CALL_META_KEY } from '@/features/mcp/override';
import { TOOL_NAMES } from '@/features/mcp/registry';
import { getPrisma } from '@/server/db';
import { createIssue, createProject, createUser, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';
import { agentKey, connect, projectKey, rpcError, startReceiver, type Receiver } from './mcp-client';

let server: TestServer;
let project: TestProject;
let other: TestProject;
let projectKeyId: string;
let agentKeyId: string;
let agentRunId: string;
let setupStarted: Date;
let setupEnded: Date;

beforeAll(async () => {
  setupStarted = new Date();
  server = await startTestServer();
  project = await createProject('Audit');
  other = await createProject('Audit other');
  await createIssue(project.id, { title: 'First issue', body: 'x'.repeat(3000) });

  const pk = await projectKey(project);
  projectKeyId = pk.key.id;
  const c = await connect(server.url, pk.secret);
  await c.call('get_issue', { number: 1 }, { [TOOL_CALL_META_KEY]: 'ext-1' }); // OK
  await c.call('get_issue', { number: 999 }); // ERROR (not found)
  await c.call('get_issue', { number: 'one' }); // ERROR (invalid arguments)
  await c.call('notify_webhook', { message: 'x' }); // ERROR (no webhook configured)
  await rpcError(c.call('no_such_tool', {})); // ERROR (unknown tool)
  await c.close();

  const ak = await agentKey(project, project.users.MEMBER.id);
  agentKeyId = ak.key.id;
  agentRunId = ak.key.runId!;
  const a = await connect(server.url, ak.secret);
  await a.call('list_labels', {}, { [TOOL_CALL_META_KEY]: 'tc-read' }); // OK
  await rpcError(a.call('create_issue', { title: 'Sneaky' }, { [TOOL_CALL_META_KEY]: 'tc-write' })); // DENIED
  await a.close();

  // Another project's trail must never show up here.
  const ok = await projectKey(other);
  const o = await connect(server.url, ok.secret);
  await o.call('list_labels', {});
  await o.close();
  setupEnded = new Date();
});
afterAll(async () => server?.close());

describe('audit rows', () => {
  it('records allowed, failed and denied calls with who, what, status, code and duration', async () => {
    const rows = await (await getPrisma()).toolCallAudit.findMany({
      where: { projectId: project.id },
      orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
    });
    expect(rows.map((r) => [r.tool, r.status, r.errorCode])).toEqual([
      ['get_issue', 'OK', null],
      ['get_issue', 'ERROR', 'ISSUE_NOT_FOUND'],
      ['get_issue', 'ERROR', 'INVALID_ARGUMENTS'],
      ['notify_webhook', 'ERROR', 'WEBHOOK_NOT_CONFIGURED'],
      ['no_such_tool', 'ERROR', 'UNKNOWN_TOOL'],
      ['list_labels', 'OK', null],
      ['create_issue', 'DENIED', 'OVERRIDE_REQUIRED'],
    ]);
    const [first] = rows;
    expect(first).toMatchObject({
      apiKeyId: projectKeyId,
      userId: null,
      runId: null,
      toolCallId: 'ext-1',
      argsPreview: '{"number":1}',
    });
    // The 3,000-character body is capped in the preview.
    expect(first!.resultPreview.length).toBeLessThanOrEqual(500);
    expect(first!.resultPreview).toContain('"number":1');
    // Timestamps come from the call itself (the row is written after the call ran).
    for (const r of rows) {
      expect(r.startedAt.getTime()).toBeGreaterThanOrEqual(setupStarted.getTime());
      expect(r.startedAt.getTime()).toBeLessThanOrEqual(setupEnded.getTime());
    }
    const denied = rows.at(-1)!;
    expect(denied).toMatchObject({
      apiKeyId: agentKeyId,
      userId: project.users.MEMBER.id,
      runId: agentRunId,
      toolCallId: 'tc-write',
    });
    expect(denied.argsPreview).toBe('{"title":"Sneaky"}');
  });
});

describe('mcp.audit.list', () => {
  it('lists the trail newest first for admins and owners', async () => {
    for (const role of ['OWNER', 'ADMIN'] as const) {
      const res = await trpcClient(server.url, project.users[role].cookie).mcp.audit.list.query({
        projectId: project.id,
      });
      expect(res.items.map((r) => r.tool)).toEqual([
        'create_issue',
        'list_labels',
        'no_such_tool',
        'notify_webhook',
        'get_issue',
        'get_issue',
        'get_issue',
      ]);
      expect(res.items[0]).toMatchObject({
        status: 'DENIED',
        keyKind: 'IN_APP_AGENT',
        userName: project.users.MEMBER.name,
        runId: agentRunId,
      });
      expect(res.items.at(-1)).toMatchObject({ keyKind: 'PROJECT', keyName: 'test key' });
      expect(res.nextCursor).toBeNull();
    }
  });

  it('filters by tool, status and run id, and pages with a cursor', async () => {
    const api = trpcClient(server.url, project.users.ADMIN.cookie);
    expect((await api.mcp.audit.list.query({ projectId: project.id, tool: 'get_issue' })).items).toHaveLength(3);
    expect(
      (await api.mcp.audit.list.query({ projectId: project.id, status: 'DENIED' })).items.map((r) => r.tool),
    ).toEqual(['create_issue']);
    expect(
      (await api.mcp.audit.list.query({ projectId: project.id, runId: agentRunId })).items.map((r) => r.toolCallId),
    ).toEqual(['tc-write', 'tc-read']);

    const page1 = await api.mcp.audit.list.query({ projectId: project.id, limit: 4 });
    expect(page1.items).toHaveLength(4);
    expect(page1.nextCursor).toBe(page1.items[3]!.id);
    const page2 = await api.mcp.audit.list.query({ projectId: project.id, limit: 4, cursor: page1.nextCursor! });
    expect(page2.items).toHaveLength(3);
    expect(page2.nextCursor).toBeNull();
    expect(new Set([...page1.items, ...page2.items].map((r) => r.id)).size).toBe(7);
  });

  it('is forbidden to members and viewers, and not found for non-members and other projects', async () => {
    for (const role of ['MEMBER', 'VIEWER'] as const) {
      expect(
        await errorCode(
          trpcClient(server.url, project.users[role].cookie).mcp.audit.list.query({ projectId: project.id }),
        ),
      ).toBe('FORBIDDEN');
    }
    const stranger = await createUser('Stranger');
    expect(
      await errorCode(trpcClient(server.url, stranger.cookie).mcp.audit.list.query({ projectId: project.id })),
    ).toBe('NOT_FOUND');
    expect(
      await errorCode(trpcClient(server.url, other.users.OWNER.cookie).mcp.audit.list.query({ projectId: project.id })),
    ).toBe('NOT_FOUND');
    expect(await errorCode(trpcClient(server.url).mcp.audit.list.query({ projectId: project.id }))).toBe(
      'UNAUTHORIZED',
    );
  });

  it('refuses bad filters with a validation error', async () => {
    const api = trpcClient(server.url, project.users.ADMIN.cookie);
    expect(await errorCode(api.mcp.audit.list.query({ projectId: project.id, status: 'MAYBE' as never }))).toBe(
      'BAD_REQUEST',
    );
    expect(await errorCode(api.mcp.audit.list.query({ projectId: project.id, limit: 1000 }))).toBe('BAD_REQUEST');
  });
});

describe('audit details', () => {
  let receiver: Receiver;
  let p: TestProject;
  let pkPublic: string;
  let viewerKey: { id: string; runId: string };

  beforeAll(async () => {
    receiver = await startReceiver();
    p = await createProject('Audit details');
    await (await getPrisma()).project.update({ where: { id: p.id }, data: { webhookUrl: receiver.url } });
    const pk = await projectKey(p);
    pkPublic = pk.publicKey;
  });
  afterAll(async () => receiver?.close());

  it('records the real duration of a call: a webhook that answers after 300 ms gives durationMs >= 300', async () => {
    const c = await connect(server.url, (await projectKey(p)).secret);
    receiver.delayMs = 300;
    const res = await c.call('notify_webhook', { message: 'slow' });
    receiver.delayMs = 0;
    expect(res.isError).toBeFalsy();
    expect((await c.call('list_labels')).isError).toBeFalsy();
    await c.close();
    const rows = await (await getPrisma()).toolCallAudit.findMany({
      where: { projectId: p.id },
      orderBy: [{ startedAt: 'asc' }, { id: 'asc' }],
    });
    const slow = rows.find((r) => r.tool === 'notify_webhook')!;
    expect(slow.status).toBe('OK');
    expect(slow.durationMs).toBeGreaterThanOrEqual(300);
    expect(slow.durationMs).toBeLessThan(5000);
  });

  it('writes a DENIED row when a role lacks the scope (MISSING_SCOPE)', async () => {
    const k = await agentKey(p, p.users.VIEWER.id);
    viewerKey = { id: k.key.id, runId: k.key.runId! };
    const c = await connect(server.url, k.secret);
    const err = await rpcError(c.call('create_issue', { title: 'Not allowed' }, { [TOOL_CALL_META_KEY]: 'tc-scope' }));
    expect(err.data?.code).toBe('MISSING_SCOPE');
    await c.close();
    const row = await (await getPrisma()).toolCallAudit.findFirstOrThrow({ where: { apiKeyId: k.key.id } });
    expect(row).toMatchObject({
      tool: 'create_issue',
      status: 'DENIED',
      errorCode: 'MISSING_SCOPE',
      userId: p.users.VIEWER.id,
      runId: viewerKey.runId,
      toolCallId: 'tc-scope',
      argsPreview: '{"title":"Not allowed"}',
    });
    expect(JSON.parse(row.resultPreview)).toMatchObject({ error: { code: 'MISSING_SCOPE' } });
    expect(await (await getPrisma()).issue.count({ where: { projectId: p.id } })).toBe(0);
  });

  it('filters by caller kind, public key and user, and by tool names that are not in the registry', async () => {
    const c = await connect(server.url, (await projectKey(p)).secret);
    await rpcError(c.call('retired_tool', {}));
    await c.close();
    const api = trpcClient(server.url, p.users.ADMIN.cookie);
    const tools = async (f: Record<string, string>) =>
      (await api.mcp.audit.list.query({ projectId: p.id, ...f })).items.map((r) => r.tool);

    expect(await tools({ keyKind: 'IN_APP_AGENT' })).toEqual(['create_issue']);
    expect((await tools({ keyKind: 'PROJECT' })).sort()).toEqual(['list_labels', 'notify_webhook', 'retired_tool']);
    expect(await tools({ publicKey: pkPublic })).toEqual([]); // this key made no call
    const callers = await (await getPrisma()).apiKey.findMany({
      where: { projectId: p.id, kind: 'PROJECT', audits: { some: {} } },
      orderBy: { createdAt: 'asc' },
    });
    expect(await tools({ publicKey: callers[0]!.publicKey })).toEqual(['list_labels', 'notify_webhook']);
    expect(await tools({ userId: p.users.VIEWER.id })).toEqual(['create_issue']);
    expect(await tools({ userId: p.users.ADMIN.id })).toEqual([]);
    expect(await tools({ tool: 'retired_tool' })).toEqual(['retired_tool']);
    const list = await api.mcp.audit.list.query({ projectId: p.id, keyKind: 'PROJECT' });
    expect(list.items[0]).toMatchObject({
      keyKind: 'PROJECT',
      keyPublicKey: expect.stringMatching(/^pk_[A-Za-z0-9_-]{16}$/),
    });

    expect(await errorCode(api.mcp.audit.list.query({ projectId: p.id, publicKey: 'pk_\u0000' }))).toBe('BAD_REQUEST');
    expect(await errorCode(api.mcp.audit.list.query({ projectId: p.id, keyKind: 'ROOT' as never }))).toBe(
      'BAD_REQUEST',
    );
  });

  it('offers the filter choices: registry tools plus recorded unknown names, project keys, assistant users', async () => {
    const facets = await auditFacets(await getPrisma(), p.id);
    expect(facets.tools.slice(0, TOOL_NAMES.length)).toEqual([...TOOL_NAMES]);
    expect(facets.tools.slice(TOOL_NAMES.length)).toEqual(['retired_tool']);
    expect(facets.keys.map((k) => k.publicKey)).toContain(pkPublic);
    expect(facets.keys.every((k) => k.kind === 'PROJECT')).toBe(true);
    expect(facets.users).toEqual([{ id: p.users.VIEWER.id, name: p.users.VIEWER.name }]);
    // Another project's trail is not mixed in.
    const mine = await auditFacets(await getPrisma(), project.id);
    expect(mine.tools).not.toContain('retired_tool');
    expect(mine.keys.map((k) => k.publicKey)).not.toContain(pkPublic);
  });
});
