// A project's "Retention" setting and one member's data, on the real database and through tRPC:
// conversations older than the project's retention (by their last activity) are purged by the
// housekeeping under its lock, in batches, with everything under them and the previews of their
// tool calls in the audit trail, never one with a RUNNING run and never in a project without a
// retention; admins export one member's assistant data (JSONL pages, masked like stored text) and
// delete it. Spend counters survive both.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MASK } from '@/features/in-app-agent/server/redaction';
import { getDb, getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { purgeExpired, type PurgeOptions } from '@/server/retention';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);
/** Conversations are purged two per statement here (batchSize / 5). */
const OPTIONS: PurgeOptions = { agentRetentionDays: 30, auditRetentionDays: 90, batchSize: 10, maxBatches: 3 };
/** Assembled at run time: the source holds no token-shaped string. */
const TOKEN = `ghp_${'k'.repeat(36)}`;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

/** A conversation with a run, an event, an approval, feedback, an audited tool call and spend. */
async function conversation(
  projectId: string,
  userId: string,
  opts: { idleDays: number; running?: boolean; text?: string },
): Promise<{ id: string; runId: string; auditId: string }> {
  const prisma = await getPrisma();
  const id = newId('cv_');
  const runId = newId('run_');
  const messageId = newId('msg_');
  await prisma.agentConversation.create({ data: { id, projectId, userId, title: 'kept?', lastSeq: 2 } });
  await prisma.agentRun.create({
    data: { id: runId, conversationId: id, userId, status: opts.running ? 'RUNNING' : 'COMPLETED' },
  });
  await prisma.agentEvent.create({
    data: {
      id: newId('ev_'),
      conversationId: id,
      runId,
      seq: 1,
      type: 'TEXT_MESSAGE',
      schemaVersion: 3,
      payload: {
        v: 3,
        type: 'TEXT_MESSAGE',
        messageId: 'm1',
        role: 'user',
        content: opts.text ?? 'hi',
        complete: true,
      },
    },
  });
  await prisma.agentPendingApproval.create({
    data: {
      id: newId('ap_'),
      runId,
      conversationId: id,
      userId,
      toolCallId: newId('tc_'),
      toolName: 'create_issue',
      args: { title: opts.text ?? 'x' },
      argsFingerprint: 'f',
      reason: 'mutating',
      expiresAt: new Date(),
    },
  });
  await prisma.agentFeedback.create({
    data: { id: newId('fb_'), conversationId: id, messageId, userId, value: -1, comment: opts.text ?? 'meh' },
  });
  const auditId = newId('au_');
  await prisma.toolCallAudit.create({
    data: {
      id: auditId,
      projectId,
      runId,
      userId,
      tool: 'create_issue',
      status: 'OK',
      argsPreview: `{"title":"${opts.text ?? 'x'}"}`,
      resultPreview: '{"ok":true}',
    },
  });
  // Last activity: `idleDays` ago.
  await prisma.$executeRaw`UPDATE "AgentConversation" SET "updatedAt" = ${daysAgo(opts.idleDays)} WHERE "id" = ${id}`;
  return { id, runId, auditId };
}

async function spendRow(projectId: string, userId: string) {
  const prisma = await getPrisma();
  await prisma.agentSpend.create({
    data: { projectId, userId, period: 'MONTH', windowStart: new Date(Date.UTC(2026, 0, 1)), tokens: 10n, runs: 1 },
  });
}

describe('retention per project', () => {
  it('is set by admins: days after the last activity, or kept', async () => {
    const p = await createProject('Retention setting');
    const admin = trpcClient(server.url, p.users.ADMIN.cookie).agent.dataPolicy;
    expect(await admin.get.query({ projectId: p.id })).toMatchObject({ retentionDays: null, maskContacts: false });
    expect(await admin.set.mutate({ projectId: p.id, retentionDays: 30, maskContacts: true })).toMatchObject({
      retentionDays: 30,
      maskContacts: true,
    });
    for (const bad of [0, -3, 1.5, 36_501]) {
      expect(await errorCode(admin.set.mutate({ projectId: p.id, retentionDays: bad, maskContacts: false }))).toBe(
        'BAD_REQUEST',
      );
    }
    const member = trpcClient(server.url, p.users.MEMBER.cookie).agent.dataPolicy;
    expect(await errorCode(member.set.mutate({ projectId: p.id, retentionDays: 1, maskContacts: false }))).toBe(
      'FORBIDDEN',
    );
    expect(await admin.get.query({ projectId: p.id })).toMatchObject({ retentionDays: 30, maskContacts: true });
  });

  it('purges conversations past the retention in batches, with what hangs off them, never a running one', async () => {
    const prisma = await getPrisma();
    const p = await createProject('Retention purge');
    const kept = await createProject('No retention');
    const u = p.users.MEMBER.id;
    await trpcClient(server.url, p.users.OWNER.cookie).agent.dataPolicy.set.mutate({
      projectId: p.id,
      retentionDays: 30,
      maskContacts: false,
    });
    // Seven past the retention: more than one pass of three batches of two.
    const old = await Promise.all(Array.from({ length: 7 }, () => conversation(p.id, u, { idleDays: 31 })));
    const recent = await conversation(p.id, u, { idleDays: 29 });
    const running = await conversation(p.id, u, { idleDays: 90, running: true });
    const elsewhere = await conversation(kept.id, kept.users.MEMBER.id, { idleDays: 400 });
    await spendRow(p.id, u);

    const first = await purgeExpired(await getDb(), OPTIONS);
    expect(first).toMatchObject({ ran: true, expiredConversations: 6 });
    const second = await purgeExpired(await getDb(), OPTIONS);
    expect(second).toMatchObject({ ran: true, expiredConversations: 1 });
    expect((await purgeExpired(await getDb(), OPTIONS)).expiredConversations).toBe(0);

    const left = await prisma.agentConversation.findMany({ where: { projectId: { in: [p.id, kept.id] } } });
    expect(left.map((c) => c.id).sort()).toEqual([recent.id, running.id, elsewhere.id].sort());
    const oldIds = old.map((c) => c.id);
    for (const table of ['agentRun', 'agentEvent', 'agentPendingApproval', 'agentFeedback'] as const) {
      expect(
        await (prisma[table] as unknown as { count(a: unknown): Promise<number> }).count({
          where: { conversationId: { in: oldIds } },
        }),
        table,
      ).toBe(0);
    }
    // The audit trail keeps its rows (who called what, when), without the previews of what was said.
    const audits = await prisma.toolCallAudit.findMany({ where: { id: { in: old.map((c) => c.auditId) } } });
    expect(audits).toHaveLength(7);
    expect(audits.every((a) => a.argsPreview === '' && a.resultPreview === '')).toBe(true);
    const keptAudit = await prisma.toolCallAudit.findUniqueOrThrow({ where: { id: recent.auditId } });
    expect(keptAudit.argsPreview).not.toBe('');
    // Spend is not given back.
    expect(await prisma.agentSpend.count({ where: { projectId: p.id } })).toBe(1);

    // Once the running one ends, it goes too.
    await prisma.agentRun.update({ where: { id: running.runId }, data: { status: 'COMPLETED' } });
    expect((await purgeExpired(await getDb(), OPTIONS)).expiredConversations).toBe(1);
  });
});

describe("one member's assistant data", () => {
  let p: TestProject;
  const owner = () => trpcClient(server.url, p.users.OWNER.cookie).agent.memberData;

  it('lists who has some, exports it a page at a time (masked), and deletes it', async () => {
    const prisma = await getPrisma();
    p = await createProject('Member data');
    const who = p.users.MEMBER.id;
    // Six conversations (two export pages), one stored before masking existed, holding a token.
    const mine = [
      await conversation(p.id, who, { idleDays: 1, text: `my key is ${TOKEN}` }),
      ...(await Promise.all(Array.from({ length: 4 }, () => conversation(p.id, who, { idleDays: 2 })))),
    ];
    const running = await conversation(p.id, who, { idleDays: 0, running: true });
    const theirs = await conversation(p.id, p.users.ADMIN.id, { idleDays: 1 });
    await spendRow(p.id, who);

    const people = await owner().people.query({ projectId: p.id });
    expect(people.map((x) => [x.user.id, x.conversations, x.member])).toEqual([
      [who, 6, true],
      [p.users.ADMIN.id, 1, true],
    ]);

    const first = await owner().export.query({ projectId: p.id, userId: who });
    expect(first.header).toMatchObject({ type: 'member', format: 'in-app-agent.member-data', user: { id: who } });
    expect(first.lines).toHaveLength(5);
    expect(first.nextCursor).not.toBeNull();
    const second = await owner().export.query({ projectId: p.id, userId: who, cursor: first.nextCursor! });
    expect(second.header).toBeNull();
    expect(second.nextCursor).toBeNull();
    const lines = [...first.lines, ...second.lines] as Array<Record<string, unknown>>;
    const ids = lines.map((l) => (l.conversation as { id: string }).id);
    expect(ids.sort()).toEqual([...mine, running].map((c) => c.id).sort());
    const text = JSON.stringify(lines);
    expect(text).not.toContain(TOKEN);
    expect(text).toContain(`ghp_${MASK.repeat(36)}`);
    const line = lines.find((l) => (l.conversation as { id: string }).id === mine[0]!.id)!;
    expect(line).toMatchObject({
      type: 'conversation',
      runs: [expect.objectContaining({ id: mine[0]!.runId, status: 'COMPLETED' })],
      events: [expect.objectContaining({ type: 'TEXT_MESSAGE', content: `my key is ghp_${MASK.repeat(36)}` })],
      approvals: [expect.objectContaining({ toolName: 'create_issue' })],
      feedback: [expect.objectContaining({ value: -1 })],
      toolCalls: [expect.objectContaining({ tool: 'create_issue' })],
    });
    // Every line is one JSON value (JSONL).
    for (const l of lines) expect(JSON.parse(JSON.stringify(l))).toEqual(l);

    const deleted = await owner().delete.mutate({ projectId: p.id, userId: who });
    expect(deleted).toEqual({ deleted: 5, running: 1 });
    const left = await prisma.agentConversation.findMany({ where: { projectId: p.id } });
    expect(left.map((c) => c.id).sort()).toEqual([running.id, theirs.id].sort());
    const audits = await prisma.toolCallAudit.findMany({ where: { id: { in: mine.map((c) => c.auditId) } } });
    expect(audits.every((a) => a.argsPreview === '' && a.resultPreview === '')).toBe(true);
    expect(await prisma.agentSpend.count({ where: { projectId: p.id, userId: who } })).toBe(1);
    // A member cannot do it.
    const member = trpcClient(server.url, p.users.MEMBER.cookie).agent.memberData;
    expect(await errorCode(member.delete.mutate({ projectId: p.id, userId: p.users.ADMIN.id }))).toBe('FORBIDDEN');
    expect(await errorCode(member.export.query({ projectId: p.id, userId: p.users.ADMIN.id }))).toBe('FORBIDDEN');
    expect(await prisma.agentConversation.count({ where: { id: theirs.id } })).toBe(1);
  });
});
