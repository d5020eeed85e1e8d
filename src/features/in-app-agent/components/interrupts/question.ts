/**
 * The panel's side of a question (`ask_user`, interrupt kind `user_question`), without React: the
 * request read from its interrupt, the control each field gets, the answer being prepared (kept
 * in storage like approval answers), the answer checked with the validator the server uses
 * (`elicitation.ts`), the resume entry it becomes, and the questions of a view by run.
 */
import { z } from 'zod';
import {
  type AnswerContent,
  type AnswerProblem,
  answerProblems,
  isChoice,
  QuestionMetadataSchema,
  type QuestionAnsweredValue,
  type QuestionProperty,
  type RequestedSchema,
} from '../../elicitation';
import { openInterrupts } from '../../fold';
import { interruptKindOf } from '../../interrupt-kinds';
import type { ConversationView, Interrupt, ResumeEntry, ViewToolCall } from '../../schema';
import { isExpired } from '../approval';

export interface QuestionRequest {
  interruptId: string;
  toolCallId: string;
  message: string;
  schema: RequestedSchema;
  expiresAt?: string;
}

/** Reads a question interrupt; null for any other kind or a malformed one. */
function readQuestionInterrupt(interrupt: Interrupt): QuestionRequest | null {
  if (interruptKindOf(interrupt.reason) !== 'user_question' || !interrupt.toolCallId) return null;
  const meta = QuestionMetadataSchema.safeParse(interrupt.metadata);
  if (!meta.success) return null;
  return {
    interruptId: interrupt.id,
    toolCallId: interrupt.toolCallId,
    message: interrupt.message ?? '',
    schema: meta.data.requestedSchema,
    ...(interrupt.expiresAt ? { expiresAt: interrupt.expiresAt } : {}),
  };
}

const requests = new WeakMap<Interrupt, QuestionRequest | null>();
/** `readQuestionInterrupt`, once per interrupt object (a request keeps its identity across render snapshots). */
export function questionRequestOf(interrupt: Interrupt): QuestionRequest | null {
  let request = requests.get(interrupt);
  if (request === undefined) {
    request = readQuestionInterrupt(interrupt);
    requests.set(interrupt, request);
  }
  return request;
}

/** Enums up to this many values are radio buttons; longer ones a select. */
const RADIO_MAX = 5;

export type FieldControl = 'radio' | 'select' | 'checkbox' | 'number' | 'text';

export function controlOf(property: QuestionProperty): FieldControl {
  if (isChoice(property)) return property.enum.length <= RADIO_MAX ? 'radio' : 'select';
  if (property.type === 'boolean') return 'checkbox';
  if (property.type === 'number' || property.type === 'integer') return 'number';
  return 'text';
}

/**
 * What the user has put in the form so far: text as typed (numbers too, so a half-typed one is
 * kept), booleans as checked, a choice as its value (`` for none); and what they chose to do with
 * it. Kept in storage, so a reload keeps a half-filled form.
 */
export const QuestionDraftSchema = z.object({
  values: z.record(z.string(), z.union([z.string().max(8_000), z.boolean()])),
  action: z.enum(['accept', 'decline']).nullable(),
});
export type QuestionDraft = z.infer<typeof QuestionDraftSchema>;

/** The form as the question proposes it: its defaults, unchecked boxes, empty fields. */
export function initialQuestionDraft(request: QuestionRequest): QuestionDraft {
  const values: QuestionDraft['values'] = {};
  for (const [name, property] of Object.entries(request.schema.properties)) {
    if (property.type === 'boolean') values[name] = property.default ?? false;
    else values[name] = property.default === undefined ? '' : String(property.default);
  }
  return { values, action: null };
}

/** A `datetime-local` value (`2026-11-30T14:05`, the browser's time zone) as an ISO date-time. */
function localDateTime(value: string): string {
  const d = new Date(value);
  return Number.isFinite(d.getTime()) ? d.toISOString() : value;
}

/**
 * The answer's content from the form: a field left empty is left out (so a required one is
 * reported missing), numbers are numbers (a value that is not one stays text and is reported),
 * boxes are true or false.
 */
export function contentOf(request: QuestionRequest, draft: QuestionDraft): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const [name, property] of Object.entries(request.schema.properties)) {
    const value = draft.values[name];
    if (property.type === 'boolean') {
      content[name] = value === true;
      continue;
    }
    if (typeof value !== 'string' || value.trim() === '') continue;
    if (property.type === 'number' || property.type === 'integer') {
      const n = Number(value.trim());
      content[name] = Number.isFinite(n) ? n : value;
    } else if (property.type === 'string' && property.format === 'date-time') content[name] = localDateTime(value);
    else content[name] = value;
  }
  return content;
}

/** The form checked as the server will check it (empty: it can be sent). */
export function questionProblems(request: QuestionRequest, draft: QuestionDraft): AnswerProblem[] {
  return answerProblems(request.schema, contentOf(request, draft));
}

/** The resume entry of an answered question, or why it cannot be sent yet. */
export function questionEntry(
  request: QuestionRequest,
  draft: QuestionDraft | undefined,
): { ok: true; entry: ResumeEntry } | { ok: false; error: string } {
  if (!draft?.action) return { ok: false, error: `Answer “${request.message}” first (Send or Decline).` };
  if (draft.action === 'decline')
    return {
      ok: true,
      entry: { interruptId: request.interruptId, status: 'resolved', payload: { action: 'decline' } },
    };
  const content = contentOf(request, draft);
  const problems = answerProblems(request.schema, content);
  if (problems.length) return { ok: false, error: `Check the answer to “${request.message}”.` };
  return {
    ok: true,
    entry: {
      interruptId: request.interruptId,
      status: 'resolved',
      payload: { action: 'accept', content: content as AnswerContent },
    },
  };
}

/** The questions of a view, by run, and by tool call. */
export interface ViewQuestions {
  batches: Map<string, QuestionRequest[]>;
  byToolCall: Map<string, QuestionRequest>;
}

const questionsByView = new WeakMap<ConversationView, ViewQuestions>();
export function viewQuestions(view: ConversationView): ViewQuestions {
  let found = questionsByView.get(view);
  if (!found) {
    const batches = new Map<string, QuestionRequest[]>();
    const byToolCall = new Map<string, QuestionRequest>();
    for (const run of view.runs) {
      const reqs = run.interrupts.map(questionRequestOf).filter((r): r is QuestionRequest => r !== null);
      if (reqs.length) batches.set(run.runId, reqs);
      for (const r of reqs) byToolCall.set(r.toolCallId, r);
    }
    found = { batches, byToolCall };
    questionsByView.set(view, found);
  }
  return found;
}

const openByView = new WeakMap<ConversationView, QuestionRequest[]>();
/** The questions still waiting for an answer (of the last, interrupted run). */
export function selectOpenQuestions(view: ConversationView): QuestionRequest[] {
  let found = openByView.get(view);
  if (!found) {
    found = openInterrupts(view)
      .map(questionRequestOf)
      .filter((r): r is QuestionRequest => r !== null);
    openByView.set(view, found);
  }
  return found;
}

export type QuestionCardState =
  | { kind: 'open' }
  | { kind: 'expired' }
  /** Still open for its user, seen read-only (review replay). */
  | { kind: 'waiting' }
  /** Left unanswered: the user sent a new message instead. */
  | { kind: 'unanswered' }
  | { kind: 'answered'; answer: QuestionAnsweredValue };

/** How a question's card shows (see `cardState` of approvals: the same rules). */
export function questionState(
  request: QuestionRequest,
  view: ConversationView,
  now: number,
  answerable: boolean,
  pending = answerable,
): QuestionCardState {
  const answer = view.answers?.[request.toolCallId];
  if (answer) return answer.action === 'expired' ? { kind: 'expired' } : { kind: 'answered', answer };
  if (isExpired(request.expiresAt, now)) return { kind: 'expired' };
  if (answerable) return { kind: 'open' };
  return pending ? { kind: 'waiting' } : { kind: 'unanswered' };
}

/**
 * An `ask_user` call shows as its question's card, not as a tool card; only a call the model got
 * wrong (an invalid form: an error result) shows as a tool card, so the correction can be seen.
 */
export function shownAsQuestion(call: Pick<ViewToolCall, 'name' | 'status'>): boolean {
  return call.name === 'ask_user' && call.status !== 'error';
}

/** A field's answer as the card shows it once answered ("Yes", the choice's label, the text). */
export function shownValue(property: QuestionProperty, value: unknown): string {
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (isChoice(property) && typeof value === 'string') {
    const i = property.enum.indexOf(value);
    return i >= 0 && property.enumNames?.[i] ? property.enumNames[i] : value;
  }
  return String(value);
}
