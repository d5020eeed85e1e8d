/**
 * `npm run bench:pglite-thread`: does moving the embedded database (PGlite) off the main thread pay
 * for itself? The same workload runs with PGlite on the main thread (`query()` as it is, after one
 * turn of the event loop as the ORM's statements go, and prepared with a turn taken under the lock
 * as the run's statements go: src/server/pglite-prepared.ts), and with PGlite in a worker thread
 * that the main thread sends each statement to. The workload
 * is the shape of the assistant's per-run statements (a three-table membership read, an event
 * insert with a JSON payload, a keyed update), from CONCURRENCY clients at once, while a 1 ms
 * timer on the main thread measures how late it fires: the delay every stream of the process
 * would see. Prints JSON: statements per second, statement latency p50/p99, main-thread
 * utilisation, and timer lateness p50/p99, for each mode.
 */
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';

const SCHEMA = `
  CREATE TABLE project (id text PRIMARY KEY, name text NOT NULL);
  CREATE TABLE app_user (id text PRIMARY KEY, name text NOT NULL, email text NOT NULL, is_admin boolean NOT NULL);
  CREATE TABLE membership (project_id text, user_id text, role text NOT NULL, PRIMARY KEY (project_id, user_id));
  CREATE TABLE run (id text PRIMARY KEY, heartbeat timestamp(3) NOT NULL);
  CREATE TABLE event (id text PRIMARY KEY, run_id text NOT NULL, seq int NOT NULL, payload jsonb NOT NULL);
  INSERT INTO project SELECT 'p' || i, 'Project ' || i FROM generate_series(1, 100) i;
  INSERT INTO app_user SELECT 'u' || i, 'User ' || i, 'u' || i || '@example.com', false FROM generate_series(1, 1000) i;
  INSERT INTO membership SELECT 'p' || (i % 100 + 1), 'u' || i, 'MEMBER' FROM generate_series(1, 1000) i;
  INSERT INTO run SELECT 'r' || i, now() FROM generate_series(1, 1000) i;`;

type Statement = { text: string; params: unknown[] };
const statement = (i: number): Statement => {
  const user = `u${(i % 1000) + 1}`;
  switch (i % 3) {
    case 0:
      return {
        text: `SELECT m.role, p.name, u.name, u.email, u.is_admin FROM membership m
               JOIN project p ON p.id = m.project_id JOIN app_user u ON u.id = m.user_id
               WHERE m.project_id = $1 AND m.user_id = $2`,
        params: [`p${(i % 100) + 1}`, user],
      };
    case 1:
      return {
        text: 'INSERT INTO event (id, run_id, seq, payload) VALUES ($1, $2, $3, $4::jsonb)',
        params: [
          `e${i}-${Math.random()}`,
          `r${(i % 1000) + 1}`,
          i,
          JSON.stringify({ type: 'TEXT_MESSAGE', text: 'x'.repeat(400) }),
        ],
      };
    default:
      return { text: 'UPDATE run SET heartbeat = now() WHERE id = $1', params: [`r${(i % 1000) + 1}`] };
  }
};

{
  const STATEMENTS = Number(process.env.PROBE_STATEMENTS ?? 6_000);
  const CONCURRENCY = Number(process.env.PROBE_CONCURRENCY ?? 8);
  const pct = (xs: number[], p: number) => {
    const s = [...xs].sort((a, b) => a - b);
    return Math.round(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! * 1000) / 1000;
  };

  async function measure(run: (s: Statement) => Promise<unknown>) {
    const latencies: number[] = [];
    const lateness: number[] = [];
    let expected = performance.now() + 1;
    const timer = setInterval(() => {
      const now = performance.now();
      lateness.push(Math.max(0, now - expected));
      expected = now + 1;
    }, 1);
    const elu0 = performance.eventLoopUtilization();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < STATEMENTS) {
          const s = statement(next++);
          const at = performance.now();
          await run(s);
          latencies.push(performance.now() - at);
        }
      }),
    );
    const end = performance.now();
    const seconds = (end - t0) / 1000;
    clearInterval(timer);
    // A timer that could not fire until the end was late by all of that time.
    lateness.push(Math.max(0, end - expected));
    const elu = performance.eventLoopUtilization(elu0);
    return {
      statementsPerSecond: Math.round(STATEMENTS / seconds),
      latencyMs: { p50: pct(latencies, 50), p99: pct(latencies, 99) },
      mainThreadUtilisation: Math.round(elu.utilization * 1000) / 1000,
      timerFires: lateness.length - 1,
      timerLatenessMs: { p50: pct(lateness, 50), p99: pct(lateness, 99), max: pct(lateness, 100) },
    };
  }

  const inline = new PGlite();
  await inline.exec(SCHEMA);
  for (let i = 0; i < 300; i++) await inline.query(statement(i).text, statement(i).params);
  const mainThread = await measure((s) => inline.query(s.text, s.params));
  const yielding = await measure(async (s) => {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return inline.query(s.text, s.params);
  });
  // As the app sends its per-run statements (src/server/pglite-prepared.ts): prepared once, and a
  // turn of the event loop taken with the lock held, so statements waiting for it do not run back
  // to back.
  const { preparedStatements } = await import('@/server/pglite-prepared');
  const prepared = preparedStatements(inline);
  for (let i = 0; i < 300; i++) await prepared(statement(i).text, statement(i).params);
  const preparedYieldingInLock = await measure((s) => prepared(s.text, s.params));
  await inline.close();

  // The worker: owns the database, answers one message per statement.
  const workerSource = `
    const { parentPort, workerData } = require('node:worker_threads');
    (async () => {
      const { PGlite } = await import(workerData.pglite);
      const db = new PGlite();
      await db.exec(workerData.schema);
      parentPort.on('message', async (m) => {
        const res = await db.query(m.text, m.params);
        parentPort.postMessage({ id: m.id, rows: res.rows.length });
      });
      parentPort.postMessage({ ready: true });
    })();`;
  const worker = new Worker(workerSource, {
    eval: true,
    workerData: { pglite: import.meta.resolve('@electric-sql/pglite'), schema: SCHEMA },
  });
  const waiting = new Map<number, () => void>();
  await new Promise<void>((resolve) =>
    worker.on('message', (m: { ready?: boolean; id?: number }) => {
      if (m.ready) return resolve();
      waiting.get(m.id!)?.();
      waiting.delete(m.id!);
    }),
  );
  let ids = 0;
  const viaWorker = (s: Statement) =>
    new Promise<void>((resolve) => {
      const id = ids++;
      waiting.set(id, resolve);
      worker.postMessage({ id, ...s });
    });
  for (let i = 0; i < 300; i++) await viaWorker(statement(i));
  const workerThread = await measure(viaWorker);
  await worker.terminate();

  console.log(
    JSON.stringify(
      {
        statements: STATEMENTS,
        concurrency: CONCURRENCY,
        mainThread,
        mainThreadYielding: yielding,
        preparedYieldingInLock,
        workerThread,
      },
      null,
      2,
    ),
  );
}
