/**
 * Stable error codes of the MCP endpoint and helpers to answer with JSON-RPC error bodies.
 *
 * Transport-level failures (HTTP status + JSON-RPC error body, `id: null`) and refusals of a
 * `tools/call` (JSON-RPC error of that request) carry the stable code in `error.data.code`.
 * Failures while running a tool (invalid arguments, issue not found, webhook down) are tool results
 * with `isError: true` and `structuredContent.error.code`, so a model can read and correct them.
 */
import 'server-only';
import { logRefusal } from '@/server/log';

/** JSON-RPC error numbers used by this server. */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** Transport problems (method not allowed, body too large, media types, server unavailable). */
  TRANSPORT: -32000,
  /** Missing, invalid, revoked or expired API key or access token. */
  UNAUTHENTICATED: -32010,
  /** The key or token may not run this tool (scope, read-only key, override refused). */
  FORBIDDEN: -32011,
  /** Too many tool calls with this key in the last minute (HTTP 429 with Retry-After). */
  RATE_LIMITED: -32029,
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
  /** MCP_CALLS_PER_KEY_PER_MINUTE used up: HTTP 429, Retry-After, JSON-RPC -32029. */
  'RATE_LIMITED',
  /** An `Mcp-Session-Id` that is forged, expired or another key's: HTTP 404, start a new session. */
  'SESSION_NOT_FOUND',
  /** A JSON-RPC response for which no question of the server waits (unknown, answered, expired): 400. */
  'RESPONSE_NOT_EXPECTED',
  // authentication
  'MISSING_CREDENTIALS',
  'INVALID_KEY',
  'KEY_REVOKED',
  'KEY_EXPIRED',
  /** OAuth access tokens (connected apps): unknown, expired, revoked, or issued for another resource. */
  'INVALID_TOKEN',
  'TOKEN_EXPIRED',
  'TOKEN_REVOKED',
  'WRONG_AUDIENCE',
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
  /** Several members match the name given; a client without elicitation gets the choices to pick from. */
  'AMBIGUOUS_ASSIGNEE',
  /** The user declined (or dismissed) the server's question: nothing changed. */
  'CHOICE_DECLINED',
  /** The user did not answer the server's question in time: nothing changed. */
  'CHOICE_TIMED_OUT',
  /** The client's answer was not one of the choices offered: nothing changed. */
  'CHOICE_INVALID',
  'WEBHOOK_NOT_CONFIGURED',
  'WEBHOOK_FAILED',
  'WEBHOOK_URL_REFUSED',
  /** The tool-call ledger (ledger.ts): an assistant's call repeated with other arguments. */
  'TOOL_CALL_CONFLICT',
  /** An outside call that started before the assistant's server stopped: not sent again. */
  'OUTCOME_UNKNOWN',
  /** The assistant's run ended, or another server goes on with it: its old key makes no call. */
  'RUN_ENDED',
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
  /** The request refused (null: none, as for a method the endpoint does not take): its line names it. */
  req: Request | null,
  status: number,
  rpcCode: number,
  appCode: McpErrorCode,
  message: string,
  headers: Record<string, string> = {},
  /** The id of the refused request, when the body was one request (null: the body as a whole). */
  id: string | number | null = null,
): Response {
  // Every transport-level refusal of the endpoint goes through here: one log line each.
  logRefusal(req, status, appCode, { endpoint: 'mcp' });
  return new Response(
    JSON.stringify({
      jsonrpc: '2.0',
      error: { code: rpcCode, message: `${message} (${appCode})`, data: { code: appCode } },
      id,
    }),
    { status, headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers } },
  );
}

// Shared with every route of the product (the agent routes, tRPC, readiness): one definition of
// "the database is unavailable" and of a log-safe error description.
export { describeError, isInfrastructureError } from '@/server/errors';
