// The limits store (src/server/limits.ts) against the real database: sliding-window counting,
// refused hits not counted, exact counts under concurrent hits from two "instances" (two clients
// with their own connection pools on PostgreSQL), and the batched purge.
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { getDb, getPrisma, openDatabase, type Database } from '@/server/db';
import { hitLimit, peekLimit, purgeExpiredLimits, refundLimit, resetLimit } from '@/server/limits';

const key = (name: string) => `test:${name}:${randomBytes(4).toString('hex')}`;
/** A moment `secondsIn` seconds into a 60 s window. */
const at = (secondsIn: number, windowIndex = 29_000_000) => new Date((windowIndex * 60 + secondsIn) * 1000);

let second: Database | undefined;
afterAll(async () => {
  await second?.close();
});

describe('hitLimit', () => {
  it('allows up to the limit, refuses the rest without counting them, and says when to retry', async () => {
    const prisma = await getPrisma();
    const k = key('basic');
    const results = [];
    for (let i = 0; i < 5; i++)
      results.push(await hitLimit(prisma, { key: k, limit: 3, windowSeconds: 60, now: at(10) }));
    expect(results.map((r) => [r.allowed, r.count])).toEqual([
      [true, 1],
      [true, 2],
      [true, 3],
      [false, 3],
      [false, 3],
    ]);
    // Refused at 10 s into the window: the three hits fade out during the next window. With
    // nothing else counted, one more fits once 3 × (1 − f) + 1 ≤ 3, i.e. f ≥ 1/3: 20 s into the
    // next window, 70 s from now.
    expect(results[3]!.retryAfterSeconds).toBe(70);
    expect(await peekLimit(prisma, { key: k, limit: 3, windowSeconds: 60, now: at(10) })).toEqual({
      allowed: false,
      count: 3,
      retryAfterSeconds: 70,
    });
    // The promise holds: refused just before, allowed at the announced moment.
    expect((await hitLimit(prisma, { key: k, limit: 3, windowSeconds: 60, now: at(79) })).allowed).toBe(false);
    expect(await hitLimit(prisma, { key: k, limit: 3, windowSeconds: 60, now: at(80) })).toEqual({
      allowed: true,
      count: 1,
      retryAfterSeconds: 0,
    });
  });

  it('weighs the previous window by how much of it the sliding window still covers', async () => {
    const prisma = await getPrisma();
    const k = key('sliding');
    for (let i = 0; i < 10; i++) await hitLimit(prisma, { key: k, limit: 10, windowSeconds: 60, now: at(59) });
    // 15 s into the next window, 75 % of the previous one still counts: 7.5 + new hits ≤ 10.
    const next = [];
    for (let i = 0; i < 4; i++)
      next.push((await hitLimit(prisma, { key: k, limit: 10, windowSeconds: 60, now: at(75) })).allowed);
    expect(next).toEqual([true, true, false, false]);
    // Two windows later the old hits are gone: the full limit is available again.
    const later = [];
    for (let i = 0; i < 11; i++)
      later.push((await hitLimit(prisma, { key: k, limit: 10, windowSeconds: 60, now: at(185) })).allowed);
    expect(later.filter(Boolean)).toHaveLength(10);
  });

  it('takes `cost` units at once, refunds units, and forgets a key on reset', async () => {
    const prisma = await getPrisma();
    const k = key('cost');
    expect(await hitLimit(prisma, { key: k, limit: 10, windowSeconds: 60, cost: 7, now: at(1) })).toMatchObject({
      allowed: true,
      count: 7,
    });
    expect(await hitLimit(prisma, { key: k, limit: 10, windowSeconds: 60, cost: 4, now: at(2) })).toMatchObject({
      allowed: false,
      count: 7,
    });
    await refundLimit(prisma, { key: k, windowSeconds: 60, cost: 2, now: at(3) });
    expect(await hitLimit(prisma, { key: k, limit: 10, windowSeconds: 60, cost: 4, now: at(4) })).toMatchObject({
      allowed: true,
      count: 9,
    });
    await refundLimit(prisma, { key: k, windowSeconds: 60, cost: 50, now: at(5) });
    expect(await peekLimit(prisma, { key: k, limit: 10, windowSeconds: 60, now: at(5) })).toMatchObject({
      allowed: true,
      count: 0,
    });
    await hitLimit(prisma, { key: k, limit: 10, windowSeconds: 60, cost: 10, now: at(6) });
    await resetLimit(prisma, k);
    expect(await peekLimit(prisma, { key: k, limit: 10, windowSeconds: 60, cost: 10, now: at(7) })).toMatchObject({
      allowed: true,
      count: 0,
    });
  });

  it('refuses malformed input with a validation error, before any query', async () => {
    const prisma = await getPrisma();
    await expect(hitLimit(prisma, { key: 'has space', limit: 1, windowSeconds: 60 })).rejects.toThrow(
      /printable ASCII/,
    );
    await expect(hitLimit(prisma, { key: 'k', limit: 0, windowSeconds: 60 })).rejects.toThrow();
    await expect(hitLimit(prisma, { key: 'k', limit: 2, windowSeconds: 60, cost: 3 })).rejects.toThrow(/cost/);
    await expect(resetLimit(prisma, '')).rejects.toThrow();
  });
});

describe('concurrent hits', () => {
  /** Two clients with their own connections, like two app instances (one client on PGlite). */
  async function instances(): Promise<[Database['prisma'], Database['prisma']]> {
    const db = await getDb();
    if (db.kind === 'postgres' && !second) second = openDatabase({ databaseUrl: process.env.DATABASE_URL });
    return [db.prisma, second?.prisma ?? db.prisma];
  }

  it('loses no update: 200 hits at once from two instances count exactly 200', async () => {
    const [a, b] = await instances();
    const k = key('race');
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => hitLimit(i % 2 ? a : b, { key: k, limit: 1_000, windowSeconds: 3600 })),
    );
    expect(results.every((r) => r.allowed)).toBe(true);
    // Every count from 1 to 200 was handed out exactly once.
    expect(results.map((r) => r.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect((await peekLimit(a, { key: k, limit: 1_000, windowSeconds: 3600 })).count).toBe(200);
  });

  it('never hands out more than the limit: 150 hits at once for 40 units allow exactly 40', async () => {
    const [a, b] = await instances();
    const k = key('race-limit');
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) => hitLimit(i % 2 ? a : b, { key: k, limit: 40, windowSeconds: 3600 })),
    );
    expect(results.filter((r) => r.allowed)).toHaveLength(40);
    expect((await peekLimit(a, { key: k, limit: 40, windowSeconds: 3600 })).count).toBe(40);
  });
});

describe('purgeExpiredLimits', () => {
  it('deletes expired counters in batches and keeps the ones a window still reads', async () => {
    const prisma = await getPrisma();
    const old = Array.from({ length: 7 }, (_, i) => key(`old${i}`));
    for (const k of old) await hitLimit(prisma, { key: k, limit: 5, windowSeconds: 60, now: at(1, 1_000) });
    const live = key('live');
    await hitLimit(prisma, { key: live, limit: 5, windowSeconds: 60, now: at(1, 2_000) });
    // Expiry is two windows after the start: at 1_002 minutes the old rows are gone, not the live one.
    const now = at(0, 1_002);
    const deleted = await purgeExpiredLimits(prisma, now, { batchSize: 3 });
    expect(deleted).toBeGreaterThanOrEqual(7);
    expect(await prisma.limitCounter.count({ where: { key: { in: old } } })).toBe(0);
    expect(await prisma.limitCounter.count({ where: { key: live } })).toBe(1);
    // A counter is kept until the window after it has ended (it is that window's "previous").
    const edge = key('edge');
    await hitLimit(prisma, { key: edge, limit: 5, windowSeconds: 60, now: at(30, 3_000) });
    await purgeExpiredLimits(prisma, at(59, 3_001));
    expect(await prisma.limitCounter.count({ where: { key: edge } })).toBe(1);
    await purgeExpiredLimits(prisma, at(0, 3_002));
    expect(await prisma.limitCounter.count({ where: { key: edge } })).toBe(0);
  });
});
