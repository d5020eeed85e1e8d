import { closeDb, getDb } from '@/server/db';
import { DEMO_PASSWORD, DEMO_USERS, seedDemo } from '@/server/seed';

const db = await getDb();
const { projectId } = await seedDemo(db.prisma);
console.log(`Seeded demo project ${projectId} on ${db.kind}.`);
console.log(`Demo users (local use only), password "${DEMO_PASSWORD}":`);
for (const u of DEMO_USERS) console.log(`  ${u.role.padEnd(6)} ${u.email}`);
await closeDb();
