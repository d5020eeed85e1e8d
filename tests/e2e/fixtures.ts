/**
 * Conversations the browser tests need that would take minutes to create through the panel (and
 * more runs than the per-user rate limit allows), written with the module's own persistence before
 * the server starts (the embedded database belongs to one process at a time). Run by
 * global-setup.ts with the server's environment, after the database is migrated and seeded.
 */
import { openRunRow, RunRecorder } from '@/features/in-app-agent/server/persistence';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { newId } from '@/server/ids';
import { DEMO_PROJECT_SLUG } from '@/server/seed';
import { openConfiguredDatabase } from '../../scripts/configured-db';
import { BUDGET_PROJECT, LONG_CONVERSATION as LONG } from './fixture-data';

const { db } = openConfiguredDatabase();
try {
  const prisma = db.prisma;
  const [user, project] = await Promise.all([
    prisma.user.findUnique({ where: { email: LONG.owner } }),
    prisma.project.findUnique({ where: { slug: DEMO_PROJECT_SLUG } }),
  ]);
  if (!user || !project) throw new Error(`the demo data is missing (${LONG.owner}, ${DEMO_PROJECT_SLUG})`);
  if (await prisma.agentConversation.findUnique({ where: { id: LONG.id } })) {
    console.log(`Fixture "${LONG.title}" exists already.`);
  } else {
    for (let n = 1; n <= LONG.turns; n++) {
      const runId = newId('run_');
      const opened = await openRunRow(prisma, {
        runId,
        conversationId: LONG.id,
        projectId: project.id,
        userId: user.id,
        modelId: 'demo',
        ...(n === 1 ? { create: { title: LONG.title } } : {}),
      });
      if (!opened) throw new Error(`could not open turn ${n}`);
      const recorder = new RunRecorder(prisma, LONG.id, runId, opened);
      const question = newId('msg_');
      const answer = newId('msg_');
      const events: AgentEvent[] = [
        { type: 'RUN_STARTED', threadId: LONG.id, runId },
        { type: 'TEXT_MESSAGE_START', messageId: question, role: 'user' },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: question, delta: LONG.question(n) },
        { type: 'TEXT_MESSAGE_END', messageId: question },
        { type: 'TEXT_MESSAGE_START', messageId: answer, role: 'assistant' },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: answer, delta: LONG.answer(n) },
        { type: 'TEXT_MESSAGE_END', messageId: answer },
        { type: 'RUN_FINISHED', threadId: LONG.id, runId, outcome: { type: 'success' } },
      ];
      for (const event of events) recorder.record(event);
      const usage = { inputTokens: 100 + n, outputTokens: 4 };
      await recorder.finish({ status: 'COMPLETED', outcome: { type: 'success' } }, usage);
    }
    console.log(`Fixture "${LONG.title}" written (${LONG.turns} turns of ${LONG.owner}).`);
  }
  // A project of its own for the budget and waiting tests.
  if (!(await prisma.project.findUnique({ where: { slug: BUDGET_PROJECT.slug } }))) {
    const [owner, member] = await Promise.all(
      [BUDGET_PROJECT.owner, BUDGET_PROJECT.member].map((email) => prisma.user.findUniqueOrThrow({ where: { email } })),
    );
    const projectId = newId('p_');
    await prisma.project.create({ data: { id: projectId, slug: BUDGET_PROJECT.slug, name: BUDGET_PROJECT.name } });
    await prisma.projectMembership.createMany({
      data: [
        { id: newId('m_'), projectId, userId: owner!.id, role: 'OWNER' },
        { id: newId('m_'), projectId, userId: member!.id, role: 'MEMBER' },
      ],
    });
    console.log(`Fixture project "${BUDGET_PROJECT.name}" written.`);
  }
} catch (err) {
  process.stderr.write(`Writing the browser-test fixtures failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await db.close().catch(() => undefined);
}
