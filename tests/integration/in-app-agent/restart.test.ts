// A run left RUNNING by a previous process (a restart mid-answer) does not block the conversation
// on the embedded database, where one process owns the data; on PostgreSQL, where other instances
// may still be streaming, it waits for the stale window as usual.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getDb } from '@/server/db';
import { newId } from '@/server/ids';
import { postAgent, userMessageBody } from '../../helpers/agent';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer | undefined;
let project: TestProject;
beforeAll(async () => {
  delete process.env.AGENT_MODEL_PROVIDER;
  project = await createProject('Restart');
});
afterAll(() => server?.close());

it('closes runs left RUNNING by a previous process when this one starts', async () => {
  const db = await getDb();
  const member = project.users.MEMBER;
  const conversation = await db.prisma.agentConversation.create({
    data: { id: newId('cv_'), projectId: project.id, userId: member.id, title: 'before restart' },
  });
  const orphan = await db.prisma.agentRun.create({
    data: {
      id: newId('run_'),
      conversationId: conversation.id,
      userId: member.id,
      status: 'RUNNING',
      lastHeartbeatAt: new Date(),
    },
  });
  // This process starts serving (its services start, as at boot) after the previous one left the run.
  server = await startTestServer();
  const res = await postAgent(server.url, project.id, member.cookie, userMessageBody('hello again', conversation.id));
  const after = await db.prisma.agentRun.findUniqueOrThrow({ where: { id: orphan.id } });
  if (db.kind === 'pglite') {
    expect(res.status).toBe(200);
    expect(after).toMatchObject({ status: 'FAILED', errorCode: 'RUN_STALE' });
  } else {
    expect(res.status).toBe(409);
    expect(res.error?.code).toBe('RUN_IN_PROGRESS');
    expect(after.status).toBe('RUNNING');
  }
});
