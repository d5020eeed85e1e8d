/**
 * The process's structured log: one JSON line per event that matters to an operator (a request
 * refused with its code, a run started/finished/failed/stopped, an approval decided, a limit hit,
 * the drain, the purge, a database outage), with `level`, `time`, `instance`, and whichever of
 * `requestId`, `runId`, `projectId`, `userId`, `traceId` apply.
 *
 * - One logger per process (a globalThis holder: Next.js may load this module twice), created on
 *   first use with LOG_LEVEL; `childLog(fields)` binds fields for a run or a job.
 * - The request a line belongs to is named by the code that has the request: `requestLog(req)`
 *   writes with the request's id (`requestLogContext`) and what `bindLogContext` added to it (project,
 *   user); a run gets its request's context when it starts. Kept beside the request object, not in
 *   an AsyncLocalStorage: on Node 20 every storage a process has used adds work to every promise it
 *   creates afterwards, in every request (docs/performance.md, "Async-local storages").
 * - Never a secret or a message body: callers log ids, codes and counts only, and as a safety net
 *   the logger censors known secret- and body-bearing fields and anything shaped like an API key
 *   secret or a bearer token in any string it writes, in a line's fields and in a child logger's
 *   bound fields alike (one walk of the fields, `scrubValue`).
 * - JSON on stdout, written synchronously (no line is lost when the process exits after a drain).
 *   For people: `npm run dev | npx pino-pretty` (optional, not a dependency).
 */
import 'server-only';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import pino, { type DestinationStream, type Logger } from 'pino';
import { env } from './env';
import { processWide } from '@/server/process-wide';

export type { Logger };

/** What a line may say about the request it belongs to (all optional; ids only). */
export interface LogContext {
  requestId?: string;
  projectId?: string;
  userId?: string;
  runId?: string;
  traceId?: string;
}

interface Holder {
  logger?: Logger;
  destination?: DestinationStream;
  /** Each request's context, by its request object (a WeakMap: gone with the request). */
  requests: WeakMap<Request, LogContext>;
  instanceId: string;
}
const holder: Holder = processWide<Holder>('__trackerLog', () => ({
  requests: new WeakMap(),
  // The host name is the pod or machine; the pid tells two instances on one machine apart.
  instanceId: `${os.hostname()}:${process.pid}`,
}));

/** This process's id in the log (and in readiness answers). */
export function instanceId(): string {
  return holder.instanceId;
}

/**
 * Fields that may hold a secret or a body, wherever a caller puts them (at any depth the walk
 * reaches): their values are replaced by `[redacted]`, whatever they hold.
 */
const REDACT_KEYS: ReadonlySet<string> = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'secret',
  'password',
  'passwordHash',
  'token',
  'apiKey',
  'secretHash',
  'body',
  'content',
  'delta',
  'message_body',
  'userMessage',
  'args',
  'headers',
]);
const REDACTED = '[redacted]';

/**
 * Shapes of secrets in free text (an error message quoting a header, a URL with a password): API
 * key secrets (`sk_…`), bearer and basic credentials, passwords in connection URLs.
 */
const SECRET_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/\bsk_[A-Za-z0-9_-]{8,}/g, 'sk_[redacted]'],
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}/gi, '$1 [redacted]'],
  [/(\b[a-z][a-z0-9+.-]*:\/\/[^:/@\s]+:)[^@\s]+@/gi, '$1[redacted]@'],
];

/** Censors secret-shaped text in a string. */
function scrubSecrets(text: string): string {
  let out = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) out = out.replace(pattern, replacement);
  return out;
}

/**
 * A line's fields as written: secret- and body-bearing fields censored, secret-shaped text scrubbed,
 * three levels deep (a copy; the caller's object is left as it was).
 */
function scrubValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (depth >= 3 || !value || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => scrubValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    out[k] = REDACT_KEYS.has(k) ? REDACTED : scrubValue((value as Record<string, unknown>)[k], depth + 1);
  }
  return out;
}

function createLogger(destination: DestinationStream | undefined): Logger {
  const settings = env();
  return pino(
    {
      level: settings.LOG_LEVEL ?? (settings.NODE_ENV === 'test' ? 'warn' : 'info'),
      base: { instance: holder.instanceId },
      timestamp: pino.stdTimeFunctions.isoTime,
      messageKey: 'msg',
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => scrubValue(obj, 0) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          // The message string goes through the same censor as the fields.
          const scrubbed = args.map((a) => (typeof a === 'string' ? scrubSecrets(a) : a)) as Parameters<typeof method>;
          method.apply(this, scrubbed);
        },
      },
    },
    destination ?? pino.destination({ dest: 1, sync: true }),
  );
}

/** The process's logger. */
export function log(): Logger {
  holder.logger ??= createLogger(holder.destination);
  return holder.logger;
}

/**
 * A logger with fields bound to every line it writes (a run, a job), censored as a line's fields are
 * (the logger's own formatting applies to the line, not to what a child binds).
 */
export function childLog(fields: LogContext & Record<string, unknown>): Logger {
  return log().child(scrubValue(fields, 0) as Record<string, unknown>);
}

/**
 * Sends the log somewhere else from now on (tests read the lines in-process); `undefined` goes
 * back to stdout. Also picks up a changed LOG_LEVEL.
 */
export function setLogDestination(destination: DestinationStream | undefined): void {
  holder.destination = destination;
  holder.logger = undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The request's id: the proxy's `X-Request-ID` when it is a plain token (nginx sends its
 * `$request_id`), else a new one. Anything else a client sends is ignored, never logged.
 */
function requestIdOf(req: Request): string {
  const given = req.headers.get('x-request-id');
  return given && REQUEST_ID.test(given) ? given : randomBytes(12).toString('hex');
}

/**
 * What the lines of `req` say about it: its id, made on first use, and what was bound to it since
 * (the same object for the whole request: a run started by it reads it when it starts).
 */
export function requestLogContext(req: Request): LogContext {
  let context = holder.requests.get(req);
  if (!context) {
    context = { requestId: requestIdOf(req) };
    holder.requests.set(req, context);
  }
  return context;
}

/** Adds what became known while handling the request (project, user) to its lines. */
export function bindLogContext(req: Request, fields: LogContext): void {
  Object.assign(requestLogContext(req), fields);
}

type Line = Record<string, unknown>;
/** Where a request's lines go (the levels a request writes at). */
export interface RequestLogger {
  info(line: Line, msg: string): void;
  warn(line: Line, msg: string): void;
  error(line: Line, msg: string): void;
}

/** The lines of the request `req`: each names it, with the fields bound to it (a line's own fields win). */
export function requestLog(req: Request): RequestLogger {
  const context = requestLogContext(req);
  const at =
    (level: keyof RequestLogger) =>
    (line: Line, msg: string): void =>
      log()[level]({ ...context, ...line }, msg);
  return { info: at('info'), warn: at('warn'), error: at('error') };
}

/**
 * A request refused with a stable code: `request.refused` (or `limit.hit` for 429), at `warn` for
 * the server's own trouble (5xx), `info` for the caller's (4xx); it names the request when given.
 */
export function logRefusal(
  req: Request | null,
  status: number,
  code: string,
  fields: Record<string, unknown> = {},
): void {
  const event = status === 429 ? 'limit.hit' : 'request.refused';
  const line = { event, status, code, ...fields };
  const logger = req ? requestLog(req) : log();
  if (status >= 500) logger.warn(line, `request refused: ${code}`);
  else logger.info(line, `request refused: ${code}`);
}
