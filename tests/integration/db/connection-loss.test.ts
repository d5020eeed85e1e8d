// The app's PostgreSQL pool outlives the server ending its idle connections (a restart, a failover,
// an administrator): the process keeps running and the next query gets a fresh connection. An
// ended idle connection without an error listener on the pool would be an uncaught exception that
// stops the app (and fails this run with an unhandled error). The pool is also used directly (the
// migration applier's sessions), before and without Prisma's own listener.
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '@/server/db';
import { adminUrl } from './empty-database';

describe.runIf(adminUrl)('losing idle PostgreSQL connections', () => {
  it('keeps the process up and serves the next query on a new connection', async () => {
    const db = openDatabase({ databaseUrl: process.env.DATABASE_URL });
    try {
      await migrate(db);
      // Several sessions at once, so the pool holds several idle connections afterwards.
      const names = await Promise.all(
        Array.from({ length: 3 }, () =>
          db.withSession(
            async (s) =>
              (await s.query<{ db: string }>('SELECT current_database() AS db, pg_sleep(0.05)::text AS slept')).rows[0]!
                .db,
          ),
        ),
      );
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        const ended = await admin.query<{ n: string }>(
          'SELECT count(pg_terminate_backend(pid))::text AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
          [names[0]],
        );
        expect(Number(ended.rows[0]!.n)).toBeGreaterThanOrEqual(3);
      } finally {
        await admin.end();
      }
      // Let the pool hear about the ended connections.
      await new Promise((r) => setTimeout(r, 200));

      const rows = await db.withSession((s) => s.query<{ alive: number }>('SELECT 1 AS alive'));
      expect(rows.rows[0]!.alive).toBe(1);
      expect(await db.prisma.user.count()).toBeGreaterThanOrEqual(0);
    } finally {
      await db.close();
    }
  });
});
