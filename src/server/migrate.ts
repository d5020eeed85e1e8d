import 'server-only';
import { createHash, randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';

/** Minimal SQL surface the applier needs; implemented over `pg` and over PGlite. */
export interface SqlSession {
  query<T = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: T[] }>;
  /** Runs a script of several statements without parameters. */
  exec(sql: string): Promise<void>;
}

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

export class MigrationError extends Error {
  constructor(
    readonly code: 'CHECKSUM_MISMATCH' | 'FAILED_MIGRATION' | 'MIGRATION_FAILED' | 'UNKNOWN_MIGRATION',
    message: string,
  ) {
    super(message);
    this.name = 'MigrationError';
  }
}

/** Same key Prisma's migrate engine uses, so the two never run at once on one database. */
const MIGRATION_LOCK_KEY = 72707369;

export function defaultMigrationsDir(): string {
  return path.join(/* turbopackIgnore: true */ process.cwd(), 'prisma', 'migrations');
}

function checksum(sql: string): string {
  return createHash('sha256').update(sql).digest('hex');
}

export async function readMigrations(dir = defaultMigrationsDir()): Promise<MigrationFile[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const out: MigrationFile[] = [];
  for (const name of names) {
    const sql = await readFile(path.join(dir, name, 'migration.sql'), 'utf8');
    out.push({ name, sql, checksum: checksum(sql) });
  }
  return out;
}

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`;

interface AppliedRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
  rolled_back_at: Date | null;
}

export interface ApplyResult {
  applied: string[];
  skipped: string[];
}

/**
 * Applies pending migrations in name order, each in its own transaction, recording them in
 * `_prisma_migrations` as Prisma does. Holds a session-level advisory lock for the whole pass, so
 * two processes starting at once apply each migration exactly once. Refuses to continue when an
 * applied migration's file changed (checksum) or an earlier attempt failed half-way.
 */
export async function applyMigrations(session: SqlSession, migrations: MigrationFile[]): Promise<ApplyResult> {
  await session.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await session.exec(CREATE_TABLE);
    const { rows } = await session.query<AppliedRow>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations" ORDER BY started_at',
    );
    const byName = new Map<string, AppliedRow>();
    for (const r of rows) if (!r.rolled_back_at) byName.set(r.migration_name, r);
    const known = new Set(migrations.map((m) => m.name));
    for (const r of byName.values()) {
      if (!known.has(r.migration_name)) {
        throw new MigrationError(
          'UNKNOWN_MIGRATION',
          `Migration ${r.migration_name} is recorded in the database but missing from prisma/migrations.`,
        );
      }
    }
    const result: ApplyResult = { applied: [], skipped: [] };
    for (const m of migrations) {
      const row = byName.get(m.name);
      if (row && row.finished_at === null) {
        throw new MigrationError(
          'FAILED_MIGRATION',
          `Migration ${m.name} started but never finished; resolve it by hand before migrating again.`,
        );
      }
      if (row) {
        if (row.checksum !== m.checksum) {
          throw new MigrationError(
            'CHECKSUM_MISMATCH',
            `Migration ${m.name} was modified after it was applied (checksum ${row.checksum.slice(0, 12)}… != ${m.checksum.slice(0, 12)}…). Add a new migration instead.`,
          );
        }
        result.skipped.push(m.name);
        continue;
      }
      await session.exec('BEGIN');
      try {
        await session.exec(m.sql);
        await session.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
           VALUES ($1, $2, $3, now(), now(), 1)`,
          [randomUUID(), m.checksum, m.name],
        );
        await session.exec('COMMIT');
      } catch (err) {
        await session.exec('ROLLBACK').catch(() => undefined);
        throw new MigrationError('MIGRATION_FAILED', `Migration ${m.name} failed: ${(err as Error).message}`);
      }
      result.applied.push(m.name);
    }
    return result;
  } finally {
    await session.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
  }
}
