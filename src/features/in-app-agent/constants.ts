/** Stable names and limits of the in-app agent module. */

/**
 * Version of the stored event payloads. Bump it when a stored shape changes, and register the step
 * that upgrades a payload of the previous version in `STORED_EVENT_UPGRADES` (schema.ts): old rows
 * are upgraded step by step when they are read, so they keep replaying.
 */
export const STORED_EVENT_VERSION = 3;

/** CUSTOM event names the module emits. */
export const CUSTOM_EVENTS = {
  /** Which model answers this run: `{ provider, modelId, label, demo }`. */
  model: 'in-app-agent.model',
  /** Ask the browser to open a page of the product: `{ href }`. */
  navigate: 'in-app-agent.navigate',
  /** An approval was decided at resume: `{ toolCallId, decision, edited?, args?, feedback? }`. */
  approvalDecided: 'in-app-agent.approval-decided',
  /**
   * The conversation so far, `{ view }`, sent first to a watcher that attaches without a position
   * (next to AG-UI's MESSAGES_SNAPSHOT, which carries the messages only); replaces the whole view.
   */
  snapshot: 'in-app-agent.snapshot',
} as const;

/** Reason used on AG-UI interrupts for tool approvals. */
export const INTERRUPT_REASON_TOOL_APPROVAL = 'tool_approval';

/** Local tools (not from the MCP server). */
export const LOCAL_TOOL_NAMES = ['navigate', 'search_docs'] as const;
export type LocalToolName = (typeof LOCAL_TOOL_NAMES)[number];

export const LIMITS = {
  /** Largest request body accepted by the agent route. */
  maxBodyBytes: 256 * 1024,
  /** Longest user message. */
  maxUserMessageChars: 8_000,
  /** Page context fields. */
  maxRouteChars: 300,
  maxSelectionChars: 2_000,
  maxPageTitleChars: 200,
  /** Feedback comment. */
  maxFeedbackChars: 2_000,
  /** Conversation title. */
  maxTitleChars: 120,
  /** Longest tool result text kept for the model and the UI. */
  maxToolResultChars: 16_000,
  /** Partial text of a long message is flushed at least this often (ms). */
  flushIntervalMs: 1_000,
  /**
   * A message or tool call that ended is written this long after (ms), with whatever else ended
   * meanwhile; a run that ends sooner writes it with its end: a short answer is written by the
   * run's last statement alone.
   */
  writeDelayMs: 20,
  /**
   * Row positions (`seq`) a run reserves on its conversation's counter when it opens: its rows are
   * numbered inside the block, so nothing else (the stale sweep) can take one of them. A run
   * writes one row per message, tool call, result or custom event: far fewer.
   */
  runSeqBlock: 10_000,
  /**
   * Runs one conversation may hold (every message, resume, edit and regeneration is a run). Past
   * it the user is asked to start a new conversation (409 CONVERSATION_TOO_LONG).
   */
  maxRunsPerConversation: 1_000,
  /** Runs of the shown path per page of a conversation's replay (the panel loads older on scroll). */
  replayPageRuns: 40,
  /** Heartbeat cadence for a running run (ms). */
  heartbeatMs: 5_000,
  /**
   * Lifetime of the per-run MCP key (seconds). The heartbeat extends it while the run is alive, so
   * a long run never outlives its key; it is revoked when the run ends anyway.
   */
  runKeyTtlSeconds: 15 * 60,
  /**
   * A model stream that produces nothing for this long (while no tool is running) is abandoned
   * and the run ends with RUN_ERROR `MODEL_TIMEOUT`. Generous: local models can be slow to start.
   */
  modelIdleTimeoutMs: 120_000,
} as const;

/** Stable error codes of the agent route and its runs. */
export const AGENT_ERROR_CODES = [
  'UNAUTHENTICATED',
  'CROSS_ORIGIN',
  'PROJECT_NOT_FOUND',
  'CONVERSATION_NOT_FOUND',
  /** A run that does not exist, or one the caller may not see (the same answer). */
  'RUN_NOT_FOUND',
  'FORBIDDEN',
  'INVALID_REQUEST',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'NO_USER_MESSAGE',
  /** A resume that also carries a new user message: answer the approvals first. */
  'RESUME_WITH_MESSAGE',
  'RUN_IN_PROGRESS',
  /** The conversation reached LIMITS.maxRunsPerConversation: start a new one. */
  'CONVERSATION_TOO_LONG',
  /** A version of a turn that is not in the conversation's shown path. */
  'VERSION_NOT_FOUND',
  /** Too many runs started in the last minute (AGENT_RATE_LIMIT_PER_MINUTE): 429 with Retry-After. */
  'RATE_LIMITED',
  /**
   * The user already has AGENT_MAX_CONCURRENT_RUNS_PER_USER answers running (any conversation, any
   * instance): 429 with Retry-After. Runs waiting for an approval are not running.
   */
  'TOO_MANY_RUNS',
  'MODEL_ERROR',
  /** The provider is throttling this account's requests or tokens (429, ThrottlingException). */
  'MODEL_RATE_LIMITED',
  /**
   * The provider answered that it is too busy to take the request (503 "overloaded", 529, Bedrock's
   * ServiceUnavailableException or ModelNotReadyException): retry in a moment.
   */
  'MODEL_OVERLOADED',
  /** The provider could not be reached (connection refused, DNS, a gateway's 502/504), or no model is configured correctly (503). */
  'MODEL_UNAVAILABLE',
  /** The model stream stalled (no output for LIMITS.modelIdleTimeoutMs). */
  'MODEL_TIMEOUT',
  'TOOL_ERROR',
  /** The product's tools could not be listed within the set-up budget: the run did not go on without them. */
  'TOOLS_UNAVAILABLE',
  'RUN_STALE',
  'INTERNAL_ERROR',
  /** The database is unreachable right now (503 with Retry-After): retry shortly. */
  'DATABASE_UNAVAILABLE',
  /** This server is shutting down and takes no new runs (503 with Retry-After): retry (another one answers). */
  'DRAINING',
  // approvals
  /** Also the answer for another user's or another conversation's interrupt: existence is not revealed. */
  'INTERRUPT_UNKNOWN',
  /** Reserved; never sent (answered as INTERRUPT_UNKNOWN so an id's existence does not leak). */
  'INTERRUPT_NOT_YOURS',
  'INTERRUPT_ALREADY_DECIDED',
  'INTERRUPT_EXPIRED',
  'INTERRUPT_ANSWER_MISSING',
  'INTERRUPT_ANSWER_DUPLICATE',
  'INTERRUPT_INVALID_ARGS',
  'INTERRUPT_FINGERPRINT_MISMATCH',
] as const;
export type AgentErrorCode = (typeof AGENT_ERROR_CODES)[number];
