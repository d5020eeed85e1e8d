// The statement that opens a run reads who asks (membership, role, the project's name) itself: a
// non-member or a role without the scope gets the refusal, and nothing is locked, counted or written.
import { afterAll, describe, expect, it } from 'vitest';
import { openRunRow } from '@/features/in-app-agent/server/persistence';
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
