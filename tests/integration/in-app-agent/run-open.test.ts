// The statement that opens a run reads who asks (membership, role, the project's name) itself: a
// non-member or a role without the scope gets the refusal, and nothing is locked, counted or written.
import { afterAll, describe, expect, it } from 'vitest';
import { openRunRow } from '@/features/in-app-agent/server/persistence';
import { decodeRunSettings, runSettingsRead } from '@/features/in-app-agent/server/settings-store';
import { closeDb, getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import type { Scope } from '@/server/rbac';
import { createProject, createUser } from '../../helpers/fixtures';

const project = await createProject('Run open');
const prisma = await getPrisma();

afterAll(async () => {
  await closeDb();
});

const open = (userId: string, memberScope: Scope) =>
  openRunRow(prisma, {
    runId: newId('run_'),
    conversationId: newId('cv_'),
    projectId: project.id,
    userId,
    modelId: 'test',
    create: { title: 'Run open' },
    memberScope,
    running: { maxRunning: 3, staleSeconds: 60 },
    perMinute: { key: `agent:run:${userId}`, windowSeconds: 60, limit: 100 },
  });

const traces = async (userId: string) => ({
  conversations: await prisma.agentConversation.count({ where: { userId } }),
  runs: await prisma.agentRun.count({ where: { userId } }),
  counted: await prisma.limitCounter.count({ where: { key: `agent:run:${userId}` } }),
});

describe('the run open statement', () => {
  it("returns the opener's membership with the run", async () => {
    const viewer = project.users.VIEWER;
    const opened = await open(viewer.id, 'agent:use');
    expect(opened?.member).toEqual({
      role: 'VIEWER',
      projectName: 'Run open',
      user: { id: viewer.id, name: expect.any(String), email: expect.any(String), isAdmin: false },
    });
    expect(await traces(viewer.id)).toEqual({ conversations: 1, runs: 1, counted: 1 });
  });

  it('refuses a user who is no member, leaving nothing', async () => {
    const stranger = await createUser('Stranger');
    await expect(open(stranger.id, 'agent:use')).rejects.toMatchObject({ code: 'PROJECT_NOT_FOUND', status: 404 });
    expect(await traces(stranger.id)).toEqual({ conversations: 0, runs: 0, counted: 0 });
  });

  it('refuses a member whose role lacks the scope, leaving nothing', async () => {
    const viewer = project.users.VIEWER;
    const before = await traces(viewer.id);
    // A viewer may use the assistant but not change issues.
    await expect(open(viewer.id, 'issues:write')).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403 });
    expect(await traces(viewer.id)).toEqual(before);
  });
});

describe("the run open statement and the project's assistant settings", () => {
  it('reads the newest tool permissions, instructions and live grants, and records the versions on the run', async () => {
    const p = await createProject('Run open settings');
    const member = p.users.MEMBER;
    const conversationId = newId('cv_');
    const openWithSettings = () =>
      openRunRow(prisma, {
        runId: newId('run_'),
        conversationId,
        projectId: p.id,
        userId: member.id,
        modelId: 'test',
        create: { title: 'Settings' },
        memberScope: 'agent:use',
        reads: [runSettingsRead(p.id, conversationId)],
      });
    const first = await openWithSettings();
    expect(decodeRunSettings(first!.row)).toEqual({
      policy: { version: 0, policy: { cells: {}, rules: {} } },
      instructions: null,
      allowed: [],
    });
    await prisma.agentRun.update({ where: { id: first!.runId }, data: { status: 'COMPLETED' } });

    const policy = { cells: { create_issue: { MEMBER: 'auto' } }, rules: {} };
    for (const version of [1, 2])
      await prisma.agentToolPolicyVersion.create({
        data: { id: newId('tpv_'), projectId: p.id, version, policy: version === 2 ? policy : {}, changes: {} },
      });
    await prisma.agentInstructionsVersion.create({
      data: { id: newId('inv_'), projectId: p.id, version: 1, text: 'Be brief.' },
    });
    const grant = (toolName: string, policyVersion: number, revoked = false) =>
      prisma.agentConversationAllow.create({
        data: {
          id: newId('alw_'),
          conversationId,
          userId: member.id,
          toolName,
          policyVersion,
          ...(revoked ? { revokedAt: new Date() } : {}),
        },
      });
    // Only a grant under the newest version that was not revoked counts.
    await grant('add_comment', 1);
    await grant('close_issue', 2, true);
    await grant('update_issue', 2);
    const second = await openWithSettings();
    expect(decodeRunSettings(second!.row)).toEqual({
      policy: { version: 2, policy },
      instructions: { version: 1, text: 'Be brief.' },
      allowed: ['update_issue'],
    });
    expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: second!.runId } })).toMatchObject({
      policyVersion: 2,
      instructionsVersion: 1,
    });
  });
});
