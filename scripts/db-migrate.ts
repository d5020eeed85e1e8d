/**
 * `npm run db:migrate`: applies pending migrations to the configured database (PostgreSQL when
 * DATABASE_URL is set, the embedded PGlite otherwise) and reports what it applied. Nothing else:
 * no demo data is seeded here (`npm run db:seed` does that).
 */
import { migrate } from '@/server/db';
import { openConfiguredDatabase } from './configured-db';

const { db } = openConfiguredDatabase();
try {
  const applied = await migrate(db);
  console.log(JSON.stringify({ database: db.kind, applied, appliedNow: applied.length, status: 'up to date' }));
} catch (err) {
  process.stderr.write(`Migration failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await db.close().catch(() => undefined);
}
