// Single-use overrides for in-app-agent keys, through the official MCP client over real HTTP: every
// failure is refused with a stable code and audited as DENIED; a valid override works exactly once.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fingerprintArgs, mintOverride, OVERRIDE_META_KEY, TOOL_CALL_META_KEY } from '@/features/mcp/override';
import { getPrisma } from '@/server/db';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { agentKey, connect, projectKey, rpcError, startReceiver, type Connected, type Receiver } from './mcp-client';

let server: TestServer;
let receiver: Receiver;
let project: TestProject;
let keyId: string;
let agentSecret: string;
let agent: Connected;

const args = { message: 'Deploy finished' };
const token = (over: Partial<Parameters<typeof mintOverride>[0]> = {}) =>
  mintOverride({ tool: 'notify_webhook', argsFingerprint: fingerprintArgs(args), keyId, ...over });

beforeAll(async () => {
  server = await startTestServer();
  receiver = await startReceiver();
  project = await createProject('Override');
  await (await getPrisma()).project.update({ where: { id: project.id }, data: { webhookUrl: receiver.url } });
  const k = await agentKey(project, project.users.MEMBER.id);
  keyId = k.key.id;
  agentSecret = k.secret;
  agent = await connect(server.url, k.secret);
});
afterAll(async () => {
  await agent?.close();
  await receiver?.close();
  await server?.close();
});
beforeEach(() => {
  receiver.received.length = 0;
});

async function lastAudit() {
  return (await getPrisma()).toolCallAudit.findFirstOrThrow({
    where: { apiKeyId: keyId },
    orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
  });
}

async function expectRefused(
  meta: Record<string, unknown> | undefined,
  code: string,
  callArgs: Record<string, unknown> = args,
) {
  const err = await rpcError(agent.call('notify_webhook', callArgs, meta));
  expect(err.code).toBe(-32011);
  expect(err.data?.code).toBe(code);
  expect(err.message).toContain(code);
  expect(receiver.received).toHaveLength(0);
  const row = await lastAudit();
  expect(row).toMatchObject({ tool: 'notify_webhook', status: 'DENIED', errorCode: code });
}

describe('in-app-agent key without override', () => {
  it('lists write tools its role grants but cannot run them', async () => {
    expect(await agent.names()).toContain('notify_webhook');
    await expectRefused(undefined, 'OVERRIDE_REQUIRED');
  });
});

describe('override failures', () => {
  it('refuses a forged signature', async () => {
    const forged = mintOverride({
      tool: 'notify_webhook',
      argsFingerprint: fingerprintArgs(args),
      keyId,
      secret: 'x'.repeat(40),
    });
    await expectRefused({ [OVERRIDE_META_KEY]: forged }, 'OVERRIDE_INVALID');
    const [payload] = token().split('.');
    await expectRefused({ [OVERRIDE_META_KEY]: `${payload}.AAAA` }, 'OVERRIDE_INVALID');
    await expectRefused({ [OVERRIDE_META_KEY]: 12345 }, 'OVERRIDE_INVALID');
  });

  it('refuses an expired override', async () => {
    await expectRefused(
      { [OVERRIDE_META_KEY]: token({ ttlSeconds: 30, now: Date.now() - 31_000 }) },
      'OVERRIDE_EXPIRED',
    );
  });

  it('refuses an override for another tool', async () => {
    await expectRefused({ [OVERRIDE_META_KEY]: token({ tool: 'create_issue' }) }, 'OVERRIDE_WRONG_TOOL');
  });

  it('refuses an override for other arguments', async () => {
    await expectRefused({ [OVERRIDE_META_KEY]: token() }, 'OVERRIDE_WRONG_ARGS', {
      message: 'Deploy FAILED, rollback now',
    });
  });

  it('refuses an override minted for another key', async () => {
    const other = await agentKey(project, project.users.MEMBER.id);
    await expectRefused({ [OVERRIDE_META_KEY]: token({ keyId: other.key.id }) }, 'OVERRIDE_WRONG_KEY');
  });

  it('never widens the role: a viewer key with a valid override is refused for missing scope', async () => {
    const k = await agentKey(project, project.users.VIEWER.id);
    const viewer = await connect(server.url, k.secret);
    const t = mintOverride({ tool: 'notify_webhook', argsFingerprint: fingerprintArgs(args), keyId: k.key.id });
    const err = await rpcError(viewer.call('notify_webhook', args, { [OVERRIDE_META_KEY]: t }));
    expect(err.data?.code).toBe('MISSING_SCOPE');
    expect(receiver.received).toHaveLength(0);
    await viewer.close();
  });
});

describe('override success', () => {
  it('runs the approved call exactly once, records the tool-call id, answers its retry from the ledger and refuses another use', async () => {
    const t = token();
    const meta = { [OVERRIDE_META_KEY]: t, [TOOL_CALL_META_KEY]: 'call_abc' };
    const res = await agent.call('notify_webhook', args, meta);
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ delivered: true });
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({
      message: 'Deploy finished',
      project: { id: project.id },
    });
    const ok = await lastAudit();
    expect(ok).toMatchObject({ status: 'OK', toolCallId: 'call_abc', userId: project.users.MEMBER.id });
    expect(ok.runId).toMatch(/^run_test_/);

    receiver.received.length = 0;
    // The same tool call again (a retry): its recorded outcome, not a second delivery (the ledger).
    const retried = await agent.call('notify_webhook', args, meta);
    expect(retried.structuredContent).toEqual(res.structuredContent);
    expect(receiver.received).toHaveLength(0);
    // The override for another call: refused, it was used.
    const other = { [OVERRIDE_META_KEY]: t, [TOOL_CALL_META_KEY]: 'call_other' };
    await expectRefused(other, 'OVERRIDE_REUSED');

    // The replay also fails from a brand-new client (the nonce is consumed in the database).
    const again = await connect(server.url, agentSecret);
    const err = await rpcError(again.call('notify_webhook', args, other));
    expect(err.data?.code).toBe('OVERRIDE_REUSED');
    await again.close();
    expect(receiver.received).toHaveLength(0);
    expect(await (await getPrisma()).mcpOverrideUse.count({ where: { apiKeyId: keyId } })).toBe(1);
  });

  it('lets exactly one of several concurrent uses of the same override through', async () => {
    receiver.received.length = 0;
    const meta = { [OVERRIDE_META_KEY]: token() };
    const clients = await Promise.all([1, 2, 3, 4].map(() => connect(server.url, agentSecret)));
    const outcomes = await Promise.all(
      clients.map((c) =>
        c.call('notify_webhook', args, meta).then(
          (r) => (r.isError ? 'error' : 'ok'),
          (e: { data?: { code?: string } }) => e.data?.code ?? 'throw',
        ),
      ),
    );
    expect(outcomes.sort()).toEqual(['OVERRIDE_REUSED', 'OVERRIDE_REUSED', 'OVERRIDE_REUSED', 'ok']);
    expect(receiver.received).toHaveLength(1);
    await Promise.all(clients.map((c) => c.close()));
  });

  it('ignores overrides for read-only tools and for project keys (no consumption)', async () => {
    const prisma = await getPrisma();
    const usedBefore = await prisma.mcpOverrideUse.count();
    const readToken = mintOverride({ tool: 'list_labels', argsFingerprint: fingerprintArgs({}), keyId });
    const r1 = await agent.call('list_labels', {}, { [OVERRIDE_META_KEY]: readToken });
    expect(r1.isError).toBeFalsy();
    expect(r1.structuredContent).toMatchObject({ labels: [{ name: 'bug' }, { name: 'feature' }] });
    const pk = await projectKey(project);
    const pc = await connect(server.url, pk.secret);
    const res = await pc.call('notify_webhook', args, { [OVERRIDE_META_KEY]: 'garbage' });
    expect(res.isError).toBeFalsy();
    expect(receiver.received).toHaveLength(1);
    expect(await prisma.mcpOverrideUse.count()).toBe(usedBefore);
    await pc.close();
  });
});

describe('old consumed overrides', () => {
  it('are purged while consuming: records older than the retention go, recent ones stay (replay protection intact)', async () => {
    const prisma = await getPrisma();
    const other = await agentKey(project, project.users.MEMBER.id);
    const hour = 3600_000;
    const ageOf = (hours: number) => new Date(Date.now() - hours * hour);
    // Retention is the longest token life (1 h) plus a day: 25 h.
    await prisma.mcpOverrideUse.createMany({
      data: [
        { nonce: 'old_aaaaaaaaaaaaaaaaaaaa', apiKeyId: other.key.id, tool: 'notify_webhook', consumedAt: ageOf(26) },
        {
          nonce: 'old_bbbbbbbbbbbbbbbbbbbb',
          apiKeyId: other.key.id,
          tool: 'notify_webhook',
          consumedAt: ageOf(24 * 30),
        },
        { nonce: 'recent_cccccccccccccccccc', apiKeyId: other.key.id, tool: 'notify_webhook', consumedAt: ageOf(2) },
        { nonce: 'recent_dddddddddddddddddd', apiKeyId: other.key.id, tool: 'notify_webhook', consumedAt: ageOf(24.5) },
      ],
    });
    // Nothing is purged until an override is consumed.
    expect(await prisma.mcpOverrideUse.count({ where: { apiKeyId: other.key.id } })).toBe(4);

    const res = await agent.call('notify_webhook', args, { [OVERRIDE_META_KEY]: token() });
    expect(res.isError).toBeFalsy();
    const left = await prisma.mcpOverrideUse.findMany({ where: { apiKeyId: other.key.id }, orderBy: { nonce: 'asc' } });
    expect(left.map((r) => r.nonce)).toEqual(['recent_cccccccccccccccccc', 'recent_dddddddddddddddddd']);
  });

  it('purges at most a bounded batch per consumption', async () => {
    const prisma = await getPrisma();
    const other = await agentKey(project, project.users.MEMBER.id);
    const old = new Date(Date.now() - 48 * 3600_000);
    await prisma.mcpOverrideUse.createMany({
      data: Array.from({ length: 130 }, (_, i) => ({
        nonce: `bulk_${String(i).padStart(20, '0')}`,
        apiKeyId: other.key.id,
        tool: 'notify_webhook',
        consumedAt: old,
      })),
    });
    expect((await agent.call('notify_webhook', args, { [OVERRIDE_META_KEY]: token() })).isError).toBeFalsy();
    expect(await prisma.mcpOverrideUse.count({ where: { apiKeyId: other.key.id } })).toBe(30);
    expect((await agent.call('notify_webhook', args, { [OVERRIDE_META_KEY]: token() })).isError).toBeFalsy();
    expect(await prisma.mcpOverrideUse.count({ where: { apiKeyId: other.key.id } })).toBe(0);
  });
});
