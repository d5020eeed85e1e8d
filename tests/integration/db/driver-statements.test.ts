// The statements every run sends past the ORM (`Database.queryRows`/`execute`): what they return,
// how they fail, that they never run inside someone else's transaction, and, on the embedded
// database and on PostgreSQL, that each text is prepared once (per connection) and then only executed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Prisma } from '@/generated/prisma/client';
import type { Database } from '@/server/db';

const { closeDb, getDb, openDatabase } = await import('@/server/db');
const { env } = await import('@/server/env');
const db = await getDb();
const table = `driver_probe_${process.pid}_${Date.now()}`;
const t = Prisma.raw(`"${table}"`);

beforeAll(async () => {
  await db.execute(Prisma.sql`CREATE TABLE ${t} ("id" text PRIMARY KEY, "n" int NOT NULL, "tags" text[], "doc" jsonb)`);
});

afterAll(async () => {
  await db.execute(Prisma.sql`DROP TABLE IF EXISTS ${t}`);
  await closeDb();
});

describe('statements past the ORM', () => {
  it('round-trip text, numbers, booleans, nulls, arrays and JSON', async () => {
    const written = await db.execute(Prisma.sql`
      INSERT INTO ${t} ("id", "n", "tags", "doc")
      SELECT x.id, x.n, ARRAY[x.id, 'tag'], x.doc::jsonb
      FROM unnest(${['a', 'b', 'c']}::text[], ${[1, 2, 3]}::int[], ${['{"k":1}', '{"k":2}', null]}::text[]) AS x(id, n, doc)`);
    expect(written).toBe(3);
    const rows = await db.queryRows<{ id: string; n: number; big: boolean; tags: string[]; k: number | null }>(
      Prisma.sql`SELECT "id", "n", "n" > ${1} AS "big", "tags", ("doc"->>'k')::int AS "k"
        FROM ${t} WHERE "id" = ANY(${['a', 'c']}::text[]) AND ${null}::text IS NULL ORDER BY "id"`,
    );
    expect(rows).toEqual([
      { id: 'a', n: 1, big: false, tags: ['a', 'tag'], k: 1 },
      { id: 'c', n: 3, big: true, tags: ['c', 'tag'], k: null },
    ]);
    // The same text again with other values: the values are this call's, not the first call's.
    const again = await db.queryRows<{ id: string }>(
      Prisma.sql`SELECT "id", "n", "n" > ${2} AS "big", "tags", ("doc"->>'k')::int AS "k"
        FROM ${t} WHERE "id" = ANY(${['b']}::text[]) AND ${null}::text IS NULL ORDER BY "id"`,
    );
    expect(again.map((r) => r.id)).toEqual(['b']);
  });

  it('fail with the database error, and the next statement runs normally', async () => {
    const insert = (id: string) => db.execute(Prisma.sql`INSERT INTO ${t} ("id", "n") VALUES (${id}, ${7})`);
    await insert('dup');
    await expect(insert('dup')).rejects.toThrow(/duplicate key value violates unique constraint/);
    await expect(db.queryRows(Prisma.sql`SELECT "nope" FROM ${t}`)).rejects.toThrow(/column "nope" does not exist/);
    expect(await insert('after-the-errors')).toBe(1);
  });

  it('never run inside another transaction (its rollback keeps them)', async () => {
    let inside!: () => void;
    const isInside = new Promise<void>((resolve) => (inside = resolve));
    const rolledBack = db.prisma
      .$transaction(async (tx) => {
        await tx.$executeRawUnsafe(`INSERT INTO "${table}" ("id", "n") VALUES ('in-tx', 1)`);
        inside();
        // Long enough for the statement below to be sent (and, on a single connection, to wait).
        await new Promise((r) => setTimeout(r, 100));
        throw new Error('roll back');
      })
      .catch((err: Error) => err.message);
    await isInside;
    expect(await db.execute(Prisma.sql`INSERT INTO ${t} ("id", "n") VALUES (${'beside-tx'}, ${2})`)).toBe(1);
    expect(await rolledBack).toBe('roll back');
    const ids = await db.queryRows<{ id: string }>(
      Prisma.sql`SELECT "id" FROM ${t} WHERE "id" IN (${'in-tx'}, ${'beside-tx'})`,
    );
    expect(ids.map((r) => r.id)).toEqual(['beside-tx']);
  });

  it('are prepared once per text (and connection), and on PostgreSQL not when turned off', async () => {
    const count = Prisma.sql`SELECT count(*)::int AS n FROM ${t} WHERE "n" >= ${0}`;
    const preparedOn = async (on: Database) => {
      for (let i = 0; i < 3; i++) await on.queryRows(count);
      const rows = await on.queryRows<{ n: number }>(
        Prisma.sql`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE "statement" = ${count.text}`,
      );
      return rows[0]?.n;
    };
    if (db.kind === 'pglite') {
      expect(await preparedOn(db)).toBe(1);
      return;
    }
    // One connection each, so the check reads the session that ran the statement.
    for (const [preparedStatements, expected] of [
      [true, 1],
      [false, 0],
    ] as const) {
      const own = openDatabase({ databaseUrl: env().DATABASE_URL, poolMax: 1, preparedStatements });
      try {
        expect(await preparedOn(own), `preparedStatements: ${preparedStatements}`).toBe(expected);
      } finally {
        await own.close();
      }
    }
  });

  it.runIf(db.kind === 'pglite')(
    'leave the event loop a turn at least every 8 ms of statements on the embedded database',
    async () => {
      // Statements run on this thread: twenty sent at once must not run back to back, or every
      // stream's timers and sockets would wait for all of them. Each of these takes at least 5 ms
      // (the database sleeps), so at most two fit in one 8 ms stretch between turns of the event
      // loop: twenty need at least ten turns, however fast or slow the machine is.
      let turns = 0;
      let ticking = true;
      const tick = () => {
        turns += 1;
        if (ticking) setImmediate(tick);
      };
      setImmediate(tick);
      const seen = await Promise.all(
        Array.from({ length: 20 }, async () => {
          await db.queryRows(Prisma.sql`SELECT pg_sleep(${0.005}::float8), ${1}::int AS one`);
          return turns;
        }),
      );
      ticking = false;
      expect(new Set(seen).size).toBeGreaterThanOrEqual(10);
    },
  );

  it.runIf(db.kind === 'pglite')('still run when more texts are sent than are kept prepared', async () => {
    // Distinct texts (the run's statements are a small fixed set; anything past the cap runs plainly).
    for (let i = 0; i < 300; i++) {
      const rows = await db.queryRows<{ v: number }>(Prisma.sql`SELECT ${i}::int + ${Prisma.raw(String(i))} AS v`);
      expect(rows[0]?.v).toBe(2 * i);
    }
  });
});
