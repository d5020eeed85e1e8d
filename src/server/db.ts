import 'server-only';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import pg from 'pg';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import { type Prisma, PrismaClient } from '@/generated/prisma/client';
import { env } from './env';
import { describeError } from './errors';
import { log } from './log';
import { applyMigrations, readMigrations, type SqlSession } from './migrate';
import { preparedStatements } from './pglite-prepared';
import { processWide } from '@/server/process-wide';

export type { PrismaClient };

export interface Database {
  kind: 'pglite' | 'postgres';
  prisma: PrismaClient;
  /**
   * One statement straight to the driver, without the ORM: for the per-run hot paths (membership,
   * run open), where the ORM's own work per statement measured about eight times the driver's
   * (1.0 ms against 0.13 ms wall, 0.46 ms against 0.09 ms CPU). Rows come as the driver parses
   * them: select `int` or `text`, not `bigint`, `numeric` or `timestamp`, and pass no `Date`.
   * Each text is prepared once (per connection on PostgreSQL, unless DATABASE_PREPARED_STATEMENTS
   * is off; pglite-prepared.ts on the embedded database): keep these texts a fixed set (values as
   * parameters, never spliced into the text).
   */
  queryRows<T>(statement: Prisma.Sql): Promise<T[]>;
  /** The same for a statement whose rows are not read: how many rows it wrote. */
  execute(statement: Prisma.Sql): Promise<number>;
  /** A SQL session for the migration applier and raw maintenance work. */
  withSession<T>(fn: (s: SqlSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface OpenOptions {
  databaseUrl?: string;
  pgliteDir?: string;
  /** Connections of the `pg` pool (DATABASE_POOL_MAX). */
  poolMax?: number;
  /** PostgreSQL: the statements past the ORM as named prepared statements (DATABASE_PREPARED_STATEMENTS). */
  preparedStatements?: boolean;
}

/** Texts kept as named statements per process; the run's statements are a small fixed set. */
const MAX_NAMED_STATEMENTS = 256;

/**
 * The name a statement past the ORM is prepared under on each PostgreSQL connection (`pg` parses
 * and plans it once per connection, then only binds and executes it: the run open measured
 * 0.80 ms unnamed against 0.24 ms named), or undefined (not kept named: past the cap).
 */
function statementNamer(): (text: string) => string | undefined {
  const names = new Map<string, string>();
  return (text) => {
    let name = names.get(text);
    if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
      name = `iaa_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
      names.set(text, name);
    }
    return name;
  };
}

/**
 * A new connection that is not established within this time fails (and the request is answered
 * 503) instead of waiting for the operating system's TCP timeout, which can be minutes when the
 * server is unreachable rather than refusing.
 */
const CONNECT_TIMEOUT_MS = 5_000;

/** The statements straight to the driver, of the database a Prisma client belongs to. */
export type Driver = Pick<Database, 'queryRows' | 'execute'>;

const drivers = processWide('__inAppAgentDbDrivers', () => new WeakMap<PrismaClient, Driver>());

/**
 * The driver of the database `prisma` was opened with (`openDatabase`), for the statements that
 * skip the ORM: they run on the same database as the client's own queries, whichever it is (a
 * script may open its own).
 */
export function driverOf(prisma: PrismaClient): Driver {
  const driver = drivers.get(prisma);
  if (!driver) throw new Error('This Prisma client was not opened by openDatabase().');
  return driver;
}

/** Statement counters, filled only when PRISMA_COUNT_QUERIES=1 (the bench uses them). */
export const queryStats = { total: 0, writes: 0 };

function clientOptions(): { log?: Array<{ emit: 'event'; level: 'query' }> } {
  return process.env.PRISMA_COUNT_QUERIES === '1' ? { log: [{ emit: 'event', level: 'query' }] } : {};
}

/**
 * Whether a statement writes: it starts with INSERT, UPDATE or DELETE, or with a WITH whose parts
 * do (a data-modifying CTE), after any leading comments.
 */
function isWrite(sql: string): boolean {
  const text = sql.replace(/^(\s*--[^\n]*\n)+/, '');
  return (
    /^\s*(INSERT|UPDATE|DELETE)\b/i.test(text) || (/^\s*WITH\b/i.test(text) && /\b(INSERT|UPDATE|DELETE)\b/i.test(text))
  );
}

function countQueries(prisma: PrismaClient): PrismaClient {
  if (process.env.PRISMA_COUNT_QUERIES === '1') {
    (prisma as unknown as { $on(ev: 'query', cb: (e: { query: string }) => void): void }).$on('query', (e) => {
      queryStats.total += 1;
      if (isWrite(e.query)) queryStats.writes += 1;
    });
  }
  return prisma;
}

/** Counts a statement sent past the ORM, like the ORM's own (PRISMA_COUNT_QUERIES=1, the bench). */
function countStatement(text: string): void {
  if (process.env.PRISMA_COUNT_QUERIES !== '1') return;
  queryStats.total += 1;
  if (isWrite(text)) queryStats.writes += 1;
}

function pgliteSession(client: PGlite): SqlSession {
  return {
    query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await client.query<T>(sql, params)).rows }),
    exec: async (sql: string) => {
      await client.exec(sql);
    },
  };
}

function pgSession(client: pg.ClientBase): SqlSession {
  return {
    query: async <T>(sql: string, params?: unknown[]) => ({
      rows: (await client.query(sql, params as unknown[])).rows as T[],
    }),
    exec: async (sql: string) => {
      await client.query(sql);
    },
  };
}

/**
 * The embedded database runs every statement on this thread. The ORM's statements each yield one
 * turn of the event loop first, so a chain of them (one statement waiting for the last) never runs
 * in one stretch of microtasks while every stream's timers and sockets wait. (The statements past
 * the ORM take their turn with the lock held, which also spaces out statements queued on the lock:
 * pglite-prepared.ts.) `npm run bench:pglite-thread` measures both.
 */
function yielding(client: PGlite): PGlite {
  return new Proxy(client, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (prop === 'query' || prop === 'exec' || prop === 'transaction') {
        return async (...args: unknown[]) => {
          await nextTurn();
          return method.apply(target, args);
        };
      }
      return method.bind(target);
    },
  });
}

function registered(db: Database): Database {
  drivers.set(db.prisma, { queryRows: db.queryRows, execute: db.execute });
  return db;
}

/** Opens a database: PostgreSQL when a URL is given, embedded PGlite otherwise. */
export function openDatabase(opts: OpenOptions): Database {
  if (opts.databaseUrl) {
    const pool = new pg.Pool({
      connectionString: opts.databaseUrl,
      max: opts.poolMax ?? 10,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // Idle connections close after pg's default 10 s, so a pool sized for a peak does not keep it.
      // Dead peers (a failover, a dropped network path) are noticed by TCP keepalive.
      keepAlive: true,
      application_name: 'tracker',
    });
    // An idle connection the server ends (restart, failover, an administrator) is dropped from the
    // pool and replaced on the next query; without a listener it would crash the process.
    pool.on('error', (err) =>
      log().warn(
        { event: 'database.connection_closed', error: describeError(err) },
        'an idle PostgreSQL connection was closed',
      ),
    );
    const prisma = countQueries(new PrismaClient({ adapter: new PrismaPg(pool), ...clientOptions() }));
    const nameOf = opts.preparedStatements === false ? () => undefined : statementNamer();
    const send = (statement: Prisma.Sql) => {
      // `text` is joined from the statement's parts on every read: read once.
      const text = statement.text;
      countStatement(text);
      const name = nameOf(text);
      return pool.query({ text, values: statement.values as unknown[], ...(name ? { name } : {}) });
    };
    return registered({
      kind: 'postgres',
      prisma,
      async queryRows<T>(statement: Prisma.Sql) {
        return (await send(statement)).rows as T[];
      },
      async execute(statement: Prisma.Sql) {
        return (await send(statement)).rowCount ?? 0;
      },
      async withSession(fn) {
        const client = await pool.connect();
        try {
          return await fn(pgSession(client));
        } finally {
          client.release();
        }
      },
      async close() {
        await prisma.$disconnect();
        await pool.end();
      },
    });
  }
  const dir = opts.pgliteDir ?? '.data/pglite';
  let dataDir: string | undefined;
  if (dir !== 'memory://') {
    dataDir = path.resolve(/* turbopackIgnore: true */ dir);
    mkdirSync(dataDir, { recursive: true });
  }
  // A fresh in-memory database can start from a migrated image (PGLITE_TEMPLATE, a file written by
  // PGlite's dumpDataDir), which skips initdb: the test suite uses this.
  const template =
    !dataDir && process.env.PGLITE_TEMPLATE
      ? readFileSync(/* turbopackIgnore: true */ process.env.PGLITE_TEMPLATE)
      : undefined;
  const embedded = template ? new PGlite({ loadDataDir: new Blob([new Uint8Array(template)]) }) : new PGlite(dataDir);
  const client = yielding(embedded);
  const runPrepared = preparedStatements(embedded);
  // Statements get a turn of the event loop at least every 8 ms of them, inside the lock (pglite-prepared.ts).
  const prepared = async <T>(statement: Prisma.Sql) => {
    const text = statement.text;
    countStatement(text);
    return runPrepared<T>(text, statement.values);
  };
  const prisma = countQueries(new PrismaClient({ adapter: new PrismaPGlite(client), ...clientOptions() }));
  return registered({
    kind: 'pglite',
    prisma,
    async queryRows<T>(statement: Prisma.Sql) {
      return (await prepared<T>(statement)).rows;
    },
    async execute(statement: Prisma.Sql) {
      return (await prepared(statement)).affectedRows;
    },
    withSession: (fn) => fn(pgliteSession(client)),
    async close() {
      await prisma.$disconnect();
      await client.close();
    },
  });
}

/** Applies pending migrations; returns the names applied now. */
export async function migrate(db: Database): Promise<string[]> {
  const migrations = await readMigrations();
  const res = await db.withSession((s) => applyMigrations(s, migrations));
  return res.applied;
}

interface Holder {
  db?: Promise<Database>;
  /** The database has opened (and migrated): set when `db` resolves, cleared when it is closed. */
  open?: boolean;
  /** Tests: the next opening waits for this before it starts (a process that is slow to start). */
  gate?: Promise<void>;
}
const holder: Holder = processWide<Holder>('__inAppAgentDb', () => ({}));

async function init(): Promise<Database> {
  if (holder.gate) await holder.gate;
  const settings = env();
  const db = openDatabase({
    databaseUrl: settings.DATABASE_URL,
    pgliteDir: settings.PGLITE_DIR,
    poolMax: settings.DATABASE_POOL_MAX,
    preparedStatements: settings.DATABASE_PREPARED_STATEMENTS,
  });
  try {
    await migrate(db);
  } catch (err) {
    // Unreachable at first use (the next request tries again): leave no pool or client behind.
    await db.close().catch(() => undefined);
    throw err;
  }
  if (db.kind === 'pglite' && settings.AUTO_SEED && settings.NODE_ENV !== 'test') {
    const { seedIfEmpty } = await import('./seed');
    await seedIfEmpty(db.prisma);
  }
  return db;
}

/**
 * The process-wide database. The first call opens it and applies pending migrations (cheap when
 * there are none); on the embedded database the demo project is seeded into an empty database when
 * AUTO_SEED is on (development by default; production only when set explicitly).
 */
export function getDb(): Promise<Database> {
  if (!holder.db) {
    const opening = init().then(
      (db) => {
        if (holder.db === opening) holder.open = true;
        return db;
      },
      (err: unknown) => {
        if (holder.db === opening) holder.db = undefined;
        throw err;
      },
    );
    holder.db = opening;
  }
  return holder.db;
}

/**
 * Where the process-wide database stands: never asked for (`closed`), being opened and migrated
 * (`opening`: the first use of a process, which on the embedded database can take seconds), or
 * `open`. The readiness probe tells a process that is starting from one whose database fails.
 */
export function databaseState(): 'closed' | 'opening' | 'open' {
  if (!holder.db) return 'closed';
  return holder.open ? 'open' : 'opening';
}

export async function getPrisma(): Promise<PrismaClient> {
  return (await getDb()).prisma;
}

/**
 * Tests: holds the next opening of the process-wide database until `release()` (what a slow start
 * looks like, under the test's control).
 */
export function holdDatabaseOpeningForTests(): { release: () => void } {
  let open: () => void = () => undefined;
  holder.gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  return {
    release: () => {
      holder.gate = undefined;
      open();
    },
  };
}

/** Closes the process-wide database (scripts, tests). */
export async function closeDb(): Promise<void> {
  const p = holder.db;
  holder.db = undefined;
  holder.open = false;
  // A database that never opened (unreachable at start) has nothing to close.
  const db = await p?.catch(() => undefined);
  await db?.close();
}
