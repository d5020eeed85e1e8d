/**
 * Liveness and readiness, for load balancers and Kubernetes probes.
 *
 * - `GET /api/health` (liveness): the process answers. No database query: a database outage must
 *   not make an orchestrator restart healthy instances.
 * - `GET /api/ready` (readiness): the database answers ONE short query within READY_TIMEOUT_MS,
 *   every migration folder of this build is recorded as applied (same checksum, finished, not
 *   rolled back) in `_prisma_migrations`, and the process is not draining. 503 otherwise.
 *   A process whose database is still being opened (its first use: connecting and applying
 *   migrations, seconds on the embedded database of a busy machine) is `starting`: not ready, with
 *   that reason, and not an outage (nothing is logged as a database failure). The probe starts the
 *   opening itself, so an instance becomes ready without waiting for a request.
 *
 * Both answer JSON `{status, instance, checks: {...}}` with `cache-control: no-store`.
 */
import 'server-only';
import { databaseState, getDb } from './db';
import { describeError, isInfrastructureError } from './errors';
import { isDraining } from './lifecycle';
import { instanceId, log } from './log';
import { readMigrations, type MigrationFile } from './migrate';
import { processWide } from '@/server/process-wide';

/** The readiness query's own budget: a probe never hangs on a stuck connection. */
const READY_TIMEOUT_MS = 2_000;

const HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

interface CheckResult {
  ok: boolean;
  [detail: string]: unknown;
}

interface HealthBody {
  status: 'ok' | 'ready' | 'starting' | 'unavailable' | 'draining';
  instance: string;
  checks: Record<string, CheckResult>;
}

interface Holder {
  migrations?: Promise<Array<Pick<MigrationFile, 'name' | 'checksum'>>>;
  /** Whether the last look at the database found it unavailable (logs transitions only). */
  databaseDown: boolean;
}
const holder: Holder = processWide<Holder>('__trackerHealth', () => ({ databaseDown: false }));

/**
 * Records what a request or probe found out about the database, and logs only the changes
 * (outage begins, outage ends): one line per outage, not one per refused request.
 */
export function noteDatabaseState(available: boolean, err?: unknown): void {
  if (available === !holder.databaseDown) return;
  holder.databaseDown = !available;
  if (available) log().info({ event: 'database.available' }, 'the database is reachable again');
  else log().error({ event: 'database.unavailable', error: describeError(err) }, 'the database is unavailable');
}

/** The migrations of this build (read once per process: a new build is a new process). */
function expectedMigrations(): Promise<Array<Pick<MigrationFile, 'name' | 'checksum'>>> {
  holder.migrations ??= readMigrations()
    .then((files) => files.map(({ name, checksum }) => ({ name, checksum })))
    .catch((err: unknown) => {
      holder.migrations = undefined;
      throw err;
    });
  return holder.migrations;
}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

interface AppliedRow {
  migration_name: string;
  checksum: string;
}

/** The database is still being opened (the process is starting): not ready, not an outage. */
class StillOpening extends Error {}

/**
 * The database once it is open; StillOpening when its opening (started now if nobody had asked for
 * it yet) has not finished within `timeoutMs`. A failed opening throws its own error (an outage).
 */
async function openedDatabase(timeoutMs: number) {
  if (databaseState() === 'open') return getDb();
  const opening = getDb();
  opening.catch(() => undefined); // awaited below, or by the next caller
  return withTimeout(opening, timeoutMs).catch((err: unknown) => {
    if (err instanceof Error && err.message.startsWith('no answer within') && databaseState() === 'opening') {
      throw new StillOpening();
    }
    throw err;
  });
}

async function databaseChecks(timeoutMs: number): Promise<{ database: CheckResult; migrations: CheckResult }> {
  const started = performance.now();
  try {
    const expected = await expectedMigrations();
    const db = await openedDatabase(timeoutMs);
    const rows = await withTimeout(
      db.withSession(async (s) => {
        const res = await s.query<AppliedRow>(
          `SELECT migration_name, checksum FROM "_prisma_migrations"
           WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL`,
        );
        return res.rows;
      }),
      timeoutMs,
    );
    noteDatabaseState(true);
    const applied = new Set(rows.map((r) => `${r.migration_name}\u0000${r.checksum}`));
    const pending = expected.filter((m) => !applied.has(`${m.name}\u0000${m.checksum}`)).map((m) => m.name);
    return {
      database: { ok: true, latencyMs: Math.round(performance.now() - started) },
      migrations: { ok: pending.length === 0, expected: expected.length, pending },
    };
  } catch (err) {
    if (err instanceof StillOpening) {
      return {
        database: { ok: false, state: 'opening', latencyMs: Math.round(performance.now() - started) },
        migrations: { ok: false, error: 'not checked' },
      };
    }
    // A probe that timed out or could not connect is an outage; anything else is reported as such.
    const timedOut = err instanceof Error && err.message.startsWith('no answer within');
    const unavailable = isInfrastructureError(err) || timedOut;
    if (unavailable) noteDatabaseState(false, err);
    return {
      database: {
        ok: false,
        error: unavailable ? 'unavailable' : describeError(err),
        latencyMs: Math.round(performance.now() - started),
      },
      migrations: { ok: false, error: 'not checked' },
    };
  }
}

/** The readiness answer (also used in-process by tests and the shutdown sequence). */
async function readiness(timeoutMs = READY_TIMEOUT_MS): Promise<{ ready: boolean; body: HealthBody }> {
  const draining = isDraining();
  // A draining instance is not ready whatever the database says: no query needed.
  const checks: Record<string, CheckResult> = draining
    ? { draining: { ok: false } }
    : { draining: { ok: true }, ...(await databaseChecks(timeoutMs)) };
  const ready = Object.values(checks).every((c) => c.ok);
  const status = ready
    ? 'ready'
    : draining
      ? 'draining'
      : checks.database?.state === 'opening'
        ? 'starting'
        : 'unavailable';
  return { ready, body: { status, instance: instanceId(), checks } };
}

/** `GET /api/ready` (`timeoutMs`: the probe's budget, tests). */
export async function readyRoute(timeoutMs?: number): Promise<Response> {
  const { ready, body } = await readiness(timeoutMs);
  return new Response(JSON.stringify(body), { status: ready ? 200 : 503, headers: HEADERS });
}

/** `GET /api/health`: the process is alive (no database query). */
export function healthRoute(): Response {
  const body: HealthBody = {
    status: 'ok',
    instance: instanceId(),
    checks: { process: { ok: true, uptimeSeconds: Math.round(process.uptime()), draining: isDraining() } },
  };
  return new Response(JSON.stringify(body), { status: 200, headers: HEADERS });
}
