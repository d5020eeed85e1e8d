// Gives every test file its own empty, migrated database: a fresh database on the PostgreSQL
// server named by TEST_DATABASE_URL when set (CI), an in-memory PGlite otherwise.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll } from 'vitest';
import { stopStaleSweep } from '@/features/in-app-agent/server/persistence';
import { setRunOptions } from '@/features/in-app-agent/server/run-deps';
import { stopTakeovers } from '@/features/in-app-agent/server/takeover-state';
import { closeDb } from '@/server/db';
import { resetEnvCache } from '@/server/env';

// Files share a worker's process (vitest.config.ts): each starts from the environment the worker
// started with, whatever the files before it set, and parses it again.
const startEnv = ((globalThis as { __testStartEnv?: NodeJS.ProcessEnv }).__testStartEnv ??= { ...process.env });
for (const k of Object.keys(process.env)) if (!(k in startEnv)) delete process.env[k];
Object.assign(process.env, startEnv);
// And with the run options of the app's own route (none), not those of a handler an earlier file
// made (its model or MCP server closed with that file): the app's route module stays loaded
// between files, so it would not set them again.
setRunOptions({});

const adminUrl = process.env.TEST_DATABASE_URL;
let dbName: string | undefined;

if (adminUrl) {
  dbName = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${dbName}"`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${dbName}`;
  process.env.DATABASE_URL = url.toString();
} else {
  delete process.env.DATABASE_URL;
  process.env.PGLITE_DIR = 'memory://';
}
process.env.AUTO_SEED = '0';
resetEnvCache();

afterAll(async () => {
  // The assistant's periodic sweep would reopen the database after it is closed.
  stopStaleSweep();
  stopTakeovers();
  await closeDb();
  if (adminUrl && dbName) {
    const admin = new pg.Client({ connectionString: adminUrl });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    await admin.end();
  }
});
