// The retention purge on the real database: exactly what is past retention goes (deleted
// conversations with their events, approvals and feedback; old audit rows; long-dead run keys; old
// override nonces; limit counters past their windows), nothing else, never a conversation with a
// running run; and one purge at a time (a second connection or pass skips while the lock is held).
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { getDb, getPrisma, openDatabase } from '@/server/db';
import { newId } from '@/server/ids';
import { purgeExpired, RETENTION_LOCK_KEY, type PurgeOptions } from '@/server/retention';
import { createProject } from '../../helpers/fixtures';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);
const OPTIONS: PurgeOptions = { agentRetentionDays: 30, auditRetentionDays: 90, batchSize: 10 };

async function conversation(
  projectId: string,
  userId: string,
  opts: { deletedDaysAgo: number | null; running?: boolean },
) {
  const prisma = await getPrisma();
  const id = newId('cv_');
  const runId = newId('run_');
  await prisma.agentConversation.create({
    data: {
      id,
      projectId,
      userId,
      title: 't',
      lastSeq: 2,
      deletedAt: opts.deletedDaysAgo === null ? null : daysAgo(opts.deletedDaysAgo),
    },
  });
  await prisma.agentRun.create({
    data: { id: runId, conversationId: id, userId, status: opts.running ? 'RUNNING' : 'COMPLETED' },
  });
  await prisma.agentEvent.create({
    data: { id: newId('ev_'), conversationId: id, runId, seq: 1, type: 'TEXT_MESSAGE', payload: { v: 2 } },
  });
  await prisma.agentPendingApproval.create({
    data: {
      id: newId('ap_'),
      runId,
      conversationId: id,
      userId,
      toolCallId: newId('tc_'),
      toolName: 'create_issue',
      args: {},
      argsFingerprint: 'f',
      reason: 'write',
      expiresAt: new Date(),
    },
  });
  await prisma.agentFeedback.create({
    data: { id: newId('fb_'), conversationId: id, messageId: newId('msg_'), userId, value: 1 },
  });
  return id;
}

describe('the retention purge', () => {
  it('deletes exactly what is past retention, and nothing of a conversation with a running run', async () => {
    const prisma = await getPrisma();
    const p = await createProject('Retention');
    const u = p.users.MEMBER.id;
    // 23 expired conversations: more than two batches of 2 (batchSize 10 / 5).
    const expired = await Promise.all(Array.from({ length: 23 }, () => conversation(p.id, u, { deletedDaysAgo: 31 })));
    const recent = await conversation(p.id, u, { deletedDaysAgo: 29 });
    const live = await conversation(p.id, u, { deletedDaysAgo: null });
    const running = await conversation(p.id, u, { deletedDaysAgo: 45, running: true });

    const audit = (days: number) =>
      prisma.toolCallAudit.create({
        data: { id: newId('au_'), projectId: p.id, tool: 'list_issues', status: 'OK', startedAt: daysAgo(days) },
      });
    const oldAudits = await Promise.all(Array.from({ length: 25 }, () => audit(91)));
    const keptAudit = await audit(89);

    const key = async (kind: 'PROJECT' | 'IN_APP_AGENT', expiredDaysAgo: number, revoked = false) =>
      (
        await prisma.apiKey.create({
          data: {
            id: newId('k_'),
            kind,
            name: 'k',
            publicKey: `pk_${newId('')}`,
            secretHash: 'h',
            projectId: p.id,
            expiresAt: daysAgo(expiredDaysAgo),
            revokedAt: revoked ? daysAgo(expiredDaysAgo) : null,
          },
        })
      ).id;
    await key('IN_APP_AGENT', 100, true);
    const recentRunKey = await key('IN_APP_AGENT', 10);
    const projectKey = await key('PROJECT', 400, true);
    const nonce = (days: number) =>
      prisma.mcpOverrideUse.create({
        data: { nonce: newId('n_'), apiKeyId: recentRunKey, tool: 'create_issue', consumedAt: daysAgo(days) },
      });
    const oldNonce = await nonce(10);
    const newNonce = await nonce(0);

    const result = await purgeExpired(await getDb(), OPTIONS);
    expect(result).toMatchObject({ ran: true, conversations: 23, auditRows: 25, runKeys: 1, overrideUses: 1 });

    const left = await prisma.agentConversation.findMany({ where: { projectId: p.id }, select: { id: true } });
    expect(left.map((c) => c.id).sort()).toEqual([recent, live, running].sort());
    for (const table of ['agentRun', 'agentEvent', 'agentPendingApproval', 'agentFeedback'] as const) {
      const delegate = prisma[table] as unknown as { count(a: unknown): Promise<number> };
      expect(await delegate.count({ where: { conversationId: { in: expired } } })).toBe(0);
      expect(await delegate.count({ where: { conversationId: running } })).toBe(1);
    }
    expect(await prisma.toolCallAudit.count({ where: { id: { in: oldAudits.map((a) => a.id) } } })).toBe(0);
    expect(await prisma.toolCallAudit.count({ where: { id: keptAudit.id } })).toBe(1);
    expect(
      (await prisma.apiKey.findMany({ where: { projectId: p.id }, select: { id: true } })).map((k) => k.id).sort(),
    ).toEqual([recentRunKey, projectKey].sort());
    expect(await prisma.mcpOverrideUse.count({ where: { nonce: { in: [oldNonce.nonce, newNonce.nonce] } } })).toBe(1);

    // A second pass finds nothing more to do.
    expect(await purgeExpired(await getDb(), OPTIONS)).toMatchObject({
      ran: true,
      conversations: 0,
      auditRows: 0,
      runKeys: 0,
      overrideUses: 0,
    });
  });

  it('deletes the limit counters no window reads any more (sign-in, tRPC, assistant runs, MCP calls)', async () => {
    const prisma = await getPrisma();
    const at = (minutesFromNow: number) => new Date(Date.now() + minutesFromNow * 60_000);
    // 23 counters past their expiry (more than two batches of 10), and two still read.
    const expired = Array.from({ length: 23 }, (_, n) => ({
      key: `agent:run:u_${n}`,
      windowStart: at(-3),
      count: 1,
      expiresAt: at(-1),
    }));
    const live = [
      { key: 'mcp:key:k_live', windowStart: at(-1), count: 4, expiresAt: at(1) },
      { key: 'signin:account:live', windowStart: at(-10), count: 2, expiresAt: at(20) },
    ];
    await prisma.limitCounter.createMany({ data: [...expired, ...live] });
    const result = await purgeExpired(await getDb(), OPTIONS);
    expect(result).toMatchObject({ ran: true, limitCounters: 23 });
    const left = await prisma.limitCounter.findMany({ select: { key: true } });
    expect(left.map((r) => r.key).sort()).toEqual(live.map((r) => r.key).sort());
    expect((await purgeExpired(await getDb(), OPTIONS)).limitCounters).toBe(0);
  });

  it('runs one pass at a time in a process', async () => {
    const p = await createProject('Retention twice');
    await Promise.all(Array.from({ length: 6 }, () => conversation(p.id, p.users.MEMBER.id, { deletedDaysAgo: 40 })));
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const first = purgeExpired(await getDb(), { ...OPTIONS, afterBatch: () => held });
    const second = await purgeExpired(await getDb(), OPTIONS);
    expect(second.ran).toBe(false);
    release();
    expect((await first).ran).toBe(true);
    expect((await first).conversations).toBe(6);
  });

  it.runIf(process.env.DATABASE_URL)(
    'skips its turn while another connection (another instance) holds the lock',
    async () => {
      const p = await createProject('Retention locked');
      const prisma = await getPrisma();
      const id = await conversation(p.id, p.users.MEMBER.id, { deletedDaysAgo: 40 });
      const other = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await other.connect();
      try {
        await other.query('SELECT pg_advisory_lock($1)', [RETENTION_LOCK_KEY]);
        expect(await purgeExpired(await getDb(), OPTIONS)).toMatchObject({ ran: false, conversations: 0 });
        expect(await prisma.agentConversation.count({ where: { id } })).toBe(1);
        await other.query('SELECT pg_advisory_unlock($1)', [RETENTION_LOCK_KEY]);
      } finally {
        await other.end();
      }
      expect(await purgeExpired(await getDb(), OPTIONS)).toMatchObject({ ran: true, conversations: 1 });
    },
  );

  it.runIf(process.env.DATABASE_URL)('two instances purging at once: only one works', async () => {
    const p = await createProject('Retention two instances');
    await Promise.all(Array.from({ length: 6 }, () => conversation(p.id, p.users.MEMBER.id, { deletedDaysAgo: 40 })));
    // A second instance: its own pool on the same database (the in-process flag does not apply to
    // a pass started with the flag cleared, as another process would).
    const second = openDatabase({ databaseUrl: process.env.DATABASE_URL });
    try {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let inside!: () => void;
      const entered = new Promise<void>((r) => (inside = r));
      const first = purgeExpired(await getDb(), {
        ...OPTIONS,
        afterBatch: () => {
          inside();
          return held;
        },
      });
      await entered;
      const flag = (globalThis as { __trackerRetention?: { running: boolean } }).__trackerRetention!;
      flag.running = false; // as in another process
      const other = await purgeExpired(second, OPTIONS);
      flag.running = true;
      expect(other.ran).toBe(false);
      release();
      expect(await first).toMatchObject({ ran: true, conversations: 6 });
    } finally {
      await second.close();
    }
  });
});
