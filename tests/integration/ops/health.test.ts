// Liveness and readiness over real HTTP: /api/health answers without the database, /api/ready
// checks the database, the migrations this build expects and the draining state; both JSON with
// cache-control: no-store.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeDb, databaseState, getDb, holdDatabaseOpeningForTests } from '@/server/db';
import { resetLifecycleForTests, startDraining } from '@/server/lifecycle';
import { setLogDestination } from '@/server/log';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});

beforeAll(async () => {
  server = await startTestServer();
  setLogDestination(sink);
  // The database is open before the probes below: how long opening takes on a busy machine is
  // not what they test (the test of a starting process holds the opening itself).
  await getDb();
});

afterAll(async () => {
  setLogDestination(undefined);
  resetLifecycleForTests();
  await server?.close();
});

async function get(path: string) {
  const res = await fetch(`${server.url}${path}`);
  return {
    status: res.status,
    cacheControl: res.headers.get('cache-control'),
    body: (await res.json()) as Record<string, unknown>,
  };
}

describe('probes', () => {
  it('/api/health: the process is alive', async () => {
    const res = await get('/api/health');
    expect(res).toMatchObject({
      status: 200,
      cacheControl: 'no-store',
      body: { status: 'ok', checks: { process: { ok: true } } },
    });
  });

  it('/api/ready: ready when the database answers and every migration is applied', async () => {
    const res = await get('/api/ready');
    expect(res.status).toBe(200);
    expect(res.cacheControl).toBe('no-store');
    expect(res.body).toMatchObject({
      status: 'ready',
      instance: expect.any(String),
      checks: { draining: { ok: true }, database: { ok: true }, migrations: { ok: true, pending: [] } },
    });
  });

  it('/api/ready: not ready while a migration of this build is not applied', async () => {
    const db = await getDb();
    const [row] = (
      await db.withSession((s) =>
        s.query<{ id: string; migration_name: string }>(
          'SELECT id, migration_name FROM "_prisma_migrations" ORDER BY migration_name DESC LIMIT 1',
        ),
      )
    ).rows;
    // Marked as rolled back: as if this build's newest migration had never been applied.
    await db.withSession((s) =>
      s.query('UPDATE "_prisma_migrations" SET rolled_back_at = now() WHERE id = $1', [row!.id]),
    );
    try {
      const res = await get('/api/ready');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        status: 'unavailable',
        checks: { database: { ok: true }, migrations: { ok: false, pending: [row!.migration_name] } },
      });
    } finally {
      await db.withSession((s) =>
        s.query('UPDATE "_prisma_migrations" SET rolled_back_at = NULL WHERE id = $1', [row!.id]),
      );
    }
    expect((await get('/api/ready')).status).toBe(200);
  });

  it('/api/ready: "starting" while the database is being opened, not an outage; ready once it is open', async () => {
    await closeDb();
    const opening = holdDatabaseOpeningForTests();
    lines = [];
    try {
      const res = await get('/api/ready');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        status: 'starting',
        checks: { draining: { ok: true }, database: { ok: false, state: 'opening' }, migrations: { ok: false } },
      });
      // The probe itself started the opening (no request needed), and counted no outage.
      expect(databaseState()).toBe('opening');
      expect((await get('/api/health')).status).toBe(200);
    } finally {
      opening.release();
    }
    await getDb();
    const res = await get('/api/ready');
    expect(res).toMatchObject({ status: 200, body: { status: 'ready' } });
    const events = lines.map((l) => (JSON.parse(l) as { event?: string }).event);
    expect(events).not.toContain('database.unavailable');
    expect(events).not.toContain('database.available');
  });

  it('/api/ready: not ready from the moment the process drains; /api/health still answers', async () => {
    startDraining();
    try {
      const ready = await get('/api/ready');
      expect(ready).toMatchObject({ status: 503, body: { status: 'draining', checks: { draining: { ok: false } } } });
      expect((await get('/api/health')).status).toBe(200);
    } finally {
      resetLifecycleForTests();
    }
  });
});
