// Liveness and readiness over real HTTP: /api/health answers without the database, /api/ready
// checks the database, the migrations this build expects and the draining state; both JSON with
// cache-control: no-store.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb } from '@/server/db';
import { resetLifecycleForTests, startDraining } from '@/server/lifecycle';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});

afterAll(async () => {
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
