// When every pooled connection stays busy, a transaction that cannot start in time is the
// database being unavailable for now (503 DATABASE_UNAVAILABLE with Retry-After, which a client
// retries), not a programming error (500). Reproduced with the real client: one connection, held
// by a transaction, and a second transaction that may wait only 50 ms for it.
import { afterAll, describe, expect, it } from 'vitest';

process.env.DATABASE_POOL_MAX = '1';
const { closeDb, getPrisma } = await import('@/server/db');
const { isInfrastructureError } = await import('@/server/errors');

afterAll(async () => {
  await closeDb();
});

describe('a saturated connection pool', () => {
  it('makes a transaction that cannot start in time an infrastructure error', async () => {
    const prisma = await getPrisma();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started!: () => void;
    const isHolding = new Promise<void>((resolve) => (started = resolve));
    const holder = prisma.$transaction(
      async (tx) => {
        await tx.$queryRaw`SELECT 1`;
        started();
        await held;
      },
      { timeout: 10_000 },
    );
    await isHolding;
    const refused = await prisma
      .$transaction(async (tx) => tx.$queryRaw`SELECT 1`, { maxWait: 50 })
      .then(
        () => null,
        (err: unknown) => err,
      );
    release();
    await holder;
    expect(refused).toMatchObject({ code: 'P2028' });
    expect(isInfrastructureError(refused)).toBe(true);
    // A mistake inside a transaction stays what it is.
    const wrong = await prisma
      .$transaction(async (tx) => tx.$queryRaw`SELECT * FROM no_such_table`)
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(wrong).not.toBeNull();
    expect(isInfrastructureError(wrong)).toBe(false);
  });
});
