// The admission of a new run under AGENT_MAX_CONCURRENT_RUNS_PER_USER, at the moment two instances
// open runs for one user: the opening statement waits for the other's per-user lock, and then
// counts the run the other committed meanwhile. Deterministic: a second connection plays the other
// instance, holding the lock with an uncommitted RUNNING run. Without the lock the open would not
// wait (and count 0); counting in the statement's own snapshot (taken before the wait) would miss
// the committed run. PostgreSQL only (the embedded database has one connection).
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRunRow } from '@/features/in-app-agent/server/persistence';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { createProject, type TestProject } from '../../helpers/fixtures';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
let project: TestProject;
let other: pg.Client;

beforeAll(async () => {
  if (!onPostgres) return;
  await getPrisma();
  project = await createProject('Admission');
  other = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await other.connect();
});
afterAll(async () => {
  await other?.end();
});

const open = async (userId: string, maxRunning: number) =>
  openRunRow(await getPrisma(), {
    runId: newId('run_'),
    conversationId: `cv_${randomBytes(8).toString('hex')}`,
    projectId: project.id,
    userId,
    modelId: 'test',
    create: { title: 'admission' },
    running: { maxRunning, staleSeconds: 120 },
  });

describe.skipIf(!onPostgres)('opening a run while another instance opens one for the same user', () => {
  it('waits for the other open and counts the run it committed', async () => {
    const userId = project.users.MEMBER.id;
    const conversationId = `cv_${randomBytes(8).toString('hex')}`;
    await other.query('BEGIN');
    // What the other instance's opening statement does, held open: the lock, then its run.
    await other.query('SELECT pg_advisory_xact_lock(72707371, hashtext($1))', [userId]);
    await other.query(
      `INSERT INTO "AgentConversation" ("id", "projectId", "userId", "title", "lastSeq", "runCount", "createdAt", "updatedAt")
       VALUES ($1, $2, $3, 'other', 10000, 1, now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC')`,
      [conversationId, project.id, userId],
    );
    await other.query(
      `INSERT INTO "AgentRun" ("id", "conversationId", "userId", "status", "startedAt", "lastHeartbeatAt", "selectedAt")
       VALUES ($1, $2, $3, 'RUNNING', now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC', now() AT TIME ZONE 'UTC')`,
      [newId('run_'), conversationId, userId],
    );
    let settled = false;
    const attempt = open(userId, 1).then(
      (opened) => ({ opened, error: null }),
      (error: unknown) => ({ opened: null, error }),
    );
    void attempt.finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(settled, 'the open waits while the other instance holds the lock').toBe(false);
    await other.query('COMMIT');
    const { opened, error } = await attempt;
    expect(opened).toBeNull();
    expect(error).toMatchObject({ code: 'TOO_MANY_RUNS', status: 429, retryAfterSeconds: 5 });
  });

  it('opens when the limit leaves room, and never waits for another user', async () => {
    const userId = project.users.MEMBER.id;
    await other.query('BEGIN');
    await other.query('SELECT pg_advisory_xact_lock(72707371, hashtext($1))', [userId]);
    try {
      const someoneElse = await open(project.users.ADMIN.id, 1);
      expect(someoneElse?.created).toBe(true);
    } finally {
      await other.query('ROLLBACK');
    }
    expect((await open(userId, 5))?.created).toBe(true);
  });
});
