/**
 * Stable error codes of the MCP endpoint and helpers to answer with JSON-RPC error bodies.
 *
 * Transport-level failures (HTTP status + JSON-RPC error body, `id: null`) and refusals of a
 * `tools/call` (JSON-RPC error of that request) carry the stable code in `error.data.code`.
 * Failures while running a tool (invalid arguments, issue not found, webhook down) are tool results
 * with `isError: true` and `structuredContent.error.code`, so a model can read and correct them.
 */
import { storable } from './text';

/** JSON-RPC error numbers used by this server. */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Transport problems (method not allowed, body too large, media types, server unavailable). */
  TRANSPORT: -32000,
  /** Missing, invalid, revoked or expired API key. */
  UNAUTHENTICATED: -32010,
  /** The key may not run this tool (scope, read-only key, override refused). */
  FORBIDDEN: -32011,
} as const;

export const MCP_ERROR_CODES = [
  // transport
  'METHOD_NOT_ALLOWED',
  'PAYLOAD_TOO_LARGE',
  'JSON_TOO_DEEP',
  'PARSE_ERROR',
  'INVALID_REQUEST',
  'UNSUPPORTED_MEDIA_TYPE',
  'NOT_ACCEPTABLE',
  'UNSUPPORTED_PROTOCOL_VERSION',
  'METHOD_NOT_FOUND',
  'SERVICE_UNAVAILABLE',
  // authentication
  'MISSING_CREDENTIALS',
  'INVALID_KEY',
  'KEY_REVOKED',
  'KEY_EXPIRED',
  // authorization of a call
  'UNKNOWN_TOOL',
  'MISSING_SCOPE',
  'OVERRIDE_REQUIRED',
  'OVERRIDE_INVALID',
  'OVERRIDE_EXPIRED',
  'OVERRIDE_REUSED',
  'OVERRIDE_WRONG_TOOL',
  'OVERRIDE_WRONG_ARGS',
  'OVERRIDE_WRONG_KEY',
  // tool execution (the tracker's own codes pass through unchanged)
  'INVALID_ARGUMENTS',
  'PROJECT_NOT_FOUND',
  'ISSUE_NOT_FOUND',
  'USER_NOT_FOUND',
  'NOT_A_MEMBER',
  'LABEL_NOT_FOUND',
  'WEBHOOK_NOT_CONFIGURED',
  'WEBHOOK_FAILED',
  'WEBHOOK_URL_REFUSED',
  'INTERNAL_ERROR',
] as const;
export type McpErrorCode = (typeof MCP_ERROR_CODES)[number];

/**
 * Thrown from a request handler to answer a JSON-RPC error. It is a plain `Error` (not the SDK's
 * `McpError`) so the message reaches the client as written, with the stable code in `data.code`.
 */
export class McpRefusal extends Error {
  readonly code: number;
  readonly data: { code: McpErrorCode } & Record<string, unknown>;
  constructor(rpcCode: number, appCode: McpErrorCode, message: string, extra: Record<string, unknown> = {}) {
    super(`${message} (${appCode})`);
    this.code = rpcCode;
    this.data = { code: appCode, ...extra };
  }
}

/** Thrown by tool handlers for expected failures; becomes an `isError: true` tool result. */
export class ToolFailure extends Error {
  constructor(
    readonly appCode: McpErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export function jsonRpcErrorResponse(
  status: number,
  rpcCode: number,
  appCode: McpErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  return new Response(
    JSON.stringify({ jsonrpc: '2.0', error: { code: rpcCode, message: `${message} (${appCode})`, data: { code: appCode } }, id: null }),
    { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } },
  );
}

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
const UNAVAILABLE_SOCKET_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EPIPE']);

/**
 * True when `err` says the database is down or unreachable (not that a query was wrong): such
 * failures answer 503 SERVICE_UNAVAILABLE, which a client may retry, instead of 500.
 */
export function isInfrastructureError(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const e = err as {
    name?: unknown;
    code?: unknown;
    message?: unknown;
    meta?: { driverAdapterError?: { cause?: { kind?: unknown; originalCode?: unknown; code?: unknown } } };
  };
  if (e.name === 'PrismaClientInitializationError') return true;
  if (typeof e.code === 'string' && (UNAVAILABLE_PRISMA_CODES.has(e.code) || UNAVAILABLE_SOCKET_CODES.has(e.code))) return true;
  const cause = e.meta?.driverAdapterError?.cause;
  if (cause && typeof cause.kind === 'string') {
    if (UNAVAILABLE_ADAPTER_KINDS.has(cause.kind)) return true;
    // PostgreSQL SQLSTATE classes 08 (connection exception), 53 (insufficient resources) and
    // 57P01-57P03 (server shutting down or starting).
    const sqlState = typeof cause.originalCode === 'string' ? cause.originalCode : typeof cause.code === 'string' ? cause.code : '';
    if (/^(08|53)|^57P0[123]$/.test(sqlState)) return true;
  }
  // The embedded database after it was closed.
  return e.message === 'PGlite is closed';
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
