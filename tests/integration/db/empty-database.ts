/**
 * Empty databases for the migration and drift tests, which must start from nothing (the shared
 * test setup hands out databases that are already migrated). A fresh database on the PostgreSQL
 * server named by TEST_DATABASE_URL when set, a fresh in-memory PGlite otherwise.
 */
import { randomBytes } from 'node:crypto';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { PrismaClient } from '@/generated/prisma/client';
import { openDatabase } from '@/server/db';
import type { SqlSession } from '@/server/migrate';

export const adminUrl = process.env.TEST_DATABASE_URL;

interface Connection {
  session: SqlSession;
  close(): Promise<void>;
}

export interface EmptyDatabase extends Connection {
  kind: 'pglite' | 'postgres';
  /** Another, independent connection to the same database (PostgreSQL only). */
  connect(): Promise<Connection>;
  /** The app's Prisma client on this database (once migrated: its tables must match the schema). */
  openPrisma(): { prisma: PrismaClient; close(): Promise<void> };
}

function pgliteSession(db: PGlite): SqlSession {
  return {
    query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await db.query<T>(sql, params)).rows }),
    exec: async (sql: string) => {
      await db.exec(sql);
    },
  };
}

function pgSession(client: pg.Client): SqlSession {
  return {
    query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await client.query(sql, params)).rows as T[] }),
    exec: async (sql: string) => {
      await client.query(sql);
    },
  };
}

async function pgConnect(url: string): Promise<Connection> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let closed: Promise<void> | undefined;
  return { session: pgSession(client), close: () => (closed ??= client.end()) };
}

export async function openEmptyDatabase(): Promise<EmptyDatabase> {
  if (!adminUrl) {
    const db = new PGlite();
    await db.waitReady;
    return {
      kind: 'pglite',
      session: pgliteSession(db),
      close: () => db.close(),
      connect: () => Promise.reject(new Error('PGlite is a single in-process connection; there is no second session.')),
      openPrisma() {
        const prisma = new PrismaClient({ adapter: new PrismaPGlite(db) });
        return { prisma, close: () => prisma.$disconnect() };
      },
    };
  }
  const name = `m_${randomBytes(6).toString('hex')}`;
  const admin = await pgConnect(adminUrl);
  await admin.session.exec(`CREATE DATABASE "${name}"`);
  await admin.close();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const others: Connection[] = [];
  const main = await pgConnect(url.toString());
  return {
    kind: 'postgres',
    session: main.session,
    async connect() {
      const c = await pgConnect(url.toString());
      others.push(c);
      return c;
    },
    openPrisma() {
      const opened = openDatabase({ databaseUrl: url.toString() });
      let closed: Promise<void> | undefined;
      const close = () => (closed ??= opened.close());
      // Closed with the database at the latest, so DROP DATABASE finds no client of ours.
      others.push({ session: main.session, close });
      return { prisma: opened.prisma, close };
    },
    async close() {
      for (const c of others) await c.close().catch(() => undefined);
      await main.close();
      const a = await pgConnect(adminUrl);
      await a.session.exec(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await a.close();
    },
  };
}
