/** User-facing wording for the agent route's stable error codes. */

export interface PanelError {
  code?: string;
  message: string;
  /** Whether "Retry" (resend the last user message) makes sense. */
  retryable: boolean;
}

const TEXT: Record<string, string> = {
  UNAUTHENTICATED: 'Your session has ended. Sign in again to keep using the assistant.',
  CROSS_ORIGIN: 'The request was refused because it did not come from this site.',
  PROJECT_NOT_FOUND: 'This project no longer exists or you no longer have access to it.',
  CONVERSATION_NOT_FOUND: 'This conversation no longer exists. Start a new one.',
  FORBIDDEN: 'Your role in this project does not allow that.',
  INVALID_REQUEST: 'The request was not accepted.',
  PAYLOAD_TOO_LARGE: 'That message is too long. Shorten it and try again.',
  NO_USER_MESSAGE: 'Type a message first.',
  RUN_IN_PROGRESS:
    'The assistant is still answering in this conversation (maybe in another tab). Wait a moment and retry.',
  RATE_LIMITED: 'Too many requests. Wait a moment and retry.',
  TOO_MANY_RUNS:
    'The assistant is already writing as many answers for you as it can at once (in other conversations or ' +
    'tabs). Wait for one of them to finish, then retry.',
  MODEL_ERROR: 'The model failed to answer.',
  MODEL_RATE_LIMITED: 'The model is rate limited right now. Wait a moment and retry.',
  MODEL_OVERLOADED:
    "The model's provider is overloaded right now and could not take the request. Wait a moment and retry.",
  MODEL_UNAVAILABLE: 'The model is not reachable right now.',
  MODEL_TIMEOUT: 'The model stopped responding, so the answer was ended.',
  TOOL_ERROR: 'A tool failed while answering.',
  RUN_STALE:
    'The server that was writing this answer stopped, so the answer was ended. What was already written is kept; ' +
    'Retry asks again.',
  TOOLS_UNAVAILABLE:
    "The assistant could not reach this project's tools just now, so it did not answer (without them it " +
    'could not look at or change anything here). Wait a moment and retry.',
  RESUME_WITH_MESSAGE: 'Answer the pending approvals first, then send your message.',
  RUN_NOT_FOUND: 'That answer is no longer available. It may have been deleted.',
  VERSION_NOT_FOUND: 'That message is not part of this conversation any more (maybe changed in another tab).',
  INTERNAL_ERROR: 'Something went wrong.',
  INTERRUPT_UNKNOWN: 'That approval request is no longer known.',
  INTERRUPT_NOT_YOURS: 'That approval request belongs to someone else.',
  INTERRUPT_ALREADY_DECIDED: 'That approval request was already answered (maybe in another tab).',
  INTERRUPT_EXPIRED: 'That approval request has expired.',
  INTERRUPT_ANSWER_MISSING: 'Every pending approval must be answered together.',
  INTERRUPT_ANSWER_DUPLICATE: 'An approval was answered twice.',
  INTERRUPT_INVALID_ARGS: 'The edited arguments are not valid for this tool.',
  INTERRUPT_FINGERPRINT_MISMATCH: 'The approved arguments do not match the request.',
  DATABASE_UNAVAILABLE: 'The service is briefly unavailable (its database cannot be reached). Wait a moment and retry.',
  DRAINING: 'The server is restarting. Retry in a moment.',
  UNAVAILABLE: 'The service is briefly unavailable. Wait a moment and retry.',
  NETWORK: 'The connection was interrupted.',
};

const NOT_RETRYABLE = new Set([
  'UNAUTHENTICATED',
  'CROSS_ORIGIN',
  'PROJECT_NOT_FOUND',
  'CONVERSATION_NOT_FOUND',
  'FORBIDDEN',
  'PAYLOAD_TOO_LARGE',
  'NO_USER_MESSAGE',
  'RESUME_WITH_MESSAGE',
  'RUN_NOT_FOUND',
  'VERSION_NOT_FOUND',
]);

/** Codes whose server message carries a detail the fixed wording lacks (which field, which tool). */
const WITH_DETAIL = new Set([
  'INVALID_REQUEST',
  'MODEL_ERROR',
  'MODEL_UNAVAILABLE',
  'TOOL_ERROR',
  'INTERRUPT_INVALID_ARGS',
]);
/** Codes whose server message is the more precise wording (e.g. "Try again in 12 s."). */
const SERVER_WORDING = new Set(['RATE_LIMITED']);

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

export function describeError(code: string | undefined, serverMessage?: string): PanelError {
  const base = code ? TEXT[code] : undefined;
  let message: string;
  if (!base) message = serverMessage || 'Something went wrong.';
  else if (!serverMessage || serverMessage === base || base.includes(serverMessage)) message = base;
  else if (code && SERVER_WORDING.has(code)) message = serverMessage;
  // The server said the same sentence, only more precisely ("… for create_issue."): say it once.
  else if (code && WITH_DETAIL.has(code) && sharedPrefix(base, serverMessage) >= 20) message = serverMessage;
  else if (code && WITH_DETAIL.has(code)) message = `${base} (${serverMessage})`;
  // Otherwise the server message only restates the code in other words: say it once.
  else message = base;
  return { code, message, retryable: !code || !NOT_RETRYABLE.has(code) };
}

/** The panel's error for an HTTP answer that is not a stream: the `{error:{code,message}}` body, else the status. */
export function errorFromResponse(status: number, body: unknown): PanelError {
  const error = (body as { error?: { code?: unknown; message?: unknown } } | null)?.error;
  const code = typeof error?.code === 'string' ? error.code : undefined;
  const message = typeof error?.message === 'string' ? error.message : undefined;
  if (code || message) return describeError(code, message);
  if (status === 401) return describeError('UNAUTHENTICATED');
  if (status === 429) return describeError('RATE_LIMITED');
  // A 502/503/504 without our body (a proxy's own answer while instances restart).
  if (status === 502 || status === 503 || status === 504) return describeError('UNAVAILABLE');
  return describeError(status >= 500 ? 'INTERNAL_ERROR' : 'INVALID_REQUEST');
}
