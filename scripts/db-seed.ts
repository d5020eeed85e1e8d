/**
 * `npm run db:seed`: applies pending migrations, then creates the demo project (users of every
 * role, labels, issues, comments) in one transaction. Running it again adds nothing. The demo
 * accounts share a published password: for local use only.
 */
import { migrate, openDatabase } from '@/server/db';
import { env } from '@/server/env';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from '@/server/seed';

let e: ReturnType<typeof env>;
try {
  e = env();
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}

const db = openDatabase({ databaseUrl: e.DATABASE_URL, pgliteDir: e.PGLITE_DIR });
try {
  await migrate(db);
  const { projectId } = await seedDemo(db.prisma);
  console.log(`Seeded demo project ${projectId} on ${db.kind}.`);
  console.log(`Demo users (local use only), password "${DEMO_PASSWORD}":`);
  for (const u of DEMO_USERS) console.log(`  ${u.role.padEnd(6)} ${u.email}`);
} catch (err) {
  process.stderr.write(`Seeding failed: ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await db.close().catch(() => undefined);
}
