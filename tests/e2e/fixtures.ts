/**
 * Conversations the browser tests need that would take minutes to create through the panel (and
 * more runs than the per-user rate limit allows): one longer than a page of the panel, one longer
 * than a page of the assistant review, written with the module's own persistence before
 * the server starts (the embedded database belongs to one process at a time). Run by
 * global-setup.ts with the server's environment, after the database is migrated and seeded.
 */
import { openRunRow, RunRecorder } from '@/features/in-app-agent/server/persistence';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { newId } from '@/server/ids';
import { DEMO_PROJECT_SLUG } from '@/server/seed';
import { openConfiguredDatabase } from '../../scripts/configured-db';
import { BUDGET_PROJECT, LONG_CONVERSATION as LONG, REVIEW_CONVERSATION as REVIEW } from './fixture-data';

type Prisma = ReturnType<typeof openConfiguredDatabase>['db']['prisma'];

type ConversationFixture = typeof LONG | typeof REVIEW;

/** Writes a conversation of `turns` answered questions, unless it exists. */
async function writeConversation(prisma: Prisma, projectId: string, c: ConversationFixture): Promise<void> {
  if (await prisma.agentConversation.findUnique({ where: { id: c.id } })) {
    console.log(`Fixture "${c.title}" exists already.`);
    return;
  }
  const user = await prisma.user.findUnique({ where: { email: c.owner } });
  if (!user) throw new Error(`the demo data is missing (${c.owner})`);
  for (let n = 1; n <= c.turns; n++) {
    const runId = newId('run_');
    const opened = await openRunRow(prisma, {
      runId,
      conversationId: c.id,
      projectId,
      userId: user.id,
      modelId: 'demo',
      ...(n === 1 ? { create: { title: c.title } } : {}),
    });
    if (!opened) throw new Error(`could not open turn ${n} of "${c.title}"`);
    const recorder = new RunRecorder(prisma, c.id, runId, opened);
    const question = newId('msg_');
    const answer = newId('msg_');
    const events: AgentEvent[] = [
      { type: 'RUN_STARTED', threadId: c.id, runId },
      { type: 'TEXT_MESSAGE_START', messageId: question, role: 'user' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: question, delta: c.question(n) },
      { type: 'TEXT_MESSAGE_END', messageId: question },
      { type: 'TEXT_MESSAGE_START', messageId: answer, role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: answer, delta: c.answer(n) },
      { type: 'TEXT_MESSAGE_END', messageId: answer },
      { type: 'RUN_FINISHED', threadId: c.id, runId, outcome: { type: 'success' } },
    ];
    for (const event of events) recorder.record(event);
    const usage = { inputTokens: 100 + n, outputTokens: 4 };
    await recorder.finish({ status: 'COMPLETED', outcome: { type: 'success' } }, usage);
  }
  console.log(`Fixture "${c.title}" written (${c.turns} turns of ${c.owner}).`);
}

const { db } = openConfiguredDatabase();
try {
  const prisma = db.prisma;
  const project = await prisma.project.findUnique({ where: { slug: DEMO_PROJECT_SLUG } });
  if (!project) throw new Error(`the demo data is missing (${DEMO_PROJECT_SLUG})`);
  await writeConversation(prisma, project.id, LONG);
  await writeConversation(prisma, project.id, REVIEW);
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
