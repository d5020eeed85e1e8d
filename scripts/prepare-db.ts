/**
 * Prepares the database before the app starts (`npm run dev`, `npm start`, the browser tests):
 * opens it (embedded PGlite under PGLITE_DIR when DATABASE_URL is unset), applies pending
 * migrations, seeds the demo project when the database has no users yet, and closes it again so
 * the app's own process can open the embedded database afterwards (PGlite allows one process at a
 * time).
 *
 * Seeding (the demo project has well-known logins): in development, on the embedded database unless
 * AUTO_SEED is turned off; in production, and on PostgreSQL in any mode, only when AUTO_SEED is set
 * explicitly to 1/true (a real deployment or a shared server is never filled with demo users by
 * accident). With `--json` the last stdout line is a JSON summary for the calling script; it carries
 * the demo credentials only when they are meant to be used (see `demo` below).
 */
import { migrate } from '@/server/db';
import { openConfiguredDatabase } from './configured-db';
import { DEMO_PASSWORD, DEMO_PROJECT_SLUG, DEMO_USERS, seedIfEmpty } from '@/server/seed';

const json = process.argv.includes('--json');
const { env: e, db } = openConfiguredDatabase();
const explicitSeed = ['1', 'true'].includes((process.env.AUTO_SEED ?? '').trim());

const started = Date.now();
try {
  const applied = await migrate(db);
  // env() already turns AUTO_SEED off in production unless it is explicit.
  const shouldSeed = e.AUTO_SEED && (db.kind === 'pglite' || explicitSeed);
  const seeded = shouldSeed ? await seedIfEmpty(db.prisma) : false;
  const demoPresent = (await db.prisma.project.count({ where: { slug: DEMO_PROJECT_SLUG } })) > 0;
  // The demo logins are advertised when this start seeded them, or in development when an earlier
  // start did; a production start never advertises credentials it did not just create.
  const advertise = seeded || (demoPresent && e.NODE_ENV !== 'production');
  const summary = {
    database: db.kind,
    location: db.kind === 'pglite' ? e.PGLITE_DIR : redact(e.DATABASE_URL ?? ''),
    migrationsApplied: applied,
    seeded,
    demoPresent,
    demo: advertise
      ? { password: DEMO_PASSWORD, users: DEMO_USERS.map((u) => ({ email: u.email, role: u.role })) }
      : null,
    ms: Date.now() - started,
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  } else {
    console.log(
      `Database ready (${summary.database}, ${summary.location}): ${applied.length} migration(s) applied now` +
        `${seeded ? ', demo project seeded' : ''}.`,
    );
  }
} catch (err) {
  const error = err as Error & { code?: string };
  process.stderr.write(`Database preparation failed: ${error.message || error.code || String(err)}\n`);
  process.exitCode = 1;
} finally {
  await db.close().catch(() => undefined);
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgresql://…';
  }
}
