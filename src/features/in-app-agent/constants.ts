/** Stable names and limits of the in-app agent module. */

/**
 * Version of the stored event payloads. Bump it when a stored shape changes, and register the step
 * that upgrades a payload of the previous version in `STORED_EVENT_UPGRADES` (schema.ts): old rows
 * are upgraded step by step when they are read, so they keep replaying.
 */
export const STORED_EVENT_VERSION = 4;

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
  /**
   * A tool call changed objects of the product: `{ toolCallId, objects: [{ kind, id }] }` (e.g. an
   * issue created or closed). The panel tells its host, which refreshes what it shows.
   */
  changed: 'in-app-agent.changed',
  /**
   * A user message's parts when it has more than its text (`{ messageId, parts }`): sent right
   * after its TEXT_MESSAGE_START, before the text (which TEXT_MESSAGE_CONTENT carries as always, so
   * stock AG-UI clients still show it). Stored with the message's row, not as a row of its own.
   */
  messageParts: 'in-app-agent.message-parts',
  /**
   * The issues an assistant message refers to ("#12", "issue 12", a link to an issue page) that
   * exist in this project and the user may read, checked on the server once the message ended:
   * `{ messageId, issues: [{ number, title, status }] }`. Only these become links in the panel.
   */
  references: 'in-app-agent.references',
  /**
   * Up to three follow-up requests the model offered at the end of an answer (stripped from its
   * text): `{ messageId, suggestions: [text] }`. The panel shows them under the last answer.
   */
  suggestions: 'in-app-agent.suggestions',
  /**
   * A question (`ask_user`) was answered, declined or left to expire: `{ toolCallId, action, content? }`
   * (`elicitation.ts`). Sent before the question's tool result, like `approvalDecided` for approvals.
   */
  questionAnswered: 'in-app-agent.question-answered',
  /**
   * The project's budgets as they stand after this run (`BudgetEventValueSchema`, budgets.ts): sent
   * right before the terminal event of a run in a project with budgets; the panel warns at 80 %.
   */
  budget: 'in-app-agent.budget',
  /**
   * Another instance took the run over after its instance stopped (server/takeover.ts):
   * `{ generation, keep: { messageIds, toolCallIds } }`, the first event of that generation. What
   * the run showed that is not in `keep` (the model step that was cut off, results that are asked
   * again) is dropped: the new owner streams it again. Stored like any event, so a replay is the same.
   */
  resumed: 'in-app-agent.resumed',
  /**
   * The run's instance stopped answering and another one is about to take it over: `{}`. Sent to a
   * watcher without a position and never stored (the panel shows a "resuming" status).
   */
  resuming: 'in-app-agent.resuming',
} as const;

/** Reason used on AG-UI interrupts for tool approvals. */
export const INTERRUPT_REASON_TOOL_APPROVAL = 'tool_approval';

/** Reason used on AG-UI interrupts for a question the assistant asks the user (`ask_user`). */
export const INTERRUPT_REASON_USER_QUESTION = 'user_question';

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
  /** A project's assistant instructions (plain text joined to the system prompt of every run). */
  maxInstructionsChars: 4_000,
  /** Conversation title. */
  maxTitleChars: 120,
  /** Longest tool result text kept for the model and the UI. */
  maxToolResultChars: 16_000,
  /** Partial text of a long message is flushed at least this often (ms). */
  flushIntervalMs: 1_000,
  /** How long a run's write, or its key's revocation, is retried while the database is unavailable (ms). */
  writeRetryBudgetMs: 30_000,
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
  /**
   * How long a run's lease lasts after its last heartbeat (s; `AGENT_RUN_LEASE_SECONDS`). The
   * heartbeat renews it every third of that, so the lease outlives two missed beats but not a dead
   * instance; once it has expired, any instance takes the run over and finishes it.
   */
  leaseSeconds: 8,
  /** How often an instance looks for runs whose lease expired (ms), besides being woken. */
  claimPollMs: 1_000,
  /** A run taken over more often than this fails with RUN_TAKEOVER_LIMIT (each takeover costs a model step). */
  maxTakeovers: 3,
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
  /** Issue references of one assistant message that are checked (the rest stay plain text). */
  maxReferencesPerMessage: 50,
  /** Reference parts (a picked issue or member) of one user message. */
  maxReferenceParts: 20,
  /** Follow-up suggestions under an answer, and the length of each. */
  maxSuggestions: 3,
  maxSuggestionChars: 200,
} as const;
