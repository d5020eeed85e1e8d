/**
 * The kinds of interrupt a run can end with while it waits for the user (a tool call held for
 * approval, a question the assistant asks with `ask_user`): the interrupt's `reason`
 * on the wire, the answer it takes (a zod schema, and the same as JSON Schema in the interrupt's
 * `responseSchema`, so any AG-UI client can build a form), and how the interrupt's metadata reads.
 * The server side of each kind (how an answer becomes the tool's result) is in
 * `server/human-in-the-loop.ts`; the panel's reader per kind in `components/interrupts/batch.ts`
 * and its card (`ApprovalCard.tsx`, `interrupts/QuestionCard.tsx`), rendered by `ConversationMessages`.
 * A kind not in this table is refused (a stored row of another kind, a resume for it) and not
 * rendered as answerable. Isomorphic.
 */
import { INTERRUPT_REASON_TOOL_APPROVAL, INTERRUPT_REASON_USER_QUESTION } from './constants';
import {
  QUESTION_ANSWER_JSON_SCHEMA,
  QuestionAnswerSchema,
  QuestionMetadataSchema,
  type QuestionAnswer,
} from './elicitation';
import {
  APPROVAL_RESPONSE_JSON_SCHEMA,
  ApprovalMetadataSchema,
  ApprovalResponseSchema,
  type ApprovalResponse,
} from './schema';

interface InterruptKindSpec<Answer, Metadata> {
  /** The interrupt's `reason`. */
  reason: string;
  /** What the user answers (the resume entry's `payload`). */
  answer: { safeParse(value: unknown): { success: true; data: Answer } | { success: false } };
  /** The same answer as JSON Schema, sent with each interrupt. */
  answerJsonSchema: Record<string, unknown>;
  /** The interrupt's metadata (what the card shows). */
  metadata: { safeParse(value: unknown): { success: true; data: Metadata } | { success: false } };
}

export const INTERRUPT_KINDS = {
  /** A tool call held for approval: approve (optionally with edited arguments) or reject. */
  tool_approval: {
    reason: INTERRUPT_REASON_TOOL_APPROVAL,
    answer: ApprovalResponseSchema,
    answerJsonSchema: APPROVAL_RESPONSE_JSON_SCHEMA as unknown as Record<string, unknown>,
    metadata: ApprovalMetadataSchema,
  },
  /**
   * A question the assistant asks (`ask_user`): the user answers its form (accept, with the content)
   * or declines; the answer is the tool's result. Each interrupt's `responseSchema` carries the
   * question's own form as `content`.
   */
  user_question: {
    reason: INTERRUPT_REASON_USER_QUESTION,
    answer: QuestionAnswerSchema,
    answerJsonSchema: QUESTION_ANSWER_JSON_SCHEMA as unknown as Record<string, unknown>,
    metadata: QuestionMetadataSchema,
  },
} as const satisfies Record<string, InterruptKindSpec<unknown, unknown>>;

export type InterruptKind = keyof typeof INTERRUPT_KINDS;

/** The answer type of each kind. */
export type InterruptAnswer = { tool_approval: ApprovalResponse; user_question: QuestionAnswer };

/** The kind an interrupt's `reason` (or a stored row's `kind`) names, or null: a kind this module does not know. */
export function interruptKindOf(reason: string | undefined | null): InterruptKind | null {
  for (const [kind, spec] of Object.entries(INTERRUPT_KINDS)) if (spec.reason === reason) return kind as InterruptKind;
  return null;
}
