/**
 * The evaluation contracts, once (isomorphic): a case of a dataset (what was asked, with its
 * history and page, and what the original answer did), the expectations an admin writes for it,
 * the candidate an experiment runs (model, instructions, tool policy, the product's system prompt
 * version), one case's result with its diffs, the filters that add rated answers to a dataset, and
 * the headless report. The server stores these shapes as JSON and reads them back through here.
 */
import { z } from 'zod';
import { LIMITS } from '../constants';
import {
  ConversationViewSchema,
  FeedbackReasonSchema,
  FeedbackExportLineSchema,
  MessagePartSchema,
  PageContextSchema,
} from '../schema';
import { ToolPolicySchema } from '../tool-policy';

/** Limits of the evaluation studio. */
export const EVAL_LIMITS = {
  /** Cases a dataset holds. */
  maxCases: 500,
  /** Cases one "add" may bring in (from the review filters or an export file). */
  maxCasesPerAdd: 200,
  /** Characters of an export file an import reads (one request). */
  maxImportBytes: 480_000,
  maxExpectationsPerCase: 20,
  /** Cases an experiment runs at once (on its instance). */
  maxConcurrency: 4,
  defaultConcurrency: 2,
  /** Words of an answer the diff compares (longer answers are compared whole). */
  maxDiffWords: 1_500,
} as const;

const NAME = z
  .string()
  .trim()
  .min(1, 'A name is required.')
  .max(80, 'At most 80 characters.')
  .regex(/^[\p{L}\p{N} ._:/()-]+$/u, 'Letters, digits, spaces and . _ : / ( ) - only.');
export const DatasetNameSchema = NAME;

const ToolName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'A tool name.');
const JsonArgs = z.record(z.string(), z.unknown());

/** What a case's answer must (or must not) do. */
const EvalExpectationSchema = z.discriminatedUnion('kind', [
  /** Call `tool`; with `args`: every given field equal (other fields may differ). */
  z.object({ kind: z.literal('calls'), tool: ToolName, args: JsonArgs.optional() }).strict(),
  z.object({ kind: z.literal('not_calls'), tool: ToolName }).strict(),
  /** Say `text` (case-insensitive) in the answer. */
  z.object({ kind: z.literal('mentions'), text: z.string().trim().min(1).max(200) }).strict(),
  /** Ask the user back (`ask_user`) instead of guessing. */
  z.object({ kind: z.literal('asks_back') }).strict(),
]);
export type EvalExpectation = z.infer<typeof EvalExpectationSchema>;
export const EvalExpectationsSchema = z.array(EvalExpectationSchema).max(EVAL_LIMITS.maxExpectationsPerCase);

/** A tool call as a case records it: the arguments and the result (parsed JSON), and its approval. */
const EvalToolCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  args: JsonArgs,
  /** The result the model was given (absent: the call never got one). */
  result: z.unknown().optional(),
  /** How a held call was decided (absent: it was not held). */
  decision: z.enum(['approved', 'rejected', 'expired']).optional(),
});
export type EvalToolCall = z.infer<typeof EvalToolCallSchema>;

/** One case: the turn as it was asked, and what the original answer did. */
export const EvalCaseDataSchema = z.object({
  /** The conversation before the user's message (as the replay shows it). */
  history: ConversationViewSchema.shape.messages,
  /** Approvals decided in that history (what the model's history shows ran). */
  decisions: ConversationViewSchema.shape.decisions,
  userMessage: z.object({ text: z.string(), parts: z.array(MessagePartSchema).optional() }),
  pageContext: PageContextSchema,
  original: z.object({
    answer: z.string(),
    toolCalls: z.array(EvalToolCallSchema),
    model: z.object({ provider: z.string(), modelId: z.string() }).nullable(),
    usage: z
      .object({
        inputTokens: z.number().optional(),
        outputTokens: z.number().optional(),
        costUsd: z.number().optional(),
      })
      .nullable(),
  }),
  rating: z.union([z.literal(1), z.literal(-1)]).nullable(),
  reasons: z.array(FeedbackReasonSchema),
  comment: z.string().nullable(),
});
export type EvalCaseData = z.infer<typeof EvalCaseDataSchema>;

/** The product's system prompt version a candidate asks for (see `SYSTEM_PROMPT_VERSION`). */
const PromptVersion = z.string().regex(/^[a-f0-9]{12}$/, 'A system prompt version (12 hex digits).');

/**
 * What an experiment runs the cases with. Unset fields are the project's current settings: the
 * configured model, the newest instructions and tool permissions. The provider's endpoint and
 * credentials always come from the server's configuration (a candidate names a model, never a URL
 * or a secret).
 */
export const EvalCandidateSchema = z
  .object({
    name: NAME,
    model: z
      .object({
        provider: z.enum(['bedrock', 'openai-compatible', 'demo']).optional(),
        modelId: z
          .string()
          .trim()
          .min(1)
          .max(200)
          .regex(/^[\w.:/@-]+$/, 'A model id.')
          .optional(),
      })
      .strict()
      .optional(),
    /** US dollars per million tokens (else the configured prices). */
    prices: z
      .object({ input: z.number().min(0).max(10_000), output: z.number().min(0).max(10_000) })
      .strict()
      .optional(),
    instructions: z.string().max(LIMITS.maxInstructionsChars).optional(),
    toolPolicy: ToolPolicySchema.optional(),
    /** The product's system prompt version it was written for: refused when this build has another. */
    systemPromptVersion: PromptVersion.optional(),
    concurrency: z.number().int().min(1).max(EVAL_LIMITS.maxConcurrency).optional(),
    /** A judge model scores each answer by this rubric (0 to 10, with a reason). */
    judge: z
      .object({
        rubric: z.string().trim().min(1).max(LIMITS.maxInstructionsChars),
        /** The judge's model id (the configured provider); else the configured model. */
        modelId: z
          .string()
          .trim()
          .min(1)
          .max(200)
          .regex(/^[\w.:/@-]+$/, 'A model id.')
          .optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type EvalCandidate = z.infer<typeof EvalCandidateSchema>;

/** Which rated answers of the project a dataset takes (all given filters apply). */
export const EvalCaseFilterSchema = z
  .object({
    rating: z.union([z.literal(1), z.literal(-1)]).optional(),
    /** Thumbs down giving any of these reasons. */
    reasons: z.array(FeedbackReasonSchema).max(10).optional(),
    /** Rated from / to (dates, inclusive, UTC). */
    from: z.iso.date().optional(),
    to: z.iso.date().optional(),
    /** Answers that called any of these tools. */
    tools: z.array(ToolName).max(30).optional(),
    /** Answers written by this model id. */
    model: z.string().trim().min(1).max(200).optional(),
  })
  .strict();
export type EvalCaseFilter = z.infer<typeof EvalCaseFilterSchema>;

/** How a candidate's tool call was answered in an experiment. */
const EVAL_CALL_MODES = ['ran', 'replayed', 'not_executed', 'pending', 'refused'] as const;

const EvalCandidateCallSchema = z.object({
  id: z.string(),
  name: z.string(),
  args: JsonArgs,
  /**
   * ran: a read (or a local tool) ran for real as the case's user; replayed: a writing or outward
   * call answered with the original run's recorded result; not_executed: no matching original call,
   * answered with a neutral result; pending: held for a decision nobody made in the original;
   * refused: the role or the tool policy does not let the candidate run it.
   */
  mode: z.enum(EVAL_CALL_MODES),
  /** A held call's decision taken from the original run's matching call. */
  approval: z.enum(['approved', 'rejected', 'pending']).optional(),
  result: z.unknown().optional(),
});
export type EvalCandidateCall = z.infer<typeof EvalCandidateCallSchema>;

const ArgDiffSchema = z.object({ path: z.string(), original: z.unknown(), candidate: z.unknown() });
const ToolCallDiffSchema = z.object({
  /** Calls of the same tool in both, in order, with their argument differences. */
  matched: z.array(z.object({ name: z.string(), args: z.array(ArgDiffSchema) })),
  /** Calls only the candidate made. */
  added: z.array(z.object({ name: z.string(), args: JsonArgs })),
  /** Calls only the original made. */
  removed: z.array(z.object({ name: z.string(), args: JsonArgs })),
});
export type ToolCallDiff = z.infer<typeof ToolCallDiffSchema>;

const AnswerDiffSchema = z.array(z.object({ op: z.enum(['same', 'added', 'removed']), text: z.string() }));
export type AnswerDiff = z.infer<typeof AnswerDiffSchema>;

const ExpectationResultSchema = z.object({
  expectation: EvalExpectationSchema,
  passed: z.boolean(),
  detail: z.string(),
});
export type ExpectationResult = z.infer<typeof ExpectationResultSchema>;

/** One case of an experiment, as stored and exported. */
export const EvalCaseResultSchema = z.object({
  caseId: z.string(),
  /** completed: the candidate answered; pending: it stopped for an approval or a question; error: it failed. */
  outcome: z.enum(['completed', 'pending', 'error']),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  passed: z.boolean(),
  answer: z.string(),
  originalAnswer: z.string(),
  toolCalls: z.array(EvalCandidateCallSchema),
  /** The approvals and questions it stopped for. */
  pending: z.array(
    z.object({ kind: z.enum(['tool_approval', 'user_question']), toolName: z.string(), args: JsonArgs }),
  ),
  toolDiff: ToolCallDiffSchema,
  expectations: z.array(ExpectationResultSchema),
  answerDiff: AnswerDiffSchema,
  usage: z.object({
    inputTokens: z.number().optional(),
    outputTokens: z.number().optional(),
    costUsd: z.number().optional(),
  }),
  latencyMs: z.number(),
  /** The judge's verdict (with the prompt that produced it), or why there is none. */
  judge: z
    .union([
      z.object({
        score: z.number(),
        reason: z.string(),
        prompt: z.string(),
        model: z.string(),
        inputTokens: z.number().optional(),
        outputTokens: z.number().optional(),
      }),
      z.object({ error: z.string(), prompt: z.string(), model: z.string() }),
    ])
    .optional(),
});
export type EvalCaseResult = z.infer<typeof EvalCaseResultSchema>;

/** A case in a comparison of two experiments of one dataset. */
const COMPARISON_VERDICTS = ['better', 'worse', 'same', 'changed'] as const;
export type ComparisonVerdict = (typeof COMPARISON_VERDICTS)[number];

/** The headless run's report (`npm run eval`). */
export const EvalReportSchema = z.object({
  format: z.literal('in-app-agent.eval-report'),
  version: z.literal(1),
  dataset: z.string(),
  experimentId: z.string(),
  candidate: z.string(),
  systemPromptVersion: z.string(),
  status: z.enum(['COMPLETED', 'STOPPED', 'FAILED']),
  totals: z.object({
    cases: z.number(),
    passed: z.number(),
    failedExpectations: z.number(),
    errors: z.number(),
    inputTokens: z.number(),
    outputTokens: z.number(),
    costUsd: z.number().nullable(),
  }),
  cases: z.array(EvalCaseResultSchema),
});
export type EvalReport = z.infer<typeof EvalReportSchema>;

/** A line of a feedback export file, as an import reads it. */
export const EvalImportLineSchema = FeedbackExportLineSchema;
