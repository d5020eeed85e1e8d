/**
 * Every stable error code of the assistant, once: the HTTP status a request refused with it gets
 * (null for codes that only end a run, as RUN_ERROR), whether asking again can help (the panel
 * offers Retry), and what the panel says. The route, the run, the resume and the panel all read
 * this table; `AgentRefusal` is the one error a refusal is thrown as. Isomorphic: no Node or
 * browser APIs.
 */

interface ErrorSpec {
  /** HTTP status of a request refused with this code; null: the code only ends a run (RUN_ERROR). */
  status: number | null;
  /** Whether asking again (Retry) can help. */
  retryable: boolean;
  /** What the panel says (the server's own message may add a detail, see components/errors.ts). */
  text: string;
}

export const AGENT_ERRORS = {
  UNAUTHENTICATED: {
    status: 401,
    retryable: false,
    text: 'Your session has ended. Sign in again to keep using the assistant.',
  },
  CROSS_ORIGIN: {
    status: 403,
    retryable: false,
    text: 'The request was refused because it did not come from this site.',
  },
  PROJECT_NOT_FOUND: {
    status: 404,
    retryable: false,
    text: 'This project no longer exists or you no longer have access to it.',
  },
  CONVERSATION_NOT_FOUND: {
    status: 404,
    retryable: false,
    text: 'This conversation no longer exists. Start a new one.',
  },
  /** A run that does not exist, or one the caller may not see (the same answer). */
  RUN_NOT_FOUND: {
    status: 404,
    retryable: false,
    text: 'That answer is no longer available. It may have been deleted.',
  },
  FORBIDDEN: { status: 403, retryable: false, text: 'Your role in this project does not allow that.' },
  INVALID_REQUEST: { status: 400, retryable: true, text: 'The request was not accepted.' },
  PAYLOAD_TOO_LARGE: { status: 413, retryable: false, text: 'That message is too long. Shorten it and try again.' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, retryable: true, text: 'The request was not accepted.' },
  NO_USER_MESSAGE: { status: 400, retryable: false, text: 'Type a message first.' },
  /** A resume that also carries a new user message: answer the approvals first. */
  RESUME_WITH_MESSAGE: {
    status: 400,
    retryable: false,
    text: 'Answer the pending approvals first, then send your message.',
  },
  RUN_IN_PROGRESS: {
    status: 409,
    retryable: true,
    text: 'The assistant is still answering in this conversation (maybe in another tab). Wait a moment and retry.',
  },
  /** The conversation reached LIMITS.maxRunsPerConversation: start a new one. */
  CONVERSATION_TOO_LONG: {
    status: 409,
    retryable: true,
    text: 'This conversation is as long as a conversation can be. Start a new one to go on.',
  },
  /** A version of a turn that is not in the conversation's shown path. */
  VERSION_NOT_FOUND: {
    status: 404,
    retryable: false,
    text: 'That message is not part of this conversation any more (maybe changed in another tab).',
  },
  /** Too many runs started in the last minute (AGENT_RATE_LIMIT_PER_MINUTE): 429 with Retry-After. */
  RATE_LIMITED: { status: 429, retryable: true, text: 'Too many requests. Wait a moment and retry.' },
  /**
   * The user already has AGENT_MAX_CONCURRENT_RUNS_PER_USER answers running (any conversation, any
   * instance): 429 with Retry-After. Runs waiting for an approval are not running.
   */
  TOO_MANY_RUNS: {
    status: 429,
    retryable: true,
    text:
      'The assistant is already writing as many answers for you as it can at once (in other conversations or ' +
      'tabs). Wait for one of them to finish, then retry.',
  },
  /**
   * A budget of the project's assistant is spent for its window (a member's day or month, the
   * project's month): 429 with Retry-After = the window's end; the message names the budget.
   * Retry cannot help before then. 429, not 402: the request is refused for what was used in a
   * period, which 429 with Retry-After says to any HTTP client and proxy; 402 has no defined
   * meaning, suggests that paying would help (a member cannot), and clients ignore Retry-After on it.
   */
  BUDGET_EXCEEDED: {
    status: 429,
    retryable: false,
    text: 'The assistant budget for this period is spent, so no new answer can start until it renews.',
  },
  MODEL_ERROR: { status: null, retryable: true, text: 'The model failed to answer.' },
  /** The provider is throttling this account's requests or tokens (429, ThrottlingException). */
  MODEL_RATE_LIMITED: {
    status: null,
    retryable: true,
    text: 'The model is rate limited right now. Wait a moment and retry.',
  },
  /**
   * The provider answered that it is too busy to take the request (503 "overloaded", 529, Bedrock's
   * ServiceUnavailableException or ModelNotReadyException): retry in a moment.
   */
  MODEL_OVERLOADED: {
    status: null,
    retryable: true,
    text: "The model's provider is overloaded right now and could not take the request. Wait a moment and retry.",
  },
  /**
   * The provider could not be reached (connection refused, DNS, a gateway's 502/504); also the
   * refusal of a request when no model is configured correctly (503).
   */
  MODEL_UNAVAILABLE: { status: 503, retryable: true, text: 'The model is not reachable right now.' },
  /** The model stream stalled (no output for LIMITS.modelIdleTimeoutMs). */
  MODEL_TIMEOUT: { status: null, retryable: true, text: 'The model stopped responding, so the answer was ended.' },
  TOOL_ERROR: { status: null, retryable: true, text: 'A tool failed while answering.' },
  /** The product's tools could not be listed within the set-up budget: the run did not go on without them. */
  TOOLS_UNAVAILABLE: {
    status: null,
    retryable: true,
    text:
      "The assistant could not reach this project's tools just now, so it did not answer (without them it " +
      'could not look at or change anything here). Wait a moment and retry.',
  },
  RUN_STALE: {
    status: null,
    retryable: true,
    text:
      'The server that was writing this answer stopped, so the answer was ended. What was already written is kept; ' +
      'Retry asks again.',
  },
  /** The run's instance stopped more often than LIMITS.maxTakeovers: it is not taken over again. */
  RUN_TAKEOVER_LIMIT: {
    status: null,
    retryable: true,
    text:
      'The servers writing this answer stopped several times in a row, so it was ended rather than tried again. ' +
      'What was already written is kept; Retry asks again.',
  },
  INTERNAL_ERROR: { status: 500, retryable: true, text: 'Something went wrong.' },
  /** The database is unreachable right now (503 with Retry-After): retry shortly. */
  DATABASE_UNAVAILABLE: {
    status: 503,
    retryable: true,
    text: 'The service is briefly unavailable (its database cannot be reached). Wait a moment and retry.',
  },
  /** This server is shutting down and takes no new runs (503 with Retry-After): retry (another one answers). */
  DRAINING: { status: 503, retryable: true, text: 'The server is restarting. Retry in a moment.' },
  // attachments (server/attachments.ts): each refusal leaves what was typed and attached in place
  /** One file is over AGENT_ATTACHMENT_MAX_BYTES (counted while it is read). */
  ATTACHMENT_TOO_LARGE: {
    status: 413,
    retryable: false,
    text: 'That file is too large to attach.',
  },
  /** Its bytes are none of the kinds a message may attach (whatever its name or the browser said). */
  ATTACHMENT_TYPE_NOT_ALLOWED: {
    status: 415,
    retryable: false,
    text:
      'That kind of file cannot be attached. Attach an image (PNG, JPEG, WebP, GIF), a text file (plain text, ' +
      'Markdown, CSV, JSON) or, when the model reads them, a PDF.',
  },
  /** A damaged file: a broken or cut-off image or PDF, text that is not UTF-8. */
  ATTACHMENT_UNREADABLE: {
    status: 422,
    retryable: false,
    text: 'That file could not be read: it is damaged, cut off, or not the kind of file its content starts as.',
  },
  /** An image whose pixels (read from its header) are beyond what is decoded: a decompression bomb or a huge scan. */
  ATTACHMENT_IMAGE_TOO_LARGE: {
    status: 422,
    retryable: false,
    text: 'That image has too many pixels to be read. Attach a smaller image or a screenshot of the part that matters.',
  },
  /** The configured model reads no images (AGENT_MODEL_VISION) or no PDFs (AGENT_MODEL_DOCUMENTS). */
  ATTACHMENT_NOT_SUPPORTED_BY_MODEL: {
    status: 422,
    retryable: false,
    text: 'The configured model cannot read this kind of attachment. Remove it, or ask an administrator to configure a model that can.',
  },
  /** An attachment id that is not an upload of this user in this project and conversation (or was removed). */
  ATTACHMENT_NOT_FOUND: {
    status: 404,
    retryable: false,
    text: 'An attached file is no longer available. Remove it and attach it again.',
  },
  /** More files than AGENT_ATTACHMENTS_PER_MESSAGE in one message. */
  ATTACHMENTS_TOO_MANY: {
    status: 400,
    retryable: false,
    text: 'Too many files for one message. Remove some, or send them in another message.',
  },
  /** The conversation's attachments would pass AGENT_ATTACHMENT_BYTES_PER_CONVERSATION. */
  ATTACHMENTS_CONVERSATION_FULL: {
    status: 409,
    retryable: false,
    text: 'This conversation holds as many attachments as it can. Start a new conversation to attach more.',
  },
  /** Too many uploads waiting to be sent (LIMITS.maxPendingAttachments): send or remove some first. */
  ATTACHMENT_UPLOADS_PENDING: {
    status: 429,
    retryable: false,
    text: 'You have too many attached files waiting to be sent. Send or remove some first.',
  },
  /** The object store holding attachments could not be reached (503 with Retry-After), or images are being processed at capacity. */
  ATTACHMENT_STORAGE_UNAVAILABLE: {
    status: 503,
    retryable: true,
    text: 'Attachments cannot be stored or read right now. Wait a moment and retry.',
  },
  /**
   * The project's saved tool permissions do not read as a policy (changed around the settings page):
   * no run goes by settings it cannot read. An admin saving them again fixes it.
   */
  SETTINGS_UNREADABLE: {
    status: 500,
    retryable: false,
    text: "The assistant's settings for this project could not be read. Ask a project admin to save its tool permissions again.",
  },
  // approvals and other interrupts
  /** Also the answer for another user's or another conversation's interrupt: existence is not revealed. */
  INTERRUPT_UNKNOWN: { status: 404, retryable: true, text: 'That approval request is no longer known.' },
  /** Reserved; never sent (answered as INTERRUPT_UNKNOWN so an id's existence does not leak). */
  INTERRUPT_NOT_YOURS: { status: 404, retryable: true, text: 'That approval request belongs to someone else.' },
  INTERRUPT_ALREADY_DECIDED: {
    status: 409,
    retryable: true,
    text: 'That approval request was already answered (maybe in another tab).',
  },
  INTERRUPT_EXPIRED: { status: 410, retryable: true, text: 'That approval request has expired.' },
  INTERRUPT_ANSWER_MISSING: { status: 400, retryable: true, text: 'Every pending approval must be answered together.' },
  INTERRUPT_ANSWER_DUPLICATE: { status: 400, retryable: true, text: 'An approval was answered twice.' },
  INTERRUPT_INVALID_ARGS: { status: 400, retryable: true, text: 'The edited arguments are not valid for this tool.' },
  /** An answer to a question (`ask_user`) that does not fit its form; the message says which field and why. */
  INTERRUPT_INVALID_ANSWER: { status: 400, retryable: true, text: 'The answer does not fit the question.' },
  INTERRUPT_FINGERPRINT_MISMATCH: {
    status: 409,
    retryable: true,
    text: 'The approved arguments do not match the request.',
  },
  /**
   * "Always allow in this conversation" for a tool that cannot be allowed so: one that always asks
   * (deletes data, sends it outside), one the embedder always holds, or one not available to the role.
   */
  ALWAYS_ALLOW_REFUSED: {
    status: 403,
    retryable: false,
    text: 'This action cannot be allowed for the whole conversation: it needs your approval every time.',
  },
} as const satisfies Record<string, ErrorSpec>;

export type AgentErrorCode = keyof typeof AGENT_ERRORS;

/** Every code, for schemas (`z.enum`). */
export const AGENT_ERROR_CODES = Object.keys(AGENT_ERRORS) as [AgentErrorCode, ...AgentErrorCode[]];

/** The codes a request can be refused with (those with an HTTP status). */
export type RefusalCode = {
  [K in AgentErrorCode]: (typeof AGENT_ERRORS)[K]['status'] extends number ? K : never;
}[AgentErrorCode];

export function isAgentErrorCode(code: unknown): code is AgentErrorCode {
  return typeof code === 'string' && Object.hasOwn(AGENT_ERRORS, code);
}

/**
 * A request refused with a stable code: the route answers `{error: {code, message}}` with the
 * code's status (and `Retry-After` when given). The one error class of a refusal, wherever it is
 * decided (the route's checks, the run's open statement, a resume's answers).
 */
export class AgentRefusal extends Error {
  readonly status: number;
  readonly retryAfterSeconds: number | undefined;

  constructor(
    readonly code: RefusalCode,
    message: string = AGENT_ERRORS[code].text,
    opts: { retryAfterSeconds?: number } = {},
  ) {
    super(message);
    this.status = AGENT_ERRORS[code].status;
    this.retryAfterSeconds = opts.retryAfterSeconds;
  }
}
