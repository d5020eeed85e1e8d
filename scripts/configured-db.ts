/**
 * The database the environment names (PostgreSQL when DATABASE_URL is set, the embedded PGlite
 * under PGLITE_DIR otherwise), opened for a command-line script. An invalid environment ends the
 * process with the validation message, which names every offending variable (a stack trace adds
 * nothing).
 */
import { openDatabase } from '@/server/db';
import { env, type Env } from '@/server/env';

export function openConfiguredDatabase(): { env: Env; db: ReturnType<typeof openDatabase> } {
  let e: Env;
  try {
    e = env();
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
  return { env: e, db: openDatabase({ databaseUrl: e.DATABASE_URL, pgliteDir: e.PGLITE_DIR }) };
}
