// The migration applier (src/server/migrate.ts) on a real empty database: it applies the project's
// migrations once, records them exactly like Prisma, refuses edited or half-applied history, rolls
// back a failing migration, and serializes concurrent appliers.
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  applyMigrations,
  defaultMigrationsDir,
  MigrationError,
  readMigrations,
  type SqlSession,
} from '@/server/migrate';
import { adminUrl, openEmptyDatabase, type EmptyDatabase } from './empty-database';

interface MigrationRow {
  id: string;
  checksum: string;
  migration_name: string;
  logs: string | null;
  started_at: Date;
  finished_at: Date | null;
  rolled_back_at: Date | null;
  applied_steps_count: number;
}

async function recorded(s: SqlSession): Promise<MigrationRow[]> {
  const { rows } = await s.query<MigrationRow>('SELECT * FROM "_prisma_migrations" ORDER BY migration_name');
  return rows;
}

async function tableExists(s: SqlSession, name: string): Promise<boolean> {
  const { rows } = await s.query<{ t: string | null }>('SELECT to_regclass($1)::text AS t', [`"${name}"`]);
  return rows[0]?.t != null;
}

async function failure(p: Promise<unknown>): Promise<MigrationError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof MigrationError)) throw new Error(`expected a MigrationError, got ${String(err)}`);
  return err;
}

/** A temporary migrations folder in Prisma's layout: <dir>/<name>/migration.sql. */
function tempMigrations(files: Record<string, string>): { dir: string; write(name: string, sql: string): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
  const write = (name: string, sql: string) => {
    mkdirSync(path.join(dir, name), { recursive: true });
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  };
  for (const [name, sql] of Object.entries(files)) write(name, sql);
  tempDirs.push(dir);
  return { dir, write };
}

const tempDirs: string[] = [];
afterEach(() => {
  while (tempDirs.length) rmSync(tempDirs.pop()!, { recursive: true, force: true });
});

let schemaCounter = 0;
/**
 * Points the session at a new, empty schema: its own `_prisma_migrations` and tables, so the cases
 * below start from nothing without paying for a new database each.
 */
async function freshSchema(s: SqlSession): Promise<void> {
  schemaCounter += 1;
  const name = `case_${schemaCounter}`;
  await s.exec(`CREATE SCHEMA "${name}"; SET search_path TO "${name}"`);
}

// One empty database for the file: the project migrations go to its default schema first, then
// each case of the second group works in a schema of its own.
let db: EmptyDatabase;
beforeAll(async () => {
  db = await openEmptyDatabase();
});
afterAll(async () => {
  await db?.close();
});

describe('applying the project migrations to an empty database', () => {
  const names: string[] = [];
  beforeAll(async () => {
    for (const m of await readMigrations(defaultMigrationsDir())) names.push(m.name);
  });

  it('applies every migration in order and records each one like Prisma', async () => {
    expect(names.length).toBeGreaterThan(0);
    const res = await applyMigrations(db.session, await readMigrations());
    expect(res.applied).toEqual(names);
    expect(res.skipped).toEqual([]);

    const rows = await recorded(db.session);
    expect(rows.map((r) => r.migration_name)).toEqual(names);
    for (const r of rows) {
      // Prisma's checksum is the sha256 of the file's bytes, hex encoded.
      const bytes = readFileSync(path.join(defaultMigrationsDir(), r.migration_name, 'migration.sql'));
      expect(r.checksum).toBe(createHash('sha256').update(bytes).digest('hex'));
      expect(r.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(r.finished_at).toBeInstanceOf(Date);
      expect(r.finished_at!.getTime()).toBeGreaterThanOrEqual(r.started_at.getTime());
      expect(r.rolled_back_at).toBeNull();
      expect(r.logs).toBeNull();
      expect(Number(r.applied_steps_count)).toBe(1);
    }
    for (const t of ['User', 'Project', 'Issue', 'AgentRun', 'AgentEvent'])
      expect(await tableExists(db.session, t)).toBe(true);
  });

  it("keeps Prisma's folder layout: migration_lock.toml beside the migration folders, read as no migration", async () => {
    const dir = defaultMigrationsDir();
    const lock = readFileSync(path.join(dir, 'migration_lock.toml'), 'utf8');
    expect(lock).toMatch(/^provider = "postgresql"$/m);
    const folders = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(names).toEqual(folders);
    expect(names).not.toContain('migration_lock.toml');
    for (const n of names) expect(n).toMatch(/^\d{14}_\w+$/);
    // Any other stray file in the folder is ignored too.
    const tmp = tempMigrations({ '20990101000000_a': 'SELECT 1;' });
    writeFileSync(path.join(tmp.dir, 'migration_lock.toml'), lock);
    writeFileSync(path.join(tmp.dir, 'README.md'), 'notes');
    expect((await readMigrations(tmp.dir)).map((m) => m.name)).toEqual(['20990101000000_a']);
  });

  it('applies nothing the second time', async () => {
    const before = await recorded(db.session);
    const res = await applyMigrations(db.session, await readMigrations());
    expect(res.applied).toEqual([]);
    expect(res.skipped).toEqual(names);
    expect(await recorded(db.session)).toEqual(before);
  });

  it('lets only one RUNNING run exist per conversation (partial unique index)', async () => {
    const s = db.session;
    await s.query(`INSERT INTO "User" (id, email, name, "updatedAt") VALUES ('u1', 'u1@test.local', 'U', now())`);
    await s.query(`INSERT INTO "Project" (id, slug, name, "updatedAt") VALUES ('p1', 'p1', 'P', now())`);
    for (const c of ['c1', 'c2']) {
      await s.query(
        `INSERT INTO "AgentConversation" (id, "projectId", "userId", "updatedAt") VALUES ($1, 'p1', 'u1', now())`,
        [c],
      );
    }
    const run = (id: string, conversation: string, status: string) =>
      s.query(
        `INSERT INTO "AgentRun" (id, "conversationId", "userId", status) VALUES ($1, $2, 'u1', $3::"AgentRunStatus")`,
        [id, conversation, status],
      );

    await run('r1', 'c1', 'RUNNING');
    const err = (await run('r2', 'c1', 'RUNNING').then(
      () => undefined,
      (e: unknown) => e,
    )) as { code?: string; message?: string; constraint?: string } | undefined;
    expect(err, 'a second RUNNING run in the same conversation must be refused').toBeDefined();
    expect(err!.code).toBe('23505'); // unique_violation
    expect(`${err!.constraint ?? ''} ${err!.message ?? ''}`).toContain('AgentRun_one_running_per_conversation');

    // Finished runs do not count, other conversations are independent.
    await run('r3', 'c1', 'COMPLETED');
    await run('r4', 'c1', 'FAILED');
    await run('r5', 'c2', 'RUNNING');
    // Once the running one finishes, a new run may start.
    await s.query(`UPDATE "AgentRun" SET status = 'COMPLETED' WHERE id = 'r1'`);
    await run('r6', 'c1', 'RUNNING');
    const { rows } = await s.query<{ id: string }>(`SELECT id FROM "AgentRun" WHERE status = 'RUNNING' ORDER BY id`);
    expect(rows.map((r) => r.id)).toEqual(['r5', 'r6']);
  });
});

describe('refusing unsafe history', () => {
  const emptyDb = async (): Promise<EmptyDatabase> => {
    await freshSchema(db.session);
    return db;
  };

  it('refuses a migration whose file changed after it was applied, and runs nothing else', async () => {
    await emptyDb();
    const m = tempMigrations({ '001_first': 'CREATE TABLE "first" (id int);' });
    expect((await applyMigrations(db.session, await readMigrations(m.dir))).applied).toEqual(['001_first']);

    m.write('001_first', 'CREATE TABLE "first" (id int, extra text);');
    m.write('002_second', 'CREATE TABLE "second" (id int);');
    const err = await failure(applyMigrations(db.session, await readMigrations(m.dir)));
    expect(err.code).toBe('CHECKSUM_MISMATCH');
    expect(err.message).toContain('001_first');

    expect(await tableExists(db.session, 'second')).toBe(false);
    expect((await recorded(db.session)).map((r) => r.migration_name)).toEqual(['001_first']);
  });

  it('rolls back a failing migration, reports it, stops there, and succeeds once it is fixed', async () => {
    await emptyDb();
    const m = tempMigrations({
      '001_ok': 'CREATE TABLE "ok" (id int);',
      '002_bad': 'CREATE TABLE "half" (id int);\nINSERT INTO "no_such_table" VALUES (1);',
      '003_after': 'CREATE TABLE "after" (id int);',
    });
    const err = await failure(applyMigrations(db.session, await readMigrations(m.dir)));
    expect(err.code).toBe('MIGRATION_FAILED');
    expect(err.message).toContain('002_bad');
    expect(err.message).toContain('no_such_table');

    expect(await tableExists(db.session, 'ok')).toBe(true);
    expect(await tableExists(db.session, 'half')).toBe(false); // the failed migration left nothing behind
    expect(await tableExists(db.session, 'after')).toBe(false); // later migrations did not run
    expect((await recorded(db.session)).map((r) => r.migration_name)).toEqual(['001_ok']);

    m.write('002_bad', 'CREATE TABLE "half" (id int);');
    const res = await applyMigrations(db.session, await readMigrations(m.dir));
    expect(res).toEqual({ applied: ['002_bad', '003_after'], skipped: ['001_ok'] });
    expect(await tableExists(db.session, 'after')).toBe(true);
  });

  it('refuses to continue after a migration that started but never finished', async () => {
    await emptyDb();
    const m = tempMigrations({
      '001_first': 'CREATE TABLE "first" (id int);',
      '002_second': 'CREATE TABLE "second" (id int);',
    });
    await applyMigrations(db.session, (await readMigrations(m.dir)).slice(0, 1));
    // What a crash half-way through a non-transactional `prisma migrate deploy` leaves behind.
    await db.session.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, applied_steps_count) VALUES ($1, $2, '002_second', now(), 0)`,
      [randomUUID(), (await readMigrations(m.dir))[1]!.checksum],
    );
    const err = await failure(applyMigrations(db.session, await readMigrations(m.dir)));
    expect(err.code).toBe('FAILED_MIGRATION');
    expect(err.message).toContain('002_second');
    expect(await tableExists(db.session, 'second')).toBe(false);
  });

  it('refuses a database that has migrations this checkout does not know', async () => {
    await emptyDb();
    const m = tempMigrations({ '001_first': 'SELECT 1;', '002_newer': 'SELECT 2;' });
    await applyMigrations(db.session, await readMigrations(m.dir));
    const err = await failure(applyMigrations(db.session, (await readMigrations(m.dir)).slice(0, 1)));
    expect(err.code).toBe('UNKNOWN_MIGRATION');
    expect(err.message).toContain('002_newer');
  });
});

describe('concurrent appliers', () => {
  it('apply each migration exactly once when two connections migrate at the same time', async (ctx) => {
    if (!adminUrl) {
      ctx.skip(
        'needs TEST_DATABASE_URL: PGlite is one in-process connection, so two appliers cannot race on it (CI runs this on PostgreSQL)',
      );
    }
    const own = await openEmptyDatabase();
    onTestFinished(() => own.close());
    const a = await own.connect();
    const b = await own.connect();
    // A slow migration first widens the window in which the second applier would step in.
    const m = tempMigrations({ '000_slow': 'SELECT pg_sleep(0.5);\nCREATE TABLE "counter" (n int);' });
    for (const real of await readMigrations()) m.write(real.name, real.sql);
    m.write('999_tail', 'INSERT INTO "counter" VALUES (1);');
    const migrations = await readMigrations(m.dir);

    const [ra, rb] = await Promise.all([
      applyMigrations(a.session, migrations),
      applyMigrations(b.session, migrations),
    ]);
    const all = migrations.map((x) => x.name);
    // One applier did everything, the other found it done.
    expect([...ra.applied, ...rb.applied].sort()).toEqual(all);
    expect([ra.applied.length, rb.applied.length].sort()).toEqual([0, all.length]);
    expect([...ra.skipped, ...rb.skipped].sort()).toEqual(all);

    const rows = await recorded(own.session);
    expect(rows.map((r) => r.migration_name)).toEqual(all);
    const { rows: counter } = await own.session.query<{ c: number }>('SELECT count(*)::int AS c FROM "counter"');
    expect(counter[0]!.c).toBe(1); // the tail migration ran once
  });
});
