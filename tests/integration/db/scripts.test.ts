// The database scripts as the user runs them (real processes, real databases): `npm run
// db:migrate` migrates and reports what it applied, without seeding; the start-up preparation
// seeds the well-known demo logins in development, but in production only with AUTO_SEED=1, and
// only then hands out the demo credentials for the banner.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '@/server/db';
import { readMigrations } from '@/server/migrate';
import { adminUrl } from './empty-database';

const require = createRequire(import.meta.url);
const cleanups: Array<() => Promise<void>> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

/** A fresh, empty database for a script: a PGlite folder, or a new database on the test server. */
async function target(): Promise<{ env: Record<string, string>; kind: 'pglite' | 'postgres' }> {
  if (!adminUrl) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'scripts-db-'));
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    return { env: { PGLITE_DIR: path.join(dir, 'pglite') }, kind: 'pglite' };
  }
  const name = `s_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  cleanups.push(async () => {
    const a = new pg.Client({ connectionString: adminUrl });
    await a.connect();
    await a.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await a.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { env: { DATABASE_URL: url.toString() }, kind: 'postgres' };
}

const PROD = { NODE_ENV: 'production', NEXTAUTH_SECRET: 's'.repeat(40), MCP_OVERRIDE_SECRET: 'm'.repeat(40) };

function run(script: string, vars: Record<string, string>, args: string[] = []) {
  const env: Record<string, string | undefined> = { PATH: process.env.PATH, HOME: process.env.HOME, ...vars };
  const res = spawnSync(process.execPath, [require.resolve('tsx/cli'), script, ...args], {
    env: env as NodeJS.ProcessEnv,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (res.status !== 0) throw new Error(`${script} exited with ${res.status}:\n${res.stdout}\n${res.stderr}`);
  return JSON.parse(res.stdout.trim().split('\n').pop() ?? '') as Record<string, unknown>;
}

async function userCount(vars: Record<string, string>): Promise<number> {
  const db = openDatabase({ databaseUrl: vars.DATABASE_URL, pgliteDir: vars.PGLITE_DIR });
  try {
    return await db.prisma.user.count();
  } finally {
    await db.close();
  }
}

describe('npm run db:migrate', () => {
  it('applies the pending migrations, reports them, seeds nothing; the second run applies none', async () => {
    const t = await target();
    const all = (await readMigrations()).map((m) => m.name);
    expect(all.length).toBeGreaterThan(0);
    const first = run('scripts/db-migrate.ts', t.env);
    expect(first).toMatchObject({ database: t.kind, appliedNow: all.length, status: 'up to date' });
    expect(first.applied).toEqual(all);
    expect(await userCount(t.env)).toBe(0);
    const second = run('scripts/db-migrate.ts', t.env);
    expect(second).toMatchObject({ database: t.kind, applied: [], appliedNow: 0 });
  });
});

describe('start-up preparation (scripts/prepare-db.ts)', () => {
  it('production: no demo logins unless AUTO_SEED=1, and no credentials in the banner data', async () => {
    const t = await target();
    const plain = run('scripts/prepare-db.ts', { ...PROD, ...t.env }, ['--json']);
    expect(plain).toMatchObject({ seeded: false, demoPresent: false, demo: null });
    expect(JSON.stringify(plain)).not.toContain('demo-password');
    expect(await userCount(t.env)).toBe(0);

    const seeded = run('scripts/prepare-db.ts', { ...PROD, ...t.env, AUTO_SEED: '1' }, ['--json']);
    expect(seeded).toMatchObject({ seeded: true, demoPresent: true, demo: { password: 'demo-password' } });

    // A later production start finds the demo project but does not advertise its logins.
    const later = run('scripts/prepare-db.ts', { ...PROD, ...t.env }, ['--json']);
    expect(later).toMatchObject({ seeded: false, demoPresent: true, demo: null });
    expect(JSON.stringify(later)).not.toContain('demo-password');
  });

  it('development: the embedded database is seeded on first start and the logins are shown', async () => {
    const t = await target();
    const first = run('scripts/prepare-db.ts', t.env, ['--json']);
    if (t.kind === 'pglite') {
      expect(first).toMatchObject({ seeded: true, demoPresent: true, demo: { password: 'demo-password' } });
      // Later starts keep the data and still show how to sign in.
      expect(run('scripts/prepare-db.ts', t.env, ['--json'])).toMatchObject({
        seeded: false,
        demoPresent: true,
        demo: { password: 'demo-password' },
      });
    } else {
      // A PostgreSQL server is seeded only on request.
      expect(first).toMatchObject({ seeded: false, demoPresent: false, demo: null });
      expect(run('scripts/prepare-db.ts', { ...t.env, AUTO_SEED: '1' }, ['--json'])).toMatchObject({ seeded: true });
    }
  });
});
