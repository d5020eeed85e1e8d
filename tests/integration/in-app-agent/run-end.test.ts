// A run's last statement (RunRecorder.finish): it writes the rows still open together with the
// run's end and the revocation of its key, only while the run is still RUNNING, and a row the
// database refuses never keeps the run open.
import { afterAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { openRunRow, RunRecorder } from '@/features/in-app-agent/server/persistence';
import { agentKeyMaterial } from '@/server/api-keys';
import { closeDb, getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { createProject } from '../../helpers/fixtures';
import { captureLog } from '../../helpers/log-capture';

const project = await createProject('Run end');
const prisma = await getPrisma();

afterAll(async () => {
  await closeDb();
});

/** An open run with its key, and a recorder that has seen a user message (`settle`: written). */
async function openRun({ settle = true } = {}) {
  const runId = newId('run_');
  const key = agentKeyMaterial(runId, 600);
  const opened = await openRunRow(prisma, {
    runId,
    conversationId: newId('cv_'),
    projectId: project.id,
    userId: project.users.MEMBER.id,
    modelId: 'test',
    create: { title: 'Run end' },
    key: key.row,
  });
  if (!opened) throw new Error('could not open a run');
  const recorder = new RunRecorder(prisma, opened.conversationId, runId, opened);
  const user = newId('msg_');
  for (const e of [
    { type: 'RUN_STARTED', threadId: opened.conversationId, runId },
    { type: 'TEXT_MESSAGE_START', messageId: user, role: 'user' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: user, delta: 'Hello?' },
    { type: 'TEXT_MESSAGE_END', messageId: user },
  ] as AgentEvent[])
    recorder.record(e);
  if (settle) await recorder.settle();
  return { runId, conversationId: opened.conversationId, keyId: key.row.id, recorder };
}

/** The answer and the terminal event, not yet written when the run ends. */
function answer(recorder: RunRecorder, text: string, runId: string, conversationId: string) {
  const id = newId('msg_');
  for (const e of [
    { type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: text },
    { type: 'RUN_FINISHED', threadId: conversationId, runId, outcome: { type: 'success' } },
  ] as AgentEvent[])
    recorder.record(e);
}

const rowsOf = async (runId: string) =>
  (await prisma.agentEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' } })).map(
    (r) => r.payload as { type: string; role?: string; content?: string },
  );

describe("a run's last statement", () => {
  it('writes the rows still open, the end and the key revocation as one statement', async () => {
    const { runId, conversationId, keyId, recorder } = await openRun();
    answer(recorder, 'Hi.', runId, conversationId);
    const before = recorder.statements;
    expect(await recorder.finish({ status: 'COMPLETED', outcome: { type: 'success' } })).toBe(true);
    expect(recorder.statements - before).toBe(1);
    const rows = await rowsOf(runId);
    expect(rows.map((r) => [r.type, r.role ?? null])).toEqual([
      ['RUN_STARTED', null],
      ['TEXT_MESSAGE', 'user'],
      ['TEXT_MESSAGE', 'assistant'],
      ['RUN_FINISHED', null],
    ]);
    expect(rows[2]!.content).toBe('Hi.');
    expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: 'COMPLETED' });
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).not.toBeNull();
  });

  it('writes none of them when the run was closed elsewhere meanwhile (and still revokes the key)', async () => {
    const { runId, conversationId, keyId, recorder } = await openRun();
    answer(recorder, 'Too late.', runId, conversationId);
    // The stale sweep of another instance closes the run between its last write and its end.
    await prisma.agentRun.update({ where: { id: runId }, data: { status: 'FAILED', errorCode: 'RUN_STALE' } });
    await recorder.finish({ status: 'COMPLETED', outcome: { type: 'success' } });
    expect((await rowsOf(runId)).map((r) => r.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE']);
    expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({
      status: 'FAILED',
      errorCode: 'RUN_STALE',
    });
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).not.toBeNull();
  });

  it('closes the run even when the database refuses one of those rows', async () => {
    const { runId, conversationId, keyId, recorder } = await openRun();
    // jsonb cannot store U+0000: the model's text reaches the row as written.
    answer(recorder, 'nul \u0000 inside', runId, conversationId);
    const log = captureLog();
    try {
      expect(await recorder.finish({ status: 'COMPLETED', outcome: { type: 'success' } })).toBe(true);
    } finally {
      log.stop();
    }
    // Logged, not swallowed: with the run's id and what was left out, never the text itself.
    expect(log.events('run.rows_refused')).toEqual([expect.objectContaining({ level: 'error', runId, rows: 2 })]);
    expect(JSON.stringify(log.lines)).not.toContain('inside');
    expect(await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } })).toMatchObject({ status: 'COMPLETED' });
    expect((await rowsOf(runId)).map((r) => r.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE']);
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: keyId } })).revokedAt).not.toBeNull();
  });

  it('is the only write of a short answer; a message that ended is written soon while the run goes on', async () => {
    const short = await openRun({ settle: false });
    answer(short.recorder, 'Quick.', short.runId, short.conversationId);
    await short.recorder.finish({ status: 'COMPLETED', outcome: { type: 'success' } });
    expect(short.recorder.statements).toBe(1);
    expect((await rowsOf(short.runId)).map((r) => r.type)).toEqual([
      'RUN_STARTED',
      'TEXT_MESSAGE',
      'TEXT_MESSAGE',
      'RUN_FINISHED',
    ]);

    const long = await openRun({ settle: false });
    // The user's message is stored while the answer is still being written (within writeDelayMs).
    await new Promise((r) => setTimeout(r, 200));
    expect((await rowsOf(long.runId)).map((r) => r.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE']);
    expect(long.recorder.statements).toBe(1);
    answer(long.recorder, 'Later.', long.runId, long.conversationId);
    await long.recorder.finish({ status: 'COMPLETED', outcome: { type: 'success' } });
    expect(long.recorder.statements).toBe(2);
  });
});
