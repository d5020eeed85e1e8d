/**
 * The module's wire and storage contract: AG-UI events it streams, the request it accepts, the
 * compacted events it stores, the human-in-the-loop shapes, and the replayed view. Used by the
 * route, persistence, replay, the tRPC router and the browser. One source of truth.
 */
import { z } from 'zod';
import { INTERRUPT_REASON_TOOL_APPROVAL, LIMITS, STORED_EVENT_VERSION } from './constants';
import { QuestionAnsweredValueSchema } from './elicitation';
import { AGENT_ERROR_CODES } from './error-codes';

// ------------------------------------------------------------------------------------------------
// AG-UI events the module sends (a subset of AG-UI 1.0; field names follow the protocol)
// ------------------------------------------------------------------------------------------------

const base = { timestamp: z.number().int().optional() };

/** Why a call is held: it changes data, deletes, sends data out, the data-flow guard, or the project's tool permissions. */
const ApprovalReasonSchema = z.enum(['mutating', 'destructive', 'outward', 'data_flow', 'policy']);
export type ApprovalReason = z.infer<typeof ApprovalReasonSchema>;

/** What the browser answers for one tool approval (the interrupt's `responseSchema`). */
export const ApprovalResponseSchema = z
  .object({
    approved: z.boolean(),
    /** Edited arguments; validated against the tool's schema and re-fingerprinted. */
    args: z.record(z.string(), z.unknown()).optional(),
    feedback: z.string().max(LIMITS.maxFeedbackChars).optional(),
    /** The fingerprint of the arguments the user was shown; a mismatch is refused. */
    argsFingerprint: z.string().max(128).optional(),
    /**
     * With `approved`: later calls of this tool in this conversation run without asking (only where
     * the interrupt's metadata says `canAlwaysAllow`; otherwise refused, ALWAYS_ALLOW_REFUSED).
     */
    alwaysInConversation: z.boolean().optional(),
  })
  .strict();
export type ApprovalResponse = z.infer<typeof ApprovalResponseSchema>;

/** JSON Schema of ApprovalResponse, sent on each interrupt so any AG-UI client can build a form. */
export const APPROVAL_RESPONSE_JSON_SCHEMA = {
  type: 'object',
  properties: {
    approved: { type: 'boolean' },
    args: { type: 'object' },
    feedback: { type: 'string', maxLength: LIMITS.maxFeedbackChars },
    argsFingerprint: { type: 'string' },
    alwaysInConversation: { type: 'boolean' },
  },
  required: ['approved'],
  additionalProperties: false,
} as const;

/** An issue as an approval card shows it: the values it has now, read when the call was held. */
const IssueSnapshotSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  status: z.string(),
  priority: z.string(),
  assignee: z.object({ id: z.string(), name: z.string() }).nullable(),
  labels: z.array(z.string()),
});
export type IssueSnapshot = z.infer<typeof IssueSnapshotSchema>;

/**
 * What a held call would change, read on the server with the run's permissions when the call was
 * held (so history and review show what the user was shown): the issue as it is now (and, for an
 * assignment, the member it would go to), or that the issue does not exist.
 */
const ApprovalPreviewSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('issue'),
    issue: IssueSnapshotSchema,
    /** assign_issue: the member the proposed `assignee` names (null: unassign; absent: no such member). */
    proposedAssignee: z.object({ id: z.string(), name: z.string() }).nullable().optional(),
  }),
  z.object({ kind: z.literal('issue-missing'), number: z.number().int().positive() }),
]);
export type ApprovalPreview = z.infer<typeof ApprovalPreviewSchema>;

export const ApprovalMetadataSchema = z.object({
  toolName: z.string(),
  args: z.record(z.string(), z.unknown()),
  argsFingerprint: z.string(),
  approvalReason: ApprovalReasonSchema,
  /** Plain-language explanation of why approval is needed. */
  why: z.string(),
  destructive: z.boolean(),
  /** JSON Schema of the tool's input, for an argument form. */
  inputSchema: z.record(z.string(), z.unknown()).optional(),
  /** What the call would change, as the server read it when the call was held. */
  preview: ApprovalPreviewSchema.optional(),
  /** The answer may say "always allow in this conversation" (`alwaysInConversation`). */
  canAlwaysAllow: z.boolean().optional(),
});

const InterruptSchema = z.object({
  id: z.string(),
  reason: z.string(),
  message: z.string().optional(),
  toolCallId: z.string().optional(),
  responseSchema: z.record(z.string(), z.unknown()).optional(),
  expiresAt: z.string().optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});
export type Interrupt = z.infer<typeof InterruptSchema>;

/** A tool-approval interrupt as this module produces it. */
const ToolApprovalInterruptSchema = InterruptSchema.extend({
  reason: z.literal(INTERRUPT_REASON_TOOL_APPROVAL),
  toolCallId: z.string(),
  expiresAt: z.string(),
  metadata: ApprovalMetadataSchema,
});
export type ToolApprovalInterrupt = z.infer<typeof ToolApprovalInterruptSchema>;

const RunOutcomeSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('success') }),
  z.object({ type: z.literal('interrupt'), interrupts: z.array(InterruptSchema).min(1) }),
  z.object({ type: z.literal('cancelled') }),
]);
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;

const TokenUsageSchema = z.object({
  provider: z.string().optional(),
  model: z.string().optional(),
  inputTokens: z.number().int().nonnegative().optional(),
  outputTokens: z.number().int().nonnegative().optional(),
  totalTokens: z.number().int().nonnegative().optional(),
  /** What the answer cost in US dollars, when prices are configured for the model. */
  costUsd: z.number().nonnegative().optional(),
  /**
   * Part of the tokens (and so of the cost) is an estimate: the answer was stopped, or failed, while
   * the model was streaming, and that model call reported nothing (server/usage.ts). Shown as "≈".
   */
  estimated: z.boolean().optional(),
});
export type TokenUsage = z.infer<typeof TokenUsageSchema>;

const RunStartedEventSchema = z.object({
  type: z.literal('RUN_STARTED'),
  ...base,
  threadId: z.string(),
  runId: z.string(),
  parentRunId: z.string().optional(),
});
const RunFinishedEventSchema = z.object({
  type: z.literal('RUN_FINISHED'),
  ...base,
  threadId: z.string(),
  runId: z.string(),
  outcome: RunOutcomeSchema.optional(),
  usage: z.array(TokenUsageSchema).optional(),
});
const RunErrorEventSchema = z.object({
  type: z.literal('RUN_ERROR'),
  ...base,
  message: z.string(),
  code: z.enum(AGENT_ERROR_CODES).optional(),
});
const MessageRoleSchema = z.enum(['user', 'assistant']);
const TextMessageStartEventSchema = z.object({
  type: z.literal('TEXT_MESSAGE_START'),
  ...base,
  messageId: z.string(),
  role: MessageRoleSchema,
});
const TextMessageContentEventSchema = z.object({
  type: z.literal('TEXT_MESSAGE_CONTENT'),
  ...base,
  messageId: z.string(),
  delta: z.string(),
});
const TextMessageEndEventSchema = z.object({
  type: z.literal('TEXT_MESSAGE_END'),
  ...base,
  messageId: z.string(),
});
const ToolCallStartEventSchema = z.object({
  type: z.literal('TOOL_CALL_START'),
  ...base,
  toolCallId: z.string(),
  toolCallName: z.string(),
  parentMessageId: z.string().optional(),
});
const ToolCallArgsEventSchema = z.object({
  type: z.literal('TOOL_CALL_ARGS'),
  ...base,
  toolCallId: z.string(),
  delta: z.string(),
});
const ToolCallEndEventSchema = z.object({ type: z.literal('TOOL_CALL_END'), ...base, toolCallId: z.string() });
const ToolCallResultEventSchema = z.object({
  type: z.literal('TOOL_CALL_RESULT'),
  ...base,
  messageId: z.string(),
  toolCallId: z.string(),
  content: z.string(),
  role: z.literal('tool').optional(),
});
const CustomEventSchema = z.object({ type: z.literal('CUSTOM'), ...base, name: z.string(), value: z.unknown() });
/** Sent to a watcher attaching without a position, for stock AG-UI clients (the panel uses the custom snapshot). */
const MessagesSnapshotEventSchema = z.object({
  type: z.literal('MESSAGES_SNAPSHOT'),
  ...base,
  messages: z.array(z.unknown()),
});

export const AgentEventSchema = z.discriminatedUnion('type', [
  RunStartedEventSchema,
  RunFinishedEventSchema,
  RunErrorEventSchema,
  TextMessageStartEventSchema,
  TextMessageContentEventSchema,
  TextMessageEndEventSchema,
  ToolCallStartEventSchema,
  ToolCallArgsEventSchema,
  ToolCallEndEventSchema,
  ToolCallResultEventSchema,
  CustomEventSchema,
  MessagesSnapshotEventSchema,
]);
export type AgentEvent = z.infer<typeof AgentEventSchema>;

/** What every attachment part says about its file (attachments.ts; the bytes stay on the server). */
const attachmentFields = {
  /** The upload's id (`att_…`): the bytes are served by `…/in-app-agent/attachments/:id`. */
  attachmentId: z.string().min(1).max(64),
  /** Decided from the bytes when it was uploaded. */
  mediaType: z.string().max(100),
  name: z.string().max(255),
  /** Bytes as stored (an image after its re-encoding). */
  size: z.number().int().nonnegative(),
};

/**
 * A part of a user message: its text, an image or a file attached to it. Each kind is carried by
 * the same request (attachments as AG-UI content parts naming an upload, see attachments.ts),
 * stored with the message, shown by the view and sent to the model by the provider factory.
 */
const ImagePartSchema = z.object({
  type: z.literal('image'),
  ...attachmentFields,
  width: z.number().int().positive().optional(),
  height: z.number().int().positive().optional(),
});
const FilePartSchema = z.object({
  type: z.literal('file'),
  ...attachmentFields,
  /** Pages of a PDF. */
  pages: z.number().int().positive().optional(),
});
export const MessagePartSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }),
  ImagePartSchema,
  FilePartSchema,
  /**
   * An object of the product the user picked in the composer (`#` an issue, `@` a member): its id
   * (the issue's number, the member's user id) and the text that stands for it in the message.
   * Checked on the server before the model gets it (`server/references.ts`).
   */
  z
    .object({
      type: z.literal('reference'),
      kind: z.enum(['issue', 'member']),
      id: z.string().min(1).max(100),
      label: z.string().min(1).max(120),
    })
    .strict(),
]);
export type MessagePart = z.infer<typeof MessagePartSchema>;
/** An image or file part of a message. */
export const AttachmentPartSchema = z.discriminatedUnion('type', [ImagePartSchema, FilePartSchema]);
export type AttachmentPart = z.infer<typeof AttachmentPartSchema>;

/** The attachments of a message's parts, in order. */
export function attachmentsOf(parts: readonly MessagePart[]): AttachmentPart[] {
  return parts.filter((p): p is AttachmentPart => p.type === 'image' || p.type === 'file');
}

/** The text of a message's parts (its text parts, one after the other, a line apart). */
export function textOfParts(parts: readonly MessagePart[]): string {
  return parts
    .filter((p) => p.type === 'text')
    .map((p) => p.text)
    .join('\n');
}

/** Whether parts say more than their text alone (then they travel as `CUSTOM_EVENTS.messageParts`). */
export function hasMoreThanText(parts: readonly MessagePart[]): boolean {
  return parts.length > 1 || parts.some((p) => p.type !== 'text');
}

/** The value of `CUSTOM_EVENTS.messageParts`. */
export const MessagePartsValueSchema = z.object({
  messageId: z.string(),
  parts: z.array(MessagePartSchema).min(1).max(50),
});

export const ModelInfoSchema = z.object({
  provider: z.enum(['bedrock', 'openai-compatible', 'demo']),
  modelId: z.string(),
  label: z.string(),
  demo: z.boolean(),
  /**
   * What a message may attach with this model and settings (`model.info` only; the run's model
   * event leaves it out): whether it reads images and PDFs, and the upload limits.
   */
  attachments: z
    .object({
      images: z.boolean(),
      documents: z.boolean(),
      maxFileBytes: z.number().int().positive(),
      maxFilesPerMessage: z.number().int().positive(),
    })
    .optional(),
});
export type ModelInfo = z.infer<typeof ModelInfoSchema>;
export const NavigateValueSchema = z.object({ href: z.string() });
export const ApprovalDecidedValueSchema = z.object({
  toolCallId: z.string(),
  decision: z.enum(['approved', 'rejected', 'expired']),
  edited: z.boolean().optional(),
  /** The arguments the call ran with (approved calls; the edited ones when `edited`). */
  args: z.record(z.string(), z.unknown()).optional(),
  feedback: z.string().optional(),
  /** Approved with "always allow in this conversation". */
  alwaysInConversation: z.boolean().optional(),
});
export type ApprovalDecidedValue = z.infer<typeof ApprovalDecidedValueSchema>;

/** An issue an assistant message refers to, as the server found it (`CUSTOM_EVENTS.references`). */
const IssueReferenceSchema = z.object({
  number: z.number().int().positive(),
  title: z.string().max(300),
  status: z.string().max(40),
});
export type IssueReference = z.infer<typeof IssueReferenceSchema>;
export const ReferencesValueSchema = z.object({
  messageId: z.string(),
  issues: z.array(IssueReferenceSchema).max(LIMITS.maxReferencesPerMessage),
});
export const SuggestionsValueSchema = z.object({
  messageId: z.string(),
  suggestions: z.array(z.string().min(1).max(LIMITS.maxSuggestionChars)).min(1).max(LIMITS.maxSuggestions),
});

/** An object of the product a tool call changed: its kind (`issue`) and id (the issue's number). */
const ProductObjectSchema = z.object({ kind: z.string().max(40), id: z.string().max(100) });
export type ProductObject = z.infer<typeof ProductObjectSchema>;
export const ChangedValueSchema = z.object({
  toolCallId: z.string(),
  objects: z.array(ProductObjectSchema).max(50),
});

/**
 * The value of `CUSTOM_EVENTS.resumed`: the run's new generation, and what it keeps of what the run
 * showed (its messages and tool calls whose output was stored before the cut-off step).
 */
export const ResumedValueSchema = z.object({
  generation: z.number().int().min(2),
  keep: z.object({
    messageIds: z.array(z.string()).max(2_000),
    toolCallIds: z.array(z.string()).max(2_000),
  }),
});

// ------------------------------------------------------------------------------------------------
// The request the route accepts (AG-UI RunAgentInput, sanitized server-side)
// ------------------------------------------------------------------------------------------------

export const PageContextSchema = z
  .object({
    route: z.string().max(LIMITS.maxRouteChars).optional(),
    title: z.string().max(LIMITS.maxPageTitleChars).optional(),
    issueNumber: z.number().int().positive().max(10_000_000).optional(),
    selection: z.string().max(LIMITS.maxSelectionChars).optional(),
  })
  .strip();
export type PageContext = z.infer<typeof PageContextSchema>;

const ClientMessageSchema = z
  .object({
    id: z.string().max(200).optional(),
    role: z.string().max(20),
    content: z.unknown().optional(),
  })
  .passthrough();

const ResumeEntrySchema = z.object({
  interruptId: z.string().min(1).max(200),
  status: z.enum(['resolved', 'cancelled']),
  payload: z.unknown().optional(),
});
export type ResumeEntry = z.infer<typeof ResumeEntrySchema>;

/**
 * A conversation id (AG-UI `threadId`): 8-100 letters, digits, `-` or `_`. A UUID (what a stock
 * `HttpAgent` picks) and the product's own `cv_…` ids both fit. One rule for the route and tRPC.
 */
export const THREAD_ID_PATTERN = /^[A-Za-z0-9_-]{8,100}$/;
export const ConversationIdSchema = z.string().regex(THREAD_ID_PATTERN, 'Not a conversation id.');

/**
 * Accepted body. Everything the client may say about history, tools, system prompts or run ids is
 * parsed only to be dropped: `messages` is read for its newest user message, nothing else.
 */
export const AgentRequestSchema = z.object({
  threadId: z.string().max(200).optional(),
  runId: z.string().max(200).optional(),
  messages: z.array(ClientMessageSchema).max(500).default([]),
  tools: z.array(z.unknown()).max(200).optional(),
  context: z.array(z.unknown()).max(100).optional(),
  state: z.unknown().optional(),
  forwardedProps: z
    .object({
      pageContext: z.unknown().optional(),
      /** A new version of a turn (edit: with a user message; regenerate: without): the run starting it. */
      version: z
        .object({ of: z.string().min(1).max(100) })
        .strict()
        .optional(),
    })
    .passthrough()
    .optional(),
  resume: z.array(ResumeEntrySchema).max(50).optional(),
});
export type AgentRequest = z.infer<typeof AgentRequestSchema>;

export interface SanitizedRequest {
  conversationId: string | null;
  /** The new user message's parts (its text trimmed and capped), or null when there is none. */
  userMessage: MessagePart[] | null;
  pageContext: PageContext;
  resume: ResumeEntry[] | null;
  /** A new version of a turn (edit or regenerate). */
  version: { of: string } | null;
  /** Uploads the new message attaches (their ids, in order, each once); checked before the run opens. */
  attachmentIds: string[];
}

// ------------------------------------------------------------------------------------------------
// Stored (compacted) events: one row per message or tool call, not per token
// ------------------------------------------------------------------------------------------------

/**
 * The stored shapes, stamped with a version. The current shapes are `StoredEventSchema`; rows of an
 * older version are brought up to date by `upgradeStoredEvent` before they are parsed.
 */
function storedEventSchema<V extends number>(version: V) {
  const v = z.literal(version).default(version);
  /** Where the row starts in its run's live stream (v2; see compact.ts). */
  const pos = z.number().int().positive().optional();
  return z.discriminatedUnion('type', [
    z.object({
      v,
      pos,
      type: z.literal('RUN_STARTED'),
      runId: z.string(),
      threadId: z.string(),
      parentRunId: z.string().optional(),
    }),
    z.object({
      v,
      pos,
      type: z.literal('TEXT_MESSAGE'),
      messageId: z.string(),
      role: MessageRoleSchema,
      content: z.string(),
      /** False while a long message is still streaming (partial flush) or when its run ended midway. */
      complete: z.boolean(),
      /** A user message's parts when it has more than its text (v3); `content` is still its text. */
      parts: z.array(MessagePartSchema).optional(),
    }),
    z.object({
      v,
      pos,
      type: z.literal('TOOL_CALL'),
      toolCallId: z.string(),
      toolCallName: z.string(),
      parentMessageId: z.string().optional(),
      args: z.string(),
      complete: z.boolean(),
    }),
    z.object({
      v,
      pos,
      type: z.literal('TOOL_CALL_RESULT'),
      messageId: z.string(),
      toolCallId: z.string(),
      content: z.string(),
    }),
    z.object({ v, pos, type: z.literal('CUSTOM'), name: z.string(), value: z.unknown() }),
    z.object({
      v,
      pos,
      type: z.literal('RUN_FINISHED'),
      runId: z.string(),
      threadId: z.string(),
      outcome: RunOutcomeSchema.optional(),
      usage: z.array(TokenUsageSchema).optional(),
    }),
    z.object({
      v,
      pos,
      type: z.literal('RUN_ERROR'),
      runId: z.string(),
      code: z.enum(AGENT_ERROR_CODES).optional(),
      message: z.string(),
    }),
  ]);
}

export const StoredEventSchema = storedEventSchema(STORED_EVENT_VERSION);
export type StoredEvent = z.infer<typeof StoredEventSchema>;

/** Upgrades a stored payload of version n to version n + 1 (pure; gets a copy it may change). */
export type StoredEventUpgrade = (payload: Record<string, unknown>) => Record<string, unknown>;

/**
 * One step per version: `STORED_EVENT_UPGRADES[n]` turns a version-n payload into version n + 1.
 * When STORED_EVENT_VERSION goes from n to n + 1, change the shapes above and add the step for n here.
 */
export const STORED_EVENT_UPGRADES: Readonly<Record<number, StoredEventUpgrade>> = {
  // v2 adds the optional live position `pos`; a v1 row has none (its run cannot be resumed from a
  // position, only replayed whole).
  1: (payload) => payload,
  // v3 adds a user message's optional `parts` and `estimated` on a RUN_FINISHED's usage; a v2
  // message is its text alone and its usage as reported.
  2: (payload) => payload,
  // v4 lets a user message's `parts` hold images and files (attachments) and references (an issue or
  // member picked in the composer); a v3 message's parts are text only, which v4 reads as they are.
  3: (payload) => payload,
};

export type StoredEventUpgradeResult = { ok: true; event: StoredEvent; from: number } | { ok: false; reason: string };

/**
 * Brings a stored payload of any version 1..current up to the current version, one registered step
 * per version, then parses it with the current shapes. A payload without `v` predates versioning
 * and is version 1. `version` and `steps` default to the module's own; tests pass a simulated
 * future to exercise a chain. Never throws: an unusable row comes back with the reason.
 */
export function upgradeStoredEvent(
  raw: unknown,
  opts: { version?: number; steps?: Readonly<Record<number, StoredEventUpgrade>> } = {},
): StoredEventUpgradeResult {
  const target = opts.version ?? STORED_EVENT_VERSION;
  const steps = opts.steps ?? STORED_EVENT_UPGRADES;
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return { ok: false, reason: 'payload is not an object' };
  let payload = raw as Record<string, unknown>;
  const from = payload.v === undefined ? 1 : payload.v;
  if (typeof from !== 'number' || !Number.isInteger(from) || from < 1)
    return { ok: false, reason: `invalid version ${JSON.stringify(payload.v)}` };
  if (from > target)
    return { ok: false, reason: `written by a newer version (v${from}, this build reads up to v${target})` };
  for (let n = from; n < target; n++) {
    const step = steps[n];
    if (!step) return { ok: false, reason: `no upgrade step from v${n}` };
    try {
      payload = { ...step({ ...payload, v: n }), v: n + 1 };
    } catch (err) {
      return { ok: false, reason: `upgrade from v${n} failed: ${(err as Error).message}` };
    }
  }
  const parsed = (target === STORED_EVENT_VERSION ? StoredEventSchema : storedEventSchema(target)).safeParse({
    ...payload,
    v: target,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason: `does not match v${target}: ${issue ? `${issue.path.join('.') || '(payload)'} ${issue.message}` : 'invalid'}`,
    };
  }
  return { ok: true, event: parsed.data as StoredEvent, from };
}

// ------------------------------------------------------------------------------------------------
// The replayed / folded view of a conversation (what the panel renders)
// ------------------------------------------------------------------------------------------------

const ViewToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  args: z.string(),
  status: z.enum(['streaming', 'called', 'done', 'error']),
  result: z.string().optional(),
});
export type ViewToolCall = z.infer<typeof ViewToolCallSchema>;

const ViewMessageSchema = z.discriminatedUnion('role', [
  z.object({
    id: z.string(),
    role: z.literal('user'),
    /** The message's text. */
    content: z.string(),
    runId: z.string(),
    /** Its parts, when it has more than its text (`partsOf` reads either). */
    parts: z.array(MessagePartSchema).optional(),
  }),
  z.object({
    id: z.string(),
    role: z.literal('assistant'),
    content: z.string(),
    runId: z.string(),
    streaming: z.boolean(),
    toolCalls: z.array(ViewToolCallSchema),
    /** The issues it refers to that the server checked (only these become links). */
    references: z.array(IssueReferenceSchema).optional(),
    /** Follow-up requests the model offered after it. */
    suggestions: z.array(z.string()).optional(),
  }),
  z.object({ id: z.string(), role: z.literal('tool'), toolCallId: z.string(), content: z.string(), runId: z.string() }),
]);
export type ViewMessage = z.infer<typeof ViewMessageSchema>;

/** A user message's parts: the ones it carries, else its text as one part. */
export function partsOf(message: Extract<ViewMessage, { role: 'user' }>): MessagePart[] {
  return message.parts ?? [{ type: 'text', text: message.content }];
}

const RunStateSchema = z.object({
  runId: z.string(),
  /** The run this one continues (a resume after approvals): both belong to one turn. */
  parentRunId: z.string().optional(),
  status: z.enum(['running', 'completed', 'interrupted', 'cancelled', 'failed']),
  error: z.object({ code: z.string().optional(), message: z.string() }).optional(),
  model: ModelInfoSchema.optional(),
  interrupts: z.array(InterruptSchema),
  /** Tokens (and cost, when priced) of a finished run. */
  usage: TokenUsageSchema.optional(),
});
export type RunState = z.infer<typeof RunStateSchema>;

/** A turn with several versions (edits, regenerations): which one is shown, of how many. */
const TurnVersionsSchema = z.object({
  index: z.number().int().positive(),
  count: z.number().int().positive(),
  runIds: z.array(z.string()),
});

export const ConversationViewSchema = z.object({
  threadId: z.string().nullable(),
  messages: z.array(ViewMessageSchema),
  runs: z.array(RunStateSchema),
  decisions: z.record(z.string(), ApprovalDecidedValueSchema),
  /** Questions (`ask_user`) answered, declined or expired, by tool call (present once there is one). */
  answers: z.record(z.string(), QuestionAnsweredValueSchema).optional(),
  navigations: z.array(z.string()),
  /**
   * Turns with more than one version, by the run that starts the shown version (present only when
   * there are any; the replay sets it, live events do not).
   */
  versions: z.record(z.string(), TurnVersionsSchema).optional(),
});
export type ConversationView = z.infer<typeof ConversationViewSchema>;

// ------------------------------------------------------------------------------------------------
// Feedback: why an answer was rated down, and the JSONL export of rated answers
// ------------------------------------------------------------------------------------------------

/** Why a thumbs down, in the order the panel offers them. Stored as these strings. */
export const FEEDBACK_REASONS = [
  'wrong',
  'incomplete',
  'unsafe',
  'slow',
  'did_not_follow_instructions',
  'other',
] as const;
export const FeedbackReasonSchema = z.enum(FEEDBACK_REASONS, {
  error: `Unknown feedback reason. Valid reasons: ${FEEDBACK_REASONS.join(', ')}.`,
});
export type FeedbackReason = z.infer<typeof FeedbackReasonSchema>;

/** What the panel and the review page call each reason. */
export const FEEDBACK_REASON_LABELS: Readonly<Record<FeedbackReason, string>> = {
  wrong: 'Wrong',
  incomplete: 'Incomplete',
  unsafe: 'Unsafe or harmful',
  slow: 'Slow',
  did_not_follow_instructions: 'Did not follow instructions',
  other: 'Other',
};

/** The reasons as the product names them, in its order ("Wrong, Slow"). */
export function feedbackReasonLabels(reasons: readonly FeedbackReason[]): string {
  return FEEDBACK_REASONS.filter((r) => reasons.includes(r))
    .map((r) => FEEDBACK_REASON_LABELS[r])
    .join(', ');
}

/** The reasons of one rating: each at most once. */
const FeedbackReasonsSchema = z
  .array(FeedbackReasonSchema)
  .max(FEEDBACK_REASONS.length)
  .refine((list) => new Set(list).size === list.length, 'Each reason may be given once.');

/** Reasons in the product's order, without duplicates (stable for storage, display and export). */
export function normalizeFeedbackReasons(reasons: Iterable<string>): FeedbackReason[] {
  const given = new Set(reasons);
  return FEEDBACK_REASONS.filter((r) => given.has(r));
}

/** The rating of one answer, as `agent.feedback.submit` accepts it. */
export const FeedbackSubmitSchema = z
  .object({
    messageId: z.string().min(1).max(64),
    value: z.union([z.literal(1), z.literal(-1)]),
    comment: z.string().trim().max(LIMITS.maxFeedbackChars).optional(),
    /** Only with a thumbs down: a thumbs up says the answer was fine. */
    reasons: FeedbackReasonsSchema.optional(),
  })
  .refine((f) => f.value === -1 || !f.reasons?.length, {
    path: ['reasons'],
    message: 'Reasons explain a thumbs down; a thumbs up carries none.',
  });

/**
 * One message of an exported conversation, in the chat format evaluation tools read (OpenAI chat
 * messages): user text, assistant text with the tool calls it made (arguments as a JSON string),
 * and each tool result answering a call by its id.
 */
const ExportMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    tool_calls: z
      .array(
        z.object({
          id: z.string(),
          type: z.literal('function'),
          function: z.object({ name: z.string(), arguments: z.string() }),
        }),
      )
      .optional(),
  }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: z.string() }),
]);
export type ExportMessage = z.infer<typeof ExportMessageSchema>;

export const FEEDBACK_EXPORT_FORMAT = 'in-app-agent.feedback';
export const FEEDBACK_EXPORT_VERSION = 1;

/**
 * One line of the feedback export (JSONL): one rated answer with the conversation up to and
 * including it (the rated answer is the last message), who rated it how and why, and the model.
 */
export const FeedbackExportLineSchema = z.object({
  format: z.literal(FEEDBACK_EXPORT_FORMAT),
  version: z.literal(FEEDBACK_EXPORT_VERSION),
  feedbackId: z.string(),
  projectId: z.string(),
  conversationId: z.string(),
  /** The rated assistant message (the last entry of `messages`) and the run that wrote it. */
  messageId: z.string(),
  runId: z.string(),
  /** The user who rated the answer (the conversation's owner). */
  userId: z.string(),
  rating: z.union([z.literal(1), z.literal(-1)]),
  reasons: z.array(FeedbackReasonSchema),
  comment: z.string().nullable(),
  /** The model that wrote the answer, when the run recorded it. */
  model: z.object({ provider: z.string(), id: z.string(), label: z.string() }).nullable(),
  /** When the run that wrote the answer started and finished (null while unfinished). */
  answerStartedAt: z.iso.datetime().nullable(),
  answerFinishedAt: z.iso.datetime().nullable(),
  /** When the answer was first rated, and when the rating last changed. */
  ratedAt: z.iso.datetime(),
  updatedAt: z.iso.datetime(),
  messages: z.array(ExportMessageSchema).min(1),
});
export type FeedbackExportLine = z.infer<typeof FeedbackExportLineSchema>;

/** Filters of the export: a time window on when answers were last rated, and reasons (any of). */
export const FeedbackExportQuerySchema = z
  .object({
    /** Inclusive start: a date (`2026-11-01`, from 00:00 UTC) or an ISO date-time. */
    from: z.union([z.iso.date(), z.iso.datetime({ offset: true })]).optional(),
    /** Inclusive end: a date (`2026-11-30`, to the end of that day UTC) or an ISO date-time. */
    to: z.union([z.iso.date(), z.iso.datetime({ offset: true })]).optional(),
    /** Only ratings carrying any of these reasons (so thumbs down only). */
    reason: z.array(FeedbackReasonSchema).max(FEEDBACK_REASONS.length).optional(),
    /** Only thumbs up (`1`) or thumbs down (`-1`). */
    rating: z.enum(['1', '-1']).optional(),
  })
  .strict();
export type FeedbackExportQuery = z.infer<typeof FeedbackExportQuerySchema>;
