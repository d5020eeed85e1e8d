'use client';
/**
 * The card of a question the assistant asks (`ask_user`, interrupt kind `user_question`): its
 * message and a form built from the question's flat form schema, labelled by the fields' titles
 * (descriptions and limits as hints, required fields marked): radio buttons for a choice of up to
 * five values, a select for longer ones, a checkbox for yes/no, inputs for numbers and text with
 * their limits. Send checks the answer with the server's own rules first and says what is wrong
 * per field (announced); Decline answers that the user will not say. Once answered the card keeps
 * the answer. Prop-driven: the panel, another tab and the read-only review show the same.
 */
import { type ReactNode, useId, useRef, useState } from 'react';
import { fieldLabel, type AnswerProblem, type QuestionProperty, type TextQuestionProperty } from '../../elicitation';
import { ExpiresIn, RequestStateLine } from './RequestLines';
import {
  controlOf,
  initialQuestionDraft,
  questionProblems,
  shownValue,
  type QuestionCardState,
  type QuestionDraft,
  type QuestionRequest,
} from './question';

const INPUT =
  'mt-1 w-full rounded border border-slate-400 bg-white px-2 py-1 text-sm text-slate-900 ' +
  'aria-[invalid=true]:border-red-700 dark:border-slate-500 dark:bg-slate-950 dark:text-slate-100 ' +
  'dark:aria-[invalid=true]:border-red-400';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The limits of a field, in words ("3 to 200 characters", "a whole number from 1 to 30"). */
function limitsOf(property: QuestionProperty): string | null {
  if (property.type === 'boolean' || controlOf(property) === 'radio' || controlOf(property) === 'select') return null;
  if (property.type === 'number' || property.type === 'integer') {
    const what = property.type === 'integer' ? 'A whole number' : 'A number';
    const { minimum: min, maximum: max } = property;
    if (min !== undefined && max !== undefined) return `${what} from ${min} to ${max}.`;
    if (min !== undefined) return `${what}, ${min} or more.`;
    if (max !== undefined) return `${what}, ${max} or less.`;
    return property.type === 'integer' ? `${what}.` : null;
  }
  const parts: string[] = [];
  const text = property as TextQuestionProperty;
  const { minLength: min, maxLength: max } = text;
  if (min !== undefined && max !== undefined) parts.push(`${min} to ${plural(max, 'character')}.`);
  else if (min !== undefined) parts.push(`At least ${plural(min, 'character')}.`);
  else if (max !== undefined) parts.push(`At most ${plural(max, 'character')}.`);
  if (text.format === 'email') parts.push('An email address, like name@example.com.');
  if (text.format === 'uri') parts.push('A web address, like https://example.com.');
  if (text.format === 'date-time') parts.push('In your time zone.');
  return parts.length ? parts.join(' ') : null;
}

const INPUT_TYPE = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' } as const;

interface FieldProps {
  id: string;
  name: string;
  property: QuestionProperty;
  required: boolean;
  value: string | boolean | undefined;
  onChange: (value: string | boolean) => void;
  error?: string;
  disabled?: boolean;
}

/** "Title" with a required mark: a star for the eye, the word for screen readers. */
function LabelText({ name, property, required }: Pick<FieldProps, 'name' | 'property' | 'required'>) {
  return (
    <>
      {fieldLabel(name, property)}
      {required ? (
        <>
          <span aria-hidden="true" className="text-red-800 dark:text-red-300">
            {' '}
            *
          </span>
          <span className="sr-only"> (required)</span>
        </>
      ) : null}
    </>
  );
}

function Hint({ id, property }: { id: string; property: QuestionProperty }) {
  const limits = limitsOf(property);
  if (!property.description && !limits) return null;
  return (
    <p id={id} className="mt-0.5 text-xs text-slate-600 dark:text-slate-300">
      {[property.description, limits].filter(Boolean).join(' ')}
    </p>
  );
}

function FieldError({ id, error }: { id: string; error?: string }) {
  if (!error) return null;
  return (
    <p id={id} className="mt-0.5 text-xs font-medium text-red-800 dark:text-red-300" data-testid="question-field-error">
      <span aria-hidden="true">✕ </span>
      {error}
    </p>
  );
}

/** One field of the form, with the control its schema calls for. */
function Field({ id, name, property, required, value, onChange, error, disabled }: FieldProps) {
  const hintId = `${id}-hint`;
  const errorId = `${id}-error`;
  const hasHint = Boolean(property.description || limitsOf(property));
  const describedBy = [hasHint ? hintId : '', error ? errorId : ''].filter(Boolean).join(' ') || undefined;
  const control = controlOf(property);
  const text = typeof value === 'string' ? value : '';

  if (control === 'checkbox') {
    return (
      <div data-testid="question-field" data-field={name}>
        <div className="flex items-start gap-2">
          <input
            id={id}
            type="checkbox"
            checked={value === true}
            onChange={(e) => onChange(e.target.checked)}
            aria-describedby={describedBy}
            aria-invalid={error ? true : undefined}
            disabled={disabled}
            className="mt-0.5 h-4 w-4"
          />
          <label htmlFor={id} className="text-sm font-medium">
            <LabelText name={name} property={property} required={required} />
          </label>
        </div>
        <Hint id={hintId} property={property} />
        <FieldError id={errorId} error={error} />
      </div>
    );
  }

  if (control === 'radio' && property.type === 'string' && property.enum) {
    const names = property.enumNames;
    return (
      <fieldset id={id} data-testid="question-field" data-field={name} aria-describedby={describedBy}>
        <legend className="text-sm font-medium">
          <LabelText name={name} property={property} required={required} />
        </legend>
        <div className="mt-1 flex flex-col gap-1">
          {property.enum.map((option, i) => (
            <label key={option} className="flex items-center gap-2 text-sm">
              <input
                type="radio"
                name={id}
                value={option}
                checked={text === option}
                onChange={() => onChange(option)}
                required={required}
                disabled={disabled}
                className="h-4 w-4"
              />
              {names?.[i] ?? option}
            </label>
          ))}
        </div>
        <Hint id={hintId} property={property} />
        <FieldError id={errorId} error={error} />
      </fieldset>
    );
  }

  const common = {
    id,
    'aria-describedby': describedBy,
    'aria-invalid': error ? true : undefined,
    required,
    disabled,
    className: INPUT,
  } as const;
  let input: ReactNode;
  if (control === 'select' && property.type === 'string' && property.enum) {
    const names = property.enumNames;
    input = (
      <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
        <option value="">Choose…</option>
        {property.enum.map((option, i) => (
          <option key={option} value={option}>
            {names?.[i] ?? option}
          </option>
        ))}
      </select>
    );
  } else if (control === 'number' && (property.type === 'number' || property.type === 'integer')) {
    input = (
      <input
        {...common}
        type="number"
        inputMode={property.type === 'integer' ? 'numeric' : 'decimal'}
        step={property.type === 'integer' ? 1 : 'any'}
        min={property.minimum}
        max={property.maximum}
        value={text}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else if (property.type === 'string' && !property.format && (property.maxLength ?? Infinity) > 200) {
    input = (
      <textarea
        {...common}
        rows={3}
        minLength={property.minLength}
        maxLength={property.maxLength}
        value={text}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  } else {
    const format = property.type === 'string' ? property.format : undefined;
    input = (
      <input
        {...common}
        type={format ? INPUT_TYPE[format] : 'text'}
        minLength={property.type === 'string' ? property.minLength : undefined}
        maxLength={property.type === 'string' ? property.maxLength : undefined}
        autoComplete={format === 'email' ? 'email' : 'off'}
        value={text}
        onChange={(e) => onChange(e.target.value)}
      />
    );
  }
  return (
    <div data-testid="question-field" data-field={name}>
      <label htmlFor={id} className="text-sm font-medium">
        <LabelText name={name} property={property} required={required} />
      </label>
      {input}
      <Hint id={hintId} property={property} />
      <FieldError id={errorId} error={error} />
    </div>
  );
}

/** The answer kept on an answered card: each field with what was said, or that it was declined. */
function Answered({
  request,
  state,
}: {
  request: QuestionRequest;
  state: Extract<QuestionCardState, { kind: 'answered' }>;
}) {
  if (state.answer.action === 'decline') {
    return (
      <p className="mt-2 text-sm font-medium" data-testid="question-outcome" data-outcome="declined">
        <span aria-hidden="true">⊘ </span>Declined: the assistant was told you did not want to answer.
      </p>
    );
  }
  const content = state.answer.content ?? {};
  const answered = Object.entries(request.schema.properties).filter(([name]) => content[name] !== undefined);
  return (
    <div className="mt-2 text-sm" data-testid="question-outcome" data-outcome="answered">
      <p className="font-medium">
        <span aria-hidden="true">✓ </span>Answered
      </p>
      {answered.length ? (
        <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-3 gap-y-0.5">
          {answered.map(([name, property]) => (
            <div key={name} className="contents">
              <dt className="text-slate-600 dark:text-slate-300">{fieldLabel(name, property)}</dt>
              <dd className="whitespace-pre-wrap break-words" data-testid="question-answer" data-field={name}>
                {shownValue(property, content[name])}
              </dd>
            </div>
          ))}
        </dl>
      ) : null}
    </div>
  );
}

interface QuestionCardProps {
  request: QuestionRequest;
  state: QuestionCardState;
  draft?: QuestionDraft;
  onDraftChange?: (draft: QuestionDraft) => void;
  /** Send (accept, once the form checks out) or Decline. */
  onAnswer?: (action: 'accept' | 'decline') => void;
  submitting?: boolean;
  /** Why the answers could not be sent (the server's refusal, or another request of the batch left open). */
  error?: string | null;
  /** Current time in ms (the panel's clock ticks while the question waits). */
  now: number;
}

function QuestionCard({
  request,
  state,
  draft: given,
  onDraftChange,
  onAnswer,
  submitting,
  error,
  now,
}: QuestionCardProps) {
  const id = useId();
  const formRef = useRef<HTMLFormElement>(null);
  // Per-field problems show once Send was tried, and follow the edits from then on.
  const [tried, setTried] = useState(false);
  const draft = given ?? initialQuestionDraft(request);
  const open = state.kind === 'open' && onDraftChange && onAnswer;
  const problems: AnswerProblem[] = open && tried ? questionProblems(request, draft) : [];
  const problemOf = new Map(problems.map((p) => [p.field, p.message]));
  const required = new Set(request.schema.required ?? []);
  const fields = Object.entries(request.schema.properties);
  const expiresMs = request.expiresAt ? Date.parse(request.expiresAt) - now : Number.NaN;
  const fieldId = (name: string) => `${id}-f-${name}`;

  const send = () => {
    const found = questionProblems(request, draft);
    setTried(true);
    if (found.length) {
      // The first field to fix gets the focus; the summary below is announced.
      const first = found.find((p) => p.field)?.field;
      const el = first ? formRef.current?.ownerDocument.getElementById(fieldId(first)) : null;
      (el?.matches('fieldset') ? el.querySelector<HTMLElement>('input') : el)?.focus();
      return;
    }
    onAnswer?.('accept');
  };

  const stateLabel =
    state.kind === 'answered' ? (state.answer.action === 'accept' ? 'answered' : 'declined') : state.kind;
  return (
    <article
      data-testid="question-card"
      data-state={stateLabel}
      data-tool-call-id={request.toolCallId}
      aria-labelledby={`${id}-title`}
      className={`my-2 rounded-lg bg-white p-3 text-sm dark:bg-slate-900 ${
        state.kind === 'open'
          ? 'border-2 border-sky-300 dark:border-sky-700'
          : 'border border-slate-300 dark:border-slate-700'
      }`}
    >
      <h3 id={`${id}-title`} className="font-semibold">
        <span aria-hidden="true">? </span>
        {state.kind === 'open' ? 'The assistant asks' : 'The assistant asked'}
      </h3>
      <p id={`${id}-message`} className="mt-1 whitespace-pre-wrap break-words" data-testid="question-message">
        {request.message}
      </p>

      {state.kind === 'answered' ? <Answered request={request} state={state} /> : null}
      <RequestStateLine
        kind={state.kind}
        testId="question-outcome"
        dataKey="outcome"
        expired="Expired: the assistant was told you did not answer."
      />

      {open ? (
        <form
          ref={formRef}
          noValidate
          aria-labelledby={`${id}-title`}
          aria-describedby={`${id}-message`}
          className="mt-3 space-y-3"
          data-testid="question-form"
          onSubmit={(e) => {
            e.preventDefault();
            send();
          }}
        >
          {Number.isFinite(expiresMs) ? <ExpiresIn ms={expiresMs} at={request.expiresAt} /> : null}
          {fields.map(([name, property]) => (
            <Field
              key={name}
              id={fieldId(name)}
              name={name}
              property={property}
              required={required.has(name)}
              value={draft.values[name]}
              onChange={(value) =>
                onDraftChange({ ...draft, values: { ...draft.values, [name]: value }, action: null })
              }
              error={problemOf.get(name)}
              disabled={submitting}
            />
          ))}
          {required.size ? (
            <p className="text-xs text-slate-600 dark:text-slate-300">
              <span aria-hidden="true">* </span>Required
            </p>
          ) : null}
          <div role="alert" className="text-xs text-red-800 dark:text-red-300" data-testid="question-error">
            {problems.length ? (
              <p className="font-medium">
                {problems.length === 1 ? 'Check this field: ' : `Check these ${problems.length} fields: `}
                {problems
                  .map((p) => {
                    const property = request.schema.properties[p.field];
                    return property ? `${fieldLabel(p.field, property)} (${p.message})` : p.message;
                  })
                  .join('; ')}
              </p>
            ) : error ? (
              <p className="font-medium">{error}</p>
            ) : null}
          </div>
          <div className="flex flex-wrap items-center gap-2">
            <button
              type="submit"
              data-testid="question-send"
              disabled={submitting}
              className="rounded bg-blue-700 px-3 py-1 font-medium text-white disabled:opacity-50"
            >
              {submitting && draft.action === 'accept' ? 'Sending…' : 'Send'}
            </button>
            <button
              type="button"
              data-testid="question-decline"
              disabled={submitting}
              onClick={() => onAnswer('decline')}
              className={[
                'rounded border border-slate-500 px-3 py-1 font-medium text-slate-800 hover:bg-slate-100',
                'disabled:opacity-50 dark:text-slate-100 dark:hover:bg-slate-800',
              ].join(' ')}
            >
              Decline
            </button>
          </div>
        </form>
      ) : null}
    </article>
  );
}

export interface QuestionBatchProps {
  requests: QuestionRequest[];
  states: QuestionCardState[];
  drafts: Record<string, QuestionDraft | undefined>;
  onDraftChange?: (interruptId: string, draft: QuestionDraft) => void;
  onAnswer?: (interruptId: string, action: 'accept' | 'decline') => void;
  submitting?: boolean;
  error?: string | null;
  now: number;
}

/** The questions of one interrupted run (answered with the rest of its batch). */
export function QuestionBatch({
  requests,
  states,
  drafts,
  onDraftChange,
  onAnswer,
  submitting,
  error,
  now,
}: QuestionBatchProps) {
  return (
    <div data-testid="question-batch">
      {requests.map((request, i) => (
        <QuestionCard
          key={request.interruptId}
          request={request}
          state={states[i] ?? { kind: 'unanswered' }}
          draft={drafts[request.interruptId]}
          onDraftChange={onDraftChange ? (d) => onDraftChange(request.interruptId, d) : undefined}
          onAnswer={onAnswer ? (action) => onAnswer(request.interruptId, action) : undefined}
          submitting={submitting}
          error={error}
          now={now}
        />
      ))}
    </div>
  );
}
