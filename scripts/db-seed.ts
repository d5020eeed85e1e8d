/**
 * `npm run db:seed`: applies pending migrations, then creates the demo project (users of every
 * role, labels, issues, comments) in one transaction. Running it again adds nothing. The demo
 * accounts share a published password: for local use only.
 */
import { migrate } from '@/server/db';
import { openConfiguredDatabase } from './configured-db';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from '@/server/seed';

const { db } = openConfiguredDatabase();
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
