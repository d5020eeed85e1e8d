/**
 * What the panel says for an error: the wording and Retry rule of each stable code come from the
 * module's one table (`error-codes.ts`); the server's message adds a detail where it has one.
 */
import { AGENT_ERRORS, isAgentErrorCode } from '../error-codes';

export interface PanelError {
  code?: string;
  message: string;
  /** Whether "Retry" (resend the last user message) makes sense. */
  retryable: boolean;
}

/** Codes of the panel's own (no server code): a proxy's answer, a broken connection. */
const PANEL_ONLY: Record<string, { text: string; retryable: boolean }> = {
  UNAVAILABLE: { text: 'The service is briefly unavailable. Wait a moment and retry.', retryable: true },
  NETWORK: { text: 'The connection was interrupted.', retryable: true },
};

function specOf(code: string | undefined): { text: string; retryable: boolean } | undefined {
  if (!code) return undefined;
  return isAgentErrorCode(code) ? AGENT_ERRORS[code] : PANEL_ONLY[code];
}

/** Codes whose server message carries a detail the fixed wording lacks (which field, which tool). */
const WITH_DETAIL = new Set([
  'INVALID_REQUEST',
  'MODEL_ERROR',
  'MODEL_UNAVAILABLE',
  'TOOL_ERROR',
  'INTERRUPT_INVALID_ARGS',
  'INTERRUPT_INVALID_ANSWER',
]);
/**
 * Codes whose server message is the more precise wording (e.g. "Try again in 12 s.", "photo.jpg is
 * 12.4 MB; a file may be 10 MB at most.", which budget is spent and when it renews).
 */
const SERVER_WORDING = new Set([
  'RATE_LIMITED',
  'BUDGET_EXCEEDED',
  'ATTACHMENT_TOO_LARGE',
  'ATTACHMENT_IMAGE_TOO_LARGE',
  'ATTACHMENT_NOT_SUPPORTED_BY_MODEL',
  'ATTACHMENTS_TOO_MANY',
  'ATTACHMENTS_CONVERSATION_FULL',
]);

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

export function describeError(code: string | undefined, serverMessage?: string): PanelError {
  const spec = specOf(code);
  const base = spec?.text;
  let message: string;
  if (!base) message = serverMessage || 'Something went wrong.';
  else if (!serverMessage || serverMessage === base || base.includes(serverMessage)) message = base;
  else if (code && SERVER_WORDING.has(code)) message = serverMessage;
  // The server said the same sentence, only more precisely ("… for create_issue."): say it once.
  else if (code && WITH_DETAIL.has(code) && sharedPrefix(base, serverMessage) >= 20) message = serverMessage;
  else if (code && WITH_DETAIL.has(code)) message = `${base} (${serverMessage})`;
  // Otherwise the server message only restates the code in other words: say it once.
  else message = base;
  return { code, message, retryable: spec?.retryable ?? true };
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
