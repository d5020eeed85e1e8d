/**
 * Server-side log of unexpected tRPC failures. The client only sees a generic message (see the
 * error formatter in ./trpc.ts); operators see which procedure failed, the error's class and code,
 * and where in the code. Never the request input, never an error message that may quote it (Prisma
 * messages echo query arguments), never headers or cookies.
 */
import 'server-only';
import type { TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import { describeError } from './errors';
import { noteDatabaseState } from './health';
import { logRefusal, requestLog } from './log';
import { isInvalidTextError } from './text';
import { DATABASE_UNAVAILABLE_APP_CODE, isDatabaseUnavailable } from './trpc';

/** Programming errors whose messages describe the code, not the data. */
const SAFE_MESSAGE_ERRORS = new Set(['TypeError', 'ReferenceError', 'RangeError']);
const MAX_FRAMES = 10;

export interface TrpcErrorEvent {
  error: TRPCError;
  path?: string | undefined;
  type: string;
  /** The request the procedure answered: its lines name it. */
  req: Request;
}

/** One log entry for an unexpected failure; null for errors that are the caller's (4xx). */
function describeTrpcFailure({ error, path, type }: TrpcErrorEvent): string | null {
  if (error.code !== 'INTERNAL_SERVER_ERROR') return null;
  // Text the database refused (NUL) is answered as BAD_REQUEST: the caller's fault, not ours.
  if (isInvalidTextError(error.cause)) return null;
  const cause: unknown = error.cause ?? error;
  const c = (cause && typeof cause === 'object' ? cause : {}) as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    stack?: unknown;
  };
  const name = typeof c.name === 'string' ? c.name : 'Error';
  const code = typeof c.code === 'string' || typeof c.code === 'number' ? ` code=${String(c.code)}` : '';
  const message =
    SAFE_MESSAGE_ERRORS.has(name) && typeof c.message === 'string'
      ? ` message=${JSON.stringify(c.message.slice(0, 200))}`
      : '';
  const frames =
    typeof c.stack === 'string'
      ? c.stack
          .split('\n')
          .filter((l) => /^\s+at /.test(l))
          .slice(0, MAX_FRAMES)
      : [];
  return [`tRPC ${type} ${path ?? '(unknown procedure)'} failed: ${name}${code}${message}`, ...frames].join('\n');
}

/**
 * `onError` of the tRPC route handler: an unexpected failure is one `request.failed` line (procedure,
 * class, code, frames); a refusal (4xx, or 503 while the database is away) is one `request.refused`
 * line with its status and stable code.
 */
export function logTrpcError(event: TrpcErrorEvent): void {
  const { error, path, type, req } = event;
  if (isDatabaseUnavailable(error)) {
    noteDatabaseState(false, error.cause);
    logRefusal(req, 503, DATABASE_UNAVAILABLE_APP_CODE, { procedure: path ?? null, error: describeError(error.cause) });
    return;
  }
  const line = describeTrpcFailure(event);
  if (line) {
    const [summary, ...frames] = line.split('\n');
    const where = { procedure: path ?? null, type, frames: frames.map((f) => f.trim()) };
    requestLog(req).error({ event: 'request.failed', code: 'INTERNAL_ERROR', ...where }, summary ?? 'request failed');
    return;
  }
  const appCode = (error.cause as { appCode?: unknown } | undefined)?.appCode;
  const code = typeof appCode === 'string' ? appCode : error.code;
  logRefusal(req, getHTTPStatusCodeFromError(error), code, { procedure: path ?? null });
}
