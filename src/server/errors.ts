/**
 * Infrastructure failures told apart from programming and data errors. A request that fails
 * because the database is down, restarting, unreachable or out of connections is answered
 * `503 DATABASE_UNAVAILABLE` with `Retry-After` (a client may retry), never `500`.
 *
 * The shapes recognised: Prisma's own error codes (and a transaction that could not start because
 * every pooled connection stayed busy), the driver adapters' error kinds (`pg` and
 * PGlite, under `meta.driverAdapterError.cause`), `pg`'s and Node's socket errors, PostgreSQL's
 * SQLSTATE classes for connection trouble, `pg-pool`'s connect timeout, and the same anywhere in
 * the `cause` chain (Prisma and tRPC wrap errors).
 */
import 'server-only';
import { storable } from '@/features/mcp/text';

/** Thrown by our own code when the database could not be used (a probe timed out, shutting down). */
class DatabaseUnavailableError extends Error {
  readonly code = 'DATABASE_UNAVAILABLE' as const;
  constructor(message = 'The database is unavailable.') {
    super(message);
    this.name = 'DatabaseUnavailableError';
  }
}

/** Seconds a client is told to wait before retrying a request refused while the database is away. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Prisma error codes meaning the database could not be reached or did not answer in time. */
const UNAVAILABLE_PRISMA_CODES: ReadonlySet<string> = new Set(['P1001', 'P1002', 'P1008', 'P1017', 'P2024']);
/** Driver-adapter error kinds with the same meaning. */
const UNAVAILABLE_ADAPTER_KINDS: ReadonlySet<string> = new Set([
  'DatabaseNotReachable',
  'DatabaseDoesNotExist',
  'DatabaseAccessDenied',
  'AuthenticationFailed',
  'ConnectionClosed',
  'SocketTimeout',
  'TooManyConnections',
]);
/** Socket errors of a database driver used without Prisma. */
const UNAVAILABLE_SOCKET_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
/**
 * PostgreSQL SQLSTATE classes 08 (connection exception), 53 (insufficient resources: too many
 * connections, out of memory) and 57P01-57P03 (administrator shutdown, crash shutdown, cannot
 * connect now: the server is stopping or starting).
 */
const UNAVAILABLE_SQLSTATE = /^(08|53)[0-9A-Z]{3}$|^57P0[123]$/;
/** Messages of `pg` and `pg-pool` that carry no code. */
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Cannot use a pool after calling end on the pool',
  'PGlite is closed',
];

function isInfrastructureErrorShallow(err: object): boolean {
  const e = err as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    kind?: unknown;
    meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown; code?: unknown } } };
  };
  if (err instanceof DatabaseUnavailableError || e.name === 'PrismaClientInitializationError') return true;
  if (typeof e.code === 'string') {
    if (UNAVAILABLE_PRISMA_CODES.has(e.code) || UNAVAILABLE_SOCKET_CODES.has(e.code)) return true;
    // P2028 is any transaction API error; only "could not start in time" means every pooled
    // connection was busy (the pool is saturated: retry later), not a mistake in the transaction.
    if (e.code === 'P2028' && typeof e.message === 'string' && e.message.includes('Unable to start a transaction')) {
      return true;
    }
    // A `pg` error straight from the driver carries the SQLSTATE as `code`.
    if (UNAVAILABLE_SQLSTATE.test(e.code)) return true;
  }
  const cause = e.meta?.driverAdapterError?.cause ?? (typeof e.kind === 'string' ? (e as { kind: string }) : undefined);
  if (cause && typeof cause.kind === 'string') {
    if (UNAVAILABLE_ADAPTER_KINDS.has(cause.kind)) return true;
    const c = cause as { originalCode?: unknown; code?: unknown };
    const sqlState = typeof c.originalCode === 'string' ? c.originalCode : typeof c.code === 'string' ? c.code : '';
    if (UNAVAILABLE_SQLSTATE.test(sqlState)) return true;
  }
  if (typeof e.message === 'string') {
    const message = e.message;
    if (UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
  }
  return false;
}

/**
 * True when `err` (or an error it wraps) says the database is down or unreachable, not that a
 * query was wrong: such failures answer 503, which a client may retry, instead of 500.
 */
export function isInfrastructureError(err: unknown): boolean {
  let current: unknown = err;
  // A bounded walk down the cause chain (tRPC → Prisma → adapter → driver); never a cycle.
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth++) {
    if (isInfrastructureErrorShallow(current)) return true;
    const next: unknown = (current as { cause?: unknown }).cause;
    if (next === current) break;
    current = next;
  }
  return false;
}

/**
 * A log-safe description of an unexpected error: class, code and the last line of the message
 * (Prisma puts the database's own reason there), escaped and capped; never the stack.
 */
export function describeError(err: unknown): string {
  if (!err || typeof err !== 'object') return typeof err;
  const e = err as { name?: unknown; code?: unknown; message?: unknown };
  const name = typeof e.name === 'string' ? e.name : 'Error';
  const code = typeof e.code === 'string' || typeof e.code === 'number' ? ` ${String(e.code)}` : '';
  const lines = typeof e.message === 'string' ? e.message.split('\n').filter((l) => l.trim() !== '') : [];
  const last = lines.at(-1)?.trim() ?? '';
  return storable(`${name}${code}${last ? `: ${last}` : ''}`, 300);
}

/** Where in the code an error was thrown: the stack's frames only (never its message). */
export function stackFrames(err: unknown, max = 10): string[] {
  const stack = err && typeof err === 'object' ? (err as { stack?: unknown }).stack : undefined;
  if (typeof stack !== 'string') return [];
  return stack
    .split('\n')
    .filter((l) => /^\s+at /.test(l))
    .slice(0, max)
    .map((l) => l.trim());
}

export interface RetryOptions {
  /** Give up (rethrow the last error) once this much time has passed since the first attempt. */
  budgetMs: number;
  /** First pause between attempts; doubles up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Called before each retry (logging). */
  onRetry?: (err: unknown, attempt: number) => void;
}

/**
 * Runs `work`, and again while it fails because the database is unavailable, within a time
 * budget: a write made while the database restarts lands once it is back. Any other error, and
 * the last one after the budget, is thrown. Only for work that is safe to repeat (one statement,
 * idempotent, or refused by a constraint when it already happened).
 */
export async function retryWhileUnavailable<T>(work: () => Promise<T>, opts: RetryOptions): Promise<T> {
  const started = Date.now();
  let delay = opts.initialDelayMs ?? 200;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (err) {
      if (!isInfrastructureError(err) || Date.now() - started + delay > opts.budgetMs) throw err;
      opts.onRetry?.(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, opts.maxDelayMs ?? 2_000);
    }
  }
}
