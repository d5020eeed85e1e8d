'use client';
import { useId, useState, type KeyboardEvent as ReactKeyboardEvent, type ReactNode } from 'react';
import type { ApprovalDecidedValue } from '../schema';
import {
  REASON_TEXT,
  checkArgsText,
  describeCall,
  diffArgs,
  formatArgs,
  formatCountdown,
  humanizeToolName,
  initialDraft,
  type ArgChange,
  type ApprovalRequest,
  type CardState,
  type DraftAnswer,
  type JsonObject,
} from './approval';
import { ApprovalChanges } from './ApprovalChanges';
import { HourglassIcon, ShieldIcon } from './icons';
import { ExpiresIn, RequestStateLine } from './interrupts/RequestLines';
import { formatFieldError } from './json-schema';

function short(v: unknown): string {
  const s = typeof v === 'string' ? `“${v}”` : (JSON.stringify(v) ?? 'undefined');
  return s.length > 80 ? `${s.slice(0, 79)}…` : s;
}

/** The changes between the proposed and the edited (or executed) arguments. */
function ArgsDiff({
  changes,
  id,
  title,
  testId,
}: {
  changes: ArgChange[];
  id?: string;
  title: string;
  testId: string;
}) {
  return (
    <div id={id} className="mt-1 text-xs" data-testid={testId}>
      <p className="font-medium">{title}</p>
      <ul className="ml-4 list-disc">
        {changes.map((c) => (
          <li key={c.key}>
            <code>{c.key}</code>:{' '}
            {c.kind === 'added' ? (
              <>added {short(c.after)}</>
            ) : c.kind === 'removed' ? (
              <>removed (was {short(c.before)})</>
            ) : (
              <>
                <del className="text-slate-500 dark:text-slate-400">
                  <span className="sr-only">was </span>
                  {short(c.before)}
                </del>{' '}
                <span aria-hidden="true">→</span>{' '}
                <ins className="font-medium no-underline">
                  <span className="sr-only">now </span>
                  {short(c.after)}
                </ins>
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

function Outcome({ decision, proposed }: { decision: ApprovalDecidedValue; proposed: JsonObject }) {
  const text =
    decision.decision === 'approved'
      ? `${decision.edited ? 'Approved with edited arguments' : 'Approved'}${
          decision.alwaysInConversation ? ', and allowed for the rest of this conversation' : ''
        }`
      : decision.decision === 'rejected'
        ? 'Rejected'
        : 'Expired before an answer';
  const icon = decision.decision === 'approved' ? '✓' : decision.decision === 'rejected' ? '⊘' : <HourglassIcon />;
  const ran = decision.decision === 'approved' ? decision.args : undefined;
  const changes = ran ? diffArgs(proposed, ran) : [];
  return (
    <div className="mt-2 text-sm">
      <p className="font-medium" data-testid="approval-outcome" data-decision={decision.decision}>
        <span aria-hidden="true">{icon} </span>
        {text}
      </p>
      {decision.feedback ? (
        <p className="whitespace-pre-wrap break-words text-slate-600 dark:text-slate-300">
          Your note: {decision.feedback}
        </p>
      ) : null}
      {ran ? (
        <div className="mt-1 text-xs" data-testid="approval-ran-with">
          <p className="font-medium">Ran with:</p>
          <pre className="mt-0.5 overflow-auto whitespace-pre-wrap break-words rounded bg-slate-50 p-1.5 font-mono dark:bg-slate-800">
            {formatArgs(ran)}
          </pre>
          {changes.length ? (
            <ArgsDiff changes={changes} title="Changed from the proposal:" testId="approval-ran-diff" />
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

const DECISION_LOOK = {
  approve: {
    mark: '✓ ',
    chosen: 'border-emerald-700 bg-emerald-700 text-white',
    idle: 'border-emerald-700 text-emerald-800 hover:bg-emerald-50 dark:text-emerald-300 dark:hover:bg-emerald-950',
  },
  reject: {
    mark: '⊘ ',
    chosen: 'border-red-700 bg-red-700 text-white',
    idle: 'border-red-700 text-red-800 hover:bg-red-50 dark:text-red-300 dark:hover:bg-red-950',
  },
} as const;

/** Approve or Reject on an open card: a toggle, filled while it is the chosen answer. */
function DecisionButton(props: {
  decision: keyof typeof DECISION_LOOK;
  chosen: boolean;
  disabled?: boolean;
  onChoose: () => void;
  children: ReactNode;
}) {
  const look = DECISION_LOOK[props.decision];
  return (
    <button
      type="button"
      data-testid={`approval-${props.decision}`}
      aria-pressed={props.chosen}
      disabled={props.disabled}
      onClick={props.onChoose}
      className={`rounded border px-3 py-1 font-medium disabled:opacity-50 ${props.chosen ? look.chosen : look.idle}`}
    >
      <span aria-hidden="true">{look.mark}</span>
      {props.children}
    </button>
  );
}

interface ApprovalCardProps {
  request: ApprovalRequest;
  state: CardState;
  draft?: DraftAnswer;
  onDraftChange?: (draft: DraftAnswer) => void;
  /** Current time in ms (the parent ticks once a second while a card is open). */
  now: number;
  disabled?: boolean;
}

function ApprovalCard({ request, state, draft, onDraftChange, now, disabled }: ApprovalCardProps) {
  const id = useId();
  const reason = REASON_TEXT[request.reason];
  const open = state.kind === 'open' && draft && onDraftChange;
  const checked = draft ? checkArgsText(draft.argsText, request.inputSchema) : null;
  const changes = checked?.value ? diffArgs(request.args, checked.value) : [];
  const argsErrors = checked && !checked.ok ? checked.errors : [];
  const argsError = argsErrors.length > 0;
  const expiresMs = request.expiresAt ? Date.parse(request.expiresAt) - now : NaN;
  const title = humanizeToolName(request.toolName);

  const stateLabel =
    state.kind === 'decided'
      ? state.decision.decision
      : state.kind === 'expired'
        ? 'expired'
        : state.kind === 'unanswered'
          ? 'unanswered'
          : state.kind === 'waiting'
            ? 'waiting'
            : draft?.decision
              ? `chosen-${draft.decision}`
              : 'open';
  // Once a call ran, "Ran with" (and its diff against the proposal) replaces the proposal.
  const showProposal = state.kind !== 'open' && !(state.kind === 'decided' && state.decision.args);

  return (
    // An article, not a section: a named section is a landmark, and a batch repeats the same name.
    <article
      data-testid="approval-card"
      data-state={stateLabel}
      data-tool={request.toolName}
      data-tool-call-id={request.toolCallId}
      aria-labelledby={`${id}-title`}
      className={`my-2 rounded-lg p-3 text-sm ${
        state.kind !== 'open'
          ? 'border border-slate-300 dark:border-slate-700'
          : request.destructive
            ? 'border-2 border-red-300 dark:border-red-800'
            : 'border-2 border-amber-300 dark:border-amber-700'
      } bg-white dark:bg-slate-900`}
    >
      <header className="flex flex-wrap items-center gap-2">
        <h3 id={`${id}-title`} className="font-semibold">
          <ShieldIcon /> {state.kind === 'open' ? 'Approval needed' : 'Approval request'}: {title}
        </h3>
        <code className="text-xs text-slate-500 dark:text-slate-400">{request.toolName}</code>
        {request.destructive ? (
          <span className="rounded border border-red-400 px-1.5 text-xs font-medium text-red-800 dark:border-red-600 dark:text-red-300">
            <span aria-hidden="true">⚠ </span>Destructive
          </span>
        ) : null}
      </header>
      <p className="mt-1">{request.message || describeCall(request.toolName, request.args)}</p>
      <ApprovalChanges
        toolName={request.toolName}
        args={
          open && checked?.value
            ? checked.value
            : state.kind === 'decided' && state.decision.args
              ? state.decision.args
              : request.args
        }
        preview={request.preview}
      />
      <div className="mt-2 rounded bg-slate-50 p-2 text-xs dark:bg-slate-800" data-testid="approval-why">
        <p className="font-medium">
          <span aria-hidden="true">{reason.icon} </span>
          Why you are asked: {reason.label}
        </p>
        <p className="mt-0.5">{request.why || reason.description}</p>
      </div>

      {state.kind === 'decided' ? <Outcome decision={state.decision} proposed={request.args} /> : null}
      <RequestStateLine
        kind={state.kind}
        testId="approval-outcome"
        dataKey="decision"
        expired="This request expired: it can no longer be approved. Ask again if you still want it."
        waitingDetail={
          Number.isFinite(expiresMs) ? (
            <span className="font-normal text-slate-600 dark:text-slate-300">
              {' '}
              · expires in <time dateTime={request.expiresAt}>{formatCountdown(expiresMs)}</time>
            </span>
          ) : null
        }
      />

      {showProposal ? (
        <details className="mt-2 text-xs">
          <summary className="cursor-pointer select-none text-slate-600 dark:text-slate-300">
            Proposed arguments
          </summary>
          <pre className="mt-1 overflow-auto whitespace-pre-wrap break-words font-mono">{formatArgs(request.args)}</pre>
        </details>
      ) : null}

      {open ? (
        <div className="mt-3 space-y-3">
          {Number.isFinite(expiresMs) ? <ExpiresIn ms={expiresMs} at={request.expiresAt} /> : null}
          <div>
            <div className="flex items-center justify-between">
              <label htmlFor={`${id}-args`} className="text-xs font-medium">
                Arguments (JSON, editable)
              </label>
              {draft.argsText !== formatArgs(request.args) ? (
                <button
                  type="button"
                  className="text-xs text-blue-700 underline dark:text-blue-300"
                  onClick={() => onDraftChange({ ...draft, argsText: formatArgs(request.args) })}
                  disabled={disabled}
                >
                  Reset
                </button>
              ) : null}
            </div>
            <textarea
              id={`${id}-args`}
              data-testid="approval-args"
              value={draft.argsText}
              onChange={(e) =>
                onDraftChange({
                  ...draft,
                  argsText: e.target.value,
                  decision: draft.decision === 'approve' ? null : draft.decision,
                })
              }
              spellCheck={false}
              rows={Math.min(10, Math.max(3, draft.argsText.split('\n').length))}
              aria-invalid={argsError ? true : undefined}
              aria-describedby={
                [argsError ? `${id}-args-err` : '', changes.length ? `${id}-diff` : ''].filter(Boolean).join(' ') ||
                undefined
              }
              disabled={disabled}
              className="mt-1 w-full rounded border border-slate-300 bg-white p-2 font-mono text-xs dark:border-slate-600 dark:bg-slate-950"
            />
            {argsError ? (
              <div
                id={`${id}-args-err`}
                aria-live="polite"
                className="mt-1 text-xs text-red-800 dark:text-red-300"
                data-testid="approval-args-error"
              >
                <p className="font-medium">
                  <span aria-hidden="true">✕ </span>
                  {argsErrors.length === 1
                    ? 'Fix this before approving:'
                    : `Fix these ${argsErrors.length} problems before approving:`}
                </p>
                <ul className="ml-4 list-disc">
                  {argsErrors.map((e, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: one path can have several errors; the list is replaced whole, never reordered
                    <li key={`${e.path}-${i}`} data-testid="approval-field-error" data-field={e.path}>
                      {e.path ? (
                        <>
                          <code>{e.path}</code>: {e.message}
                        </>
                      ) : (
                        formatFieldError(e)
                      )}
                    </li>
                  ))}
                </ul>
              </div>
            ) : null}
            {changes.length ? (
              <ArgsDiff id={`${id}-diff`} changes={changes} title="You changed:" testId="approval-diff" />
            ) : null}
          </div>
          <div>
            <label htmlFor={`${id}-fb`} className="text-xs font-medium">
              Note for the assistant (optional)
            </label>
            <textarea
              id={`${id}-fb`}
              data-testid="approval-feedback"
              value={draft.feedback}
              onChange={(e) => onDraftChange({ ...draft, feedback: e.target.value })}
              rows={2}
              maxLength={2000}
              disabled={disabled}
              className="mt-1 w-full rounded border border-slate-300 bg-white p-2 text-xs dark:border-slate-600 dark:bg-slate-950"
            />
          </div>
          <div className="flex flex-wrap items-center gap-2" role="group" aria-label={`Decision for ${title}`}>
            <DecisionButton
              decision="approve"
              chosen={draft.decision === 'approve'}
              disabled={disabled || argsError}
              onChoose={() => onDraftChange({ ...draft, decision: 'approve' })}
            >
              {changes.length ? 'Approve with edits' : 'Approve'}
            </DecisionButton>
            <DecisionButton
              decision="reject"
              chosen={draft.decision === 'reject'}
              disabled={disabled}
              onChoose={() => onDraftChange({ ...draft, decision: 'reject', alwaysInConversation: false })}
            >
              Reject
            </DecisionButton>
            <span className="text-xs text-slate-600 dark:text-slate-300" aria-live="polite">
              {draft.decision === 'approve'
                ? 'Chosen: approve'
                : draft.decision === 'reject'
                  ? 'Chosen: reject'
                  : 'No decision yet'}
            </span>
          </div>
          {request.canAlwaysAllow ? (
            <label className="flex items-start gap-2 text-xs" data-testid="approval-always">
              <input
                type="checkbox"
                className="mt-0.5"
                checked={draft.alwaysInConversation === true}
                disabled={disabled || argsError}
                aria-describedby={`${id}-always-help`}
                onChange={(e) =>
                  onDraftChange({
                    ...draft,
                    alwaysInConversation: e.target.checked,
                    ...(e.target.checked ? { decision: 'approve' as const } : {}),
                  })
                }
              />
              <span>
                <span className="font-medium">Always allow “{title}” in this conversation</span>
                <span id={`${id}-always-help`} className="block text-slate-600 dark:text-slate-300">
                  Approves this call; later calls of this tool in this conversation run without asking, until you revoke
                  it or the project&apos;s tool permissions change.
                </span>
              </span>
            </label>
          ) : null}
        </div>
      ) : null}
    </article>
  );
}

export interface ApprovalBatchProps {
  requests: ApprovalRequest[];
  states: CardState[];
  drafts: Record<string, DraftAnswer | undefined>;
  onDraftChange?: (interruptId: string, draft: DraftAnswer) => void;
  onSubmit?: () => void;
  /** Approve all / Reject all in one click (each card still gets its own explicit answer). */
  onAnswerAll?: (decision: 'approve' | 'reject', note?: string) => void;
  submitting?: boolean;
  error?: string | null;
  now: number;
}

/** Keyboard shortcuts of a batch, active while the focus is inside it (on a card or its controls). */
const BATCH_SHORTCUTS = { approveAll: 'Alt+Shift+A', rejectAll: 'Alt+Shift+R' } as const;

/**
 * The cards of one interrupted run; open ones are answered call by call and submitted once, or
 * all at once with Approve all / Reject all.
 */
export function ApprovalBatch({
  requests,
  states,
  drafts,
  onDraftChange,
  onSubmit,
  onAnswerAll,
  submitting,
  error,
  now,
}: ApprovalBatchProps) {
  const noteId = useId();
  const [rejectNote, setRejectNote] = useState('');
  const openCount = states.filter((s) => s.kind === 'open').length;
  const answered = requests.filter((r, i) => states[i]?.kind === 'open' && drafts[r.interruptId]?.decision).length;
  const interactive = openCount > 0 && onDraftChange && onSubmit;
  const answerAll = interactive && onAnswerAll && openCount > 1 && !submitting ? onAnswerAll : undefined;
  const onKeyDown = (e: ReactKeyboardEvent<HTMLDivElement>) => {
    // `code`, not `key`: Alt+Shift changes the typed character on some layouts (macOS: Å).
    if (!answerAll || !e.altKey || !e.shiftKey || e.ctrlKey || e.metaKey || e.nativeEvent.isComposing) return;
    if (e.code === 'KeyA') answerAll('approve');
    else if (e.code === 'KeyR') answerAll('reject', rejectNote);
    else return;
    e.preventDefault();
  };
  return (
    // biome-ignore lint/a11y/noStaticElementInteractions: catches the Alt+Shift+A/R shortcuts bubbling up from the cards' own controls
    <div className="my-2" data-testid="approval-batch" onKeyDown={onKeyDown}>
      {requests.map((r, i) => (
        <ApprovalCard
          key={r.interruptId}
          request={r}
          state={states[i] ?? { kind: 'unanswered' }}
          draft={onDraftChange ? (drafts[r.interruptId] ?? initialDraft(r)) : undefined}
          onDraftChange={onDraftChange ? (d) => onDraftChange(r.interruptId, d) : undefined}
          now={now}
          disabled={submitting}
        />
      ))}
      {interactive && onAnswerAll && openCount > 1 ? (
        <div
          role="group"
          aria-label={`Answer all ${openCount} requests`}
          className={[
            'mb-2 flex flex-wrap items-center gap-2 rounded-md border border-slate-300 bg-slate-50 p-2 text-sm',
            'dark:border-slate-600 dark:bg-slate-800',
          ].join(' ')}
          data-testid="approval-all"
        >
          <button
            type="button"
            data-testid="approval-approve-all"
            aria-keyshortcuts={BATCH_SHORTCUTS.approveAll}
            title={`Approve all ${openCount} (${BATCH_SHORTCUTS.approveAll} while a card has focus)`}
            onClick={() => onAnswerAll('approve')}
            disabled={submitting}
            className={[
              'rounded border border-emerald-700 px-3 py-1 font-medium text-emerald-800 hover:bg-emerald-50',
              'disabled:opacity-50 dark:text-emerald-300 dark:hover:bg-emerald-950',
            ].join(' ')}
          >
            <span aria-hidden="true">✓ </span>Approve all
          </button>
          <button
            type="button"
            data-testid="approval-reject-all"
            aria-keyshortcuts={BATCH_SHORTCUTS.rejectAll}
            title={`Reject all ${openCount} (${BATCH_SHORTCUTS.rejectAll} while a card has focus)`}
            onClick={() => onAnswerAll('reject', rejectNote)}
            disabled={submitting}
            className={[
              'rounded border border-red-700 px-3 py-1 font-medium text-red-800 hover:bg-red-50',
              'disabled:opacity-50 dark:text-red-300 dark:hover:bg-red-950',
            ].join(' ')}
          >
            <span aria-hidden="true">⊘ </span>Reject all
          </button>
          <label htmlFor={noteId} className="sr-only">
            Note for the assistant with Reject all (optional)
          </label>
          <input
            id={noteId}
            data-testid="approval-reject-all-note"
            value={rejectNote}
            onChange={(e) => setRejectNote(e.target.value)}
            maxLength={2000}
            disabled={submitting}
            placeholder="Note with Reject all (optional)"
            className={[
              'min-w-0 flex-1 rounded border border-slate-300 bg-white px-2 py-1 text-xs dark:border-slate-600',
              'dark:bg-slate-950',
            ].join(' ')}
          />
          <p className="w-full text-xs text-slate-600 dark:text-slate-300">
            Every request gets its own answer. Shortcuts while a card has focus: {BATCH_SHORTCUTS.approveAll} approves
            all, {BATCH_SHORTCUTS.rejectAll} rejects all.
          </p>
        </div>
      ) : null}
      {interactive ? (
        <div className="sticky bottom-0 flex flex-wrap items-center gap-2 rounded-md border border-slate-300 bg-white p-2 text-sm dark:border-slate-600 dark:bg-slate-900">
          <button
            type="button"
            data-testid="approval-submit"
            onClick={onSubmit}
            disabled={submitting || answered < openCount}
            className="rounded bg-blue-700 px-3 py-1 font-medium text-white disabled:opacity-50"
          >
            {submitting ? 'Sending…' : openCount > 1 ? `Send ${openCount} decisions` : 'Send decision'}
          </button>
          <span className="text-xs text-slate-600 dark:text-slate-300">
            {answered} of {openCount} answered{answered < openCount ? ' — choose Approve or Reject on each card' : ''}
          </span>
          {error ? (
            <p role="alert" className="w-full text-xs text-red-800 dark:text-red-300">
              {error}
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
