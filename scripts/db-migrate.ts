import { closeDb, getDb, migrate } from '@/server/db';

const db = await getDb(); // opening applies pending migrations
const applied = await migrate(db);
console.log(JSON.stringify({ database: db.kind, appliedNow: applied.length, status: 'up to date' }));
await closeDb();
