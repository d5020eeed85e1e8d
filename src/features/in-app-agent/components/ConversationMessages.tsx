'use client';
/**
 * Renders a folded conversation view: messages, tool cards, the cards of a run's interrupts
 * (approvals: `ApprovalBatch`; questions: `interrupts/QuestionCard`), run outcomes. Purely
 * prop-driven, so the live panel, a reloaded conversation and the read-only review page all show
 * the same thing from the same `ConversationView`.
 */
import { memo, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { LIMITS } from '../constants';
import {
  attachmentsOf,
  type ConversationView,
  type FeedbackReason,
  type MessagePart,
  type RunState,
  type TokenUsage,
  type ViewMessage,
} from '../schema';
import { ApprovalBatch } from './ApprovalCard';
import type { DraftAnswer } from './approval';
import { QuestionBatch } from './interrupts/QuestionCard';
import { questionState, shownAsQuestion, viewQuestions, type QuestionDraft } from './interrupts/question';
import { describeError, type PanelError } from './errors';
import { FeedbackButtons, type FeedbackValue } from './FeedbackButtons';
import { Markdown } from './Markdown';
import { MessageAttachments } from './MessageAttachments';
import { NO_TOOL_STATES, batchStates, toolStatesOf, viewApprovals } from './message-tool-states';
import { ToolCallCard, type ToolCardStatus } from './ToolCallCard';
import { turnUsage } from './view-pages';
import { approximately, formatUsd } from './usage-format';

type AssistantMessage = Extract<ViewMessage, { role: 'assistant' }>;

interface ApprovalControls {
  drafts: Record<string, DraftAnswer | undefined>;
  onDraftChange: (interruptId: string, draft: DraftAnswer) => void;
  onSubmit: () => void;
  /** Approve all / Reject all of the open batch. */
  onAnswerAll?: (decision: 'approve' | 'reject', note?: string) => void;
  submitting: boolean;
  error: string | null;
}

/** Answering the questions (`ask_user`) of the open batch. */
interface QuestionControls {
  drafts: Record<string, QuestionDraft | undefined>;
  onDraftChange: (interruptId: string, draft: QuestionDraft) => void;
  onAnswer: (interruptId: string, action: 'accept' | 'decline') => void;
  submitting: boolean;
  error: string | null;
}

export interface ConversationMessagesProps {
  view: ConversationView;
  feedback?: Record<string, FeedbackValue | undefined>;
  /** Omit for read-only rendering (review page). */
  onFeedback?: (messageId: string, value: 1 | -1, comment?: string, reasons?: FeedbackReason[]) => Promise<void>;
  /** Unsaved thumbs-down comments per message (null/absent: the comment form is closed). */
  feedbackDrafts?: Record<string, string | undefined>;
  onFeedbackDraft?: (messageId: string, text: string | null) => void;
  /** Omit for read-only rendering: open approvals then show as not answered. */
  approvals?: ApprovalControls;
  /** Omit for read-only rendering: open questions then show as waiting or not answered. */
  questions?: QuestionControls;
  now: number;
  /** A user message sent but not yet echoed by the server. */
  pendingUserMessage?: string | null;
  /** An error of the request itself (before any event arrived). */
  requestError?: PanelError | null;
  onRetry?: () => void;
  /** True while a request is in flight (hides Retry, shows the typing indicator). */
  busy?: boolean;
  /** Edit the newest user message, ask the newest turn again (omit when that is not offered now). */
  revise?: ReviseControls;
  /** Switch between the versions of a turn (omit for read-only rendering: no switcher). */
  versions?: VersionControls;
  /** Tokens (and cost, when priced) under each finished answer. */
  showUsage?: boolean;
  /** "Show earlier messages" at the top, when the conversation has earlier messages than those shown. */
  earlier?: EarlierControls;
  /** The project the conversation belongs to: its attachments are fetched from its route (omit: names only). */
  projectId?: string;
  /** Sends a follow-up the model suggested (omit for read-only rendering: no suggestions). */
  onSuggestion?: (text: string) => void;
}

interface ReviseControls {
  onEdit: (text: string) => void;
  onRegenerate: () => void;
}

interface VersionControls {
  /** Shows `toRunId` instead of `fromRunId` (both start the same turn). */
  onSelect: (fromRunId: string, toRunId: string) => void;
  disabled: boolean;
}

interface EarlierControls {
  onLoad: () => void;
  loading: boolean;
  error: string | null;
}

const count = (n: number) => n.toLocaleString('en-US');

/** "1,234 in · 567 out · $0.00036" (the cost only when it is known), or null without token counts. */
export function formatUsage(usage: TokenUsage | undefined): string | null {
  if (!usage || (usage.inputTokens === undefined && usage.outputTokens === undefined)) return null;
  const parts = [`${count(usage.inputTokens ?? 0)} in`, `${count(usage.outputTokens ?? 0)} out`];
  if (usage.costUsd !== undefined) parts.push(formatUsd(usage.costUsd));
  return approximately(usage.estimated, parts.join(' · '));
}

/** The newest user message, editable in place (Enter saves, Escape cancels). */
function EditableUserMessage({
  id,
  content,
  onEdit,
  parts,
  projectId,
}: {
  id: string;
  content: string;
  onEdit?: (text: string) => void;
  parts?: MessagePart[];
  projectId?: string;
}) {
  const fieldId = useId();
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(content);
  const editButton = useRef<HTMLButtonElement>(null);
  const returnFocus = useRef(false);
  useEffect(() => {
    if (!editing && returnFocus.current) {
      returnFocus.current = false;
      editButton.current?.focus();
    }
  }, [editing]);
  if (!onEdit) return <UserBubble id={id} content={content} parts={parts} projectId={projectId} />;
  if (!editing) {
    return (
      <div className="flex flex-col items-end gap-0.5">
        <UserBubble id={id} content={content} parts={parts} projectId={projectId} />
        <button
          ref={editButton}
          type="button"
          data-testid="assistant-edit-message"
          aria-label="Edit your message"
          title="Edit your message and ask again (the current answer is kept as a version)"
          onClick={() => {
            setText(content);
            setEditing(true);
          }}
          className={[
            'rounded px-1.5 py-0.5 text-xs text-slate-600 hover:bg-slate-100',
            'dark:text-slate-300 dark:hover:bg-slate-800',
          ].join(' ')}
        >
          <span aria-hidden="true">✎ </span>Edit
        </button>
      </div>
    );
  }
  const cancel = () => {
    returnFocus.current = true;
    setEditing(false);
  };
  const save = () => {
    if (!text.trim()) return;
    setEditing(false);
    onEdit(text);
  };
  return (
    <form
      data-testid="assistant-edit"
      className="ml-8 flex flex-col gap-1 self-stretch"
      onSubmit={(e) => {
        e.preventDefault();
        save();
      }}
    >
      <label htmlFor={fieldId} className="sr-only">
        Edit your message
      </label>
      <textarea
        id={fieldId}
        data-testid="assistant-edit-input"
        autoFocus
        value={text}
        maxLength={LIMITS.maxUserMessageChars}
        rows={Math.min(6, Math.max(2, text.split('\n').length))}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.nativeEvent.isComposing) return;
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            save();
          } else if (e.key === 'Escape') {
            // Leaves the editor only (the panel closes on Escape otherwise).
            e.preventDefault();
            cancel();
          }
        }}
        className={[
          'w-full resize-none rounded-md border border-slate-300 bg-white p-2 text-sm',
          'dark:border-slate-600 dark:bg-slate-900',
        ].join(' ')}
      />
      <div className="flex items-center justify-end gap-2 text-xs">
        <span className="mr-auto text-slate-600 dark:text-slate-300">
          The current answer is kept as an earlier version.
        </span>
        <button
          type="button"
          data-testid="assistant-edit-cancel"
          onClick={cancel}
          className="rounded border border-slate-400 px-2 py-0.5"
        >
          Cancel
        </button>
        <button
          type="submit"
          data-testid="assistant-edit-save"
          disabled={!text.trim()}
          className="rounded bg-blue-700 px-2 py-0.5 font-medium text-white disabled:opacity-50"
        >
          Save
        </button>
      </div>
    </form>
  );
}

const VERSION_STEP = {
  previous: { label: 'Previous version', arrow: '‹' },
  next: { label: 'Next version', arrow: '›' },
} as const;

/** One arrow of the version switcher: shows version `to` of the turn now shown by `runId` (none: disabled). */
function VersionStep(props: {
  direction: keyof typeof VERSION_STEP;
  to: string | undefined;
  runId: string;
  controls: VersionControls;
}) {
  const { to, runId, controls } = props;
  const step = VERSION_STEP[props.direction];
  return (
    <button
      type="button"
      aria-label={step.label}
      data-testid={`assistant-version-${props.direction}`}
      disabled={controls.disabled || !to}
      onClick={() => to && controls.onSelect(runId, to)}
      className={[
        'rounded px-1.5 py-0.5 hover:bg-slate-100 disabled:opacity-40 disabled:hover:bg-transparent',
        'dark:hover:bg-slate-800',
      ].join(' ')}
    >
      <span aria-hidden="true">{step.arrow}</span>
    </button>
  );
}

/** "‹ 2 / 3 ›": which version of a turn is shown, and the way to the others. */
function VersionSwitcher({
  runId,
  index,
  total,
  runIds,
  controls,
}: {
  runId: string;
  index: number;
  total: number;
  runIds: string[];
  controls: VersionControls;
}) {
  return (
    <div
      role="group"
      aria-label="Versions of this answer"
      data-testid="assistant-versions"
      data-run-id={runId}
      className="flex items-center gap-0.5"
    >
      <VersionStep direction="previous" to={runIds[index - 2]} runId={runId} controls={controls} />
      <span data-testid="assistant-version-position" aria-hidden="true" className="tabular-nums">
        {index} / {total}
      </span>
      <span className="sr-only">
        Version {index} of {total}
      </span>
      <VersionStep direction="next" to={runIds[index]} runId={runId} controls={controls} />
    </div>
  );
}

/** Tokens and cost of one answer, folded away in a disclosure (keyboard: Tab, then Enter). */
function UsageDetails({ usage }: { usage: TokenUsage }) {
  const line = formatUsage(usage);
  if (!line) return null;
  const spoken =
    (usage.estimated ? 'About ' : '') +
    `${count(usage.inputTokens ?? 0)} input tokens, ${count(usage.outputTokens ?? 0)} output tokens` +
    (usage.costUsd !== undefined ? `, cost ${formatUsd(usage.costUsd)}` : '') +
    (usage.estimated ? ' (partly estimated: the answer was stopped or failed while the model was writing)' : '');
  return (
    <details data-testid="assistant-usage" className="group">
      <summary className="cursor-pointer list-none rounded px-1 hover:bg-slate-100 dark:hover:bg-slate-800">
        Usage<span className="sr-only"> of this answer</span>
      </summary>
      <span data-testid="assistant-usage-line" title={spoken} className="tabular-nums">
        {line}
      </span>
    </details>
  );
}

const NO_REFERENCES: readonly [] = [];

/** The follow-ups the model suggested under the last answer, each sent with one click. */
function FollowUps({ suggestions, onPick }: { suggestions: string[]; onPick: (text: string) => void }) {
  return (
    <div role="group" aria-label="Suggested follow-ups" className="mt-2 flex flex-wrap gap-1.5">
      {suggestions.map((text) => (
        <button
          key={text}
          type="button"
          data-testid="assistant-suggestion"
          onClick={() => onPick(text)}
          className={[
            'rounded-full border border-blue-700 px-2.5 py-0.5 text-left text-xs text-blue-800 hover:bg-blue-50',
            'dark:border-blue-400 dark:text-blue-200 dark:hover:bg-blue-950',
          ].join(' ')}
        >
          {text}
        </button>
      ))}
    </div>
  );
}

const UserBubble = memo(function UserBubble({
  id,
  content,
  pending,
  parts,
  projectId,
}: {
  id?: string;
  content: string;
  pending?: boolean;
  /** The message's parts, when it has more than its text (its attachments show above it). */
  parts?: MessagePart[];
  projectId?: string;
}) {
  const attached = parts ? attachmentsOf(parts) : [];
  const text = (
    <div
      data-testid="assistant-message"
      data-role="user"
      data-message-id={id}
      data-pending={pending ? 'true' : undefined}
      className="ml-8 self-end rounded-lg bg-blue-50 px-3 py-2 text-sm whitespace-pre-wrap break-words text-slate-900 dark:bg-blue-950 dark:text-slate-100"
    >
      <span className="sr-only">You said: </span>
      {content || (attached.length ? <span className="italic">(files only)</span> : null)}
    </div>
  );
  if (!attached.length) return text;
  return (
    <div className="ml-8 flex flex-col items-end gap-1 self-end">
      <MessageAttachments parts={attached} projectId={projectId} />
      {text}
    </div>
  );
});

const AssistantBubble = memo(function AssistantBubble({
  message,
  statuses,
  edited,
  ranWith,
  feedback,
  feedbackDraft,
  onFeedbackDraft,
  onFeedback,
  canRate,
  onSuggestion,
}: {
  message: AssistantMessage;
  /** Given to the last answer only, when its suggestions may be sent. */
  onSuggestion?: (text: string) => void;
  statuses: ToolCardStatus[];
  /** Per tool call: approved with arguments the user edited. */
  edited?: boolean[];
  /** Per tool call: the arguments it ran with, when an approval recorded them. */
  ranWith?: Array<Record<string, unknown> | undefined>;
  feedbackDraft?: string | null;
  onFeedbackDraft?: (messageId: string, text: string | null) => void;
  feedback?: FeedbackValue;
  onFeedback?: (messageId: string, value: 1 | -1, comment?: string, reasons?: FeedbackReason[]) => Promise<void>;
  canRate: boolean;
}) {
  const hasText = message.content.length > 0;
  return (
    <div
      data-testid="assistant-message"
      data-role="assistant"
      data-message-id={message.id}
      data-streaming={message.streaming ? 'true' : 'false'}
      className="mr-4 text-slate-900 dark:text-slate-100"
    >
      {hasText ? (
        <>
          <span className="sr-only">Assistant said: </span>
          <Markdown text={message.content} references={message.references ?? NO_REFERENCES} />
        </>
      ) : null}
      {message.streaming && !hasText && message.toolCalls.length === 0 ? (
        <span className="text-sm text-slate-500" aria-hidden="true">
          …
        </span>
      ) : null}
      {message.toolCalls.map((tc, i) =>
        // A question shows as its card (after the run's messages), not as a tool card.
        shownAsQuestion(tc) ? null : (
          <ToolCallCard
            key={tc.id}
            call={tc}
            status={statuses[i]}
            editedOnApproval={edited?.[i]}
            ranWith={ranWith?.[i]}
          />
        ),
      )}
      {onSuggestion && message.suggestions?.length ? (
        <FollowUps suggestions={message.suggestions} onPick={onSuggestion} />
      ) : null}
      {canRate && hasText ? (
        <FeedbackButtons
          current={feedback}
          onSubmit={
            onFeedback ? (value, comment, reasons) => onFeedback(message.id, value, comment, reasons) : undefined
          }
          draft={feedbackDraft}
          onDraftChange={onFeedbackDraft ? (text) => onFeedbackDraft(message.id, text) : undefined}
        />
      ) : null}
    </div>
  );
});

/** A failed run or request: what went wrong, and Retry when `onRetry` is given and asking again can help. */
function ErrorRow({ error, onRetry }: { error: PanelError; onRetry?: () => void }) {
  return (
    <div
      data-testid="assistant-error"
      data-code={error.code ?? ''}
      className="flex flex-wrap items-center gap-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
    >
      <span aria-hidden="true">✕</span>
      <span className="flex-1">{error.message}</span>
      {onRetry && error.retryable ? (
        <button
          type="button"
          data-testid="assistant-retry"
          onClick={onRetry}
          className="rounded border border-red-700 px-2 py-0.5 font-medium"
        >
          Retry
        </button>
      ) : null}
    </div>
  );
}

function RunFooter({
  run,
  isLast,
  onRetry,
  busy,
}: {
  run: RunState;
  isLast: boolean;
  onRetry?: () => void;
  busy?: boolean;
}): ReactNode {
  if (run.status === 'failed') {
    return (
      <ErrorRow
        error={describeError(run.error?.code, run.error?.message)}
        onRetry={isLast && !busy ? onRetry : undefined}
      />
    );
  }
  if (run.status === 'cancelled') {
    return (
      <p data-testid="assistant-stopped" className="text-xs text-slate-500 dark:text-slate-400">
        <span aria-hidden="true">■ </span>Stopped. What was already written is kept.
      </p>
    );
  }
  return null;
}

/**
 * The row under a run's answer: its versions, Regenerate (the newest answer), and, under the last
 * run of a turn, what the whole turn used (`usage`: its runs before and after approvals, summed).
 */
function TurnTools({
  run,
  versions,
  usage: turnUsed,
  onRegenerate,
  turnVersions,
}: {
  run: RunState;
  versions?: VersionControls;
  usage?: TokenUsage;
  onRegenerate?: () => void;
  turnVersions?: NonNullable<ConversationView['versions']>[string];
}): ReactNode {
  const switcher = versions && turnVersions && turnVersions.count > 1;
  const usage = formatUsage(turnUsed) !== null ? turnUsed : undefined;
  if (!switcher && !onRegenerate && !usage) return null;
  return (
    <div
      data-testid="assistant-turn-tools"
      data-run-id={run.runId}
      className="-mt-2 flex flex-wrap items-start gap-2 text-xs text-slate-600 dark:text-slate-300"
    >
      {switcher ? (
        <VersionSwitcher
          runId={run.runId}
          index={turnVersions.index}
          total={turnVersions.count}
          runIds={turnVersions.runIds}
          controls={versions}
        />
      ) : null}
      {onRegenerate ? (
        <button
          type="button"
          data-testid="assistant-regenerate"
          onClick={onRegenerate}
          title="Ask again for a new answer (this one is kept as a version)"
          className="rounded px-1.5 py-0.5 hover:bg-slate-100 dark:hover:bg-slate-800"
        >
          <span aria-hidden="true">↻ </span>Regenerate
        </button>
      ) : null}
      {usage ? <UsageDetails usage={usage} /> : null}
    </div>
  );
}

export function ConversationMessages({
  view,
  feedback,
  onFeedback,
  feedbackDrafts,
  onFeedbackDraft,
  approvals,
  questions,
  now,
  pendingUserMessage,
  requestError,
  onRetry,
  busy,
  revise,
  versions,
  showUsage,
  earlier,
  projectId,
  onSuggestion,
}: ConversationMessagesProps) {
  const lastRun = view.runs[view.runs.length - 1];
  // Edit goes on the newest user message; Regenerate on the newest answer, when it follows it.
  const lastUserIndex = view.messages.findLastIndex((m) => m.role === 'user');
  const lastAnswerIndex = view.messages.findLastIndex(
    (m) => m.role === 'assistant' && (m.content !== '' || m.toolCalls.length > 0),
  );
  const editableId = revise && lastUserIndex >= 0 ? view.messages[lastUserIndex]!.id : null;
  // A failed answer is asked again by its error row's Retry (the same thing): Regenerate is not offered beside it.
  const regenerateRunId =
    revise && lastUserIndex >= 0 && lastAnswerIndex > lastUserIndex && lastRun?.status !== 'failed'
      ? view.messages[lastAnswerIndex]!.runId
      : null;
  const usageByTurn = showUsage ? turnUsage(view) : undefined;
  // Follow-ups go under the newest answer once its turn is done, while nothing else is on its way.
  const suggestionsOn =
    onSuggestion && !busy && !pendingUserMessage && lastRun?.status === 'completed' && lastAnswerIndex >= 0
      ? view.messages[lastAnswerIndex]!.id
      : null;
  // Derived once per view; an unchanged message keeps its arrays, so its bubble does not render again.
  const { batches, answerableRun } = viewApprovals(view);
  const questionBatches = viewQuestions(view).batches;
  const toolStates = toolStatesOf(view, now);

  // Group messages by run, in order; messages of unknown runs go first.
  const known = new Set(view.runs.map((r) => r.runId));
  const groups: Array<{ run?: RunState; messages: ViewMessage[] }> = [];
  const orphans = view.messages.filter((m) => !known.has(m.runId));
  if (orphans.length) groups.push({ messages: orphans });
  const byRun = new Map<string, ViewMessage[]>();
  for (const m of view.messages)
    if (known.has(m.runId)) (byRun.get(m.runId) ?? byRun.set(m.runId, []).get(m.runId)!).push(m);
  for (const run of view.runs) groups.push({ run, messages: byRun.get(run.runId) ?? [] });

  const toolCallIds = new Set<string>();
  for (const m of view.messages) if (m.role === 'assistant') for (const tc of m.toolCalls) toolCallIds.add(tc.id);

  return (
    <div className="flex flex-col gap-3" data-testid="conversation-messages">
      {earlier ? (
        <div className="flex flex-col items-center gap-1">
          <button
            type="button"
            data-testid="assistant-earlier"
            onClick={earlier.onLoad}
            disabled={earlier.loading}
            aria-busy={earlier.loading}
            className={[
              'rounded-full border border-slate-300 px-3 py-1 text-xs hover:bg-slate-100 disabled:opacity-60',
              'dark:border-slate-600 dark:hover:bg-slate-800',
            ].join(' ')}
          >
            {earlier.loading ? 'Loading earlier messages…' : 'Show earlier messages'}
          </button>
          {earlier.error ? (
            <p role="alert" className="text-xs text-red-800 dark:text-red-300">
              {earlier.error}
            </p>
          ) : null}
        </div>
      ) : null}
      {groups.map((g, gi) => {
        const run = g.run;
        const isLast = run !== undefined && run === lastRun;
        const reqs = run ? batches.get(run.runId) : undefined;
        const pending = run !== undefined && run.runId === answerableRun;
        const answerable = pending && Boolean(approvals);
        const runDone = run?.status !== 'running';
        return (
          <div
            key={run?.runId ?? `orphans-${gi}`}
            className="flex flex-col gap-3"
            data-run-id={run?.runId}
            data-run-status={run?.status}
          >
            {g.messages.map((m) => {
              if (m.role === 'user') {
                return m.id === editableId ? (
                  <EditableUserMessage
                    key={m.id}
                    id={m.id}
                    content={m.content}
                    onEdit={revise?.onEdit}
                    parts={m.parts}
                    projectId={projectId}
                  />
                ) : (
                  <UserBubble key={m.id} id={m.id} content={m.content} parts={m.parts} projectId={projectId} />
                );
              }
              if (m.role === 'tool') {
                // Results show inside their tool card; only an orphan result gets its own card.
                if (toolCallIds.has(m.toolCallId)) return null;
                return (
                  <ToolCallCard
                    key={m.id}
                    call={{ id: m.toolCallId, name: 'tool', args: '', status: 'done', result: m.content }}
                  />
                );
              }
              const tools = toolStates.get(m.id) ?? NO_TOOL_STATES;
              return (
                <AssistantBubble
                  key={m.id}
                  message={m}
                  statuses={tools.statuses}
                  edited={tools.edited}
                  ranWith={tools.ranWith}
                  feedback={feedback?.[m.id]}
                  feedbackDraft={feedbackDrafts?.[m.id]}
                  onFeedbackDraft={onFeedbackDraft}
                  onFeedback={onFeedback}
                  canRate={runDone && !m.streaming && (Boolean(onFeedback) || Boolean(feedback?.[m.id]))}
                  onSuggestion={m.id === suggestionsOn ? onSuggestion : undefined}
                />
              );
            })}
            {reqs && run ? (
              <ApprovalBatch
                requests={reqs}
                states={batchStates(reqs, view, now, answerable, pending)}
                drafts={answerable && approvals ? approvals.drafts : {}}
                onDraftChange={answerable ? approvals?.onDraftChange : undefined}
                onSubmit={answerable ? approvals?.onSubmit : undefined}
                onAnswerAll={answerable ? approvals?.onAnswerAll : undefined}
                submitting={approvals?.submitting}
                error={answerable ? approvals?.error : null}
                now={now}
              />
            ) : null}
            {run && questionBatches.has(run.runId) ? (
              <QuestionBatch
                requests={questionBatches.get(run.runId)!}
                states={questionBatches
                  .get(run.runId)!
                  .map((q) => questionState(q, view, now, pending && Boolean(questions), pending))}
                drafts={pending && questions ? questions.drafts : {}}
                onDraftChange={pending ? questions?.onDraftChange : undefined}
                onAnswer={pending ? questions?.onAnswer : undefined}
                submitting={questions?.submitting}
                error={pending ? questions?.error : null}
                now={now}
              />
            ) : null}
            {run ? (
              <RunFooter
                run={run}
                isLast={isLast && !pendingUserMessage && !requestError}
                onRetry={onRetry}
                busy={busy}
              />
            ) : null}
            {run ? (
              <TurnTools
                run={run}
                versions={versions}
                usage={usageByTurn?.get(run.runId)}
                onRegenerate={run.runId === regenerateRunId ? revise?.onRegenerate : undefined}
                turnVersions={view.versions?.[run.runId]}
              />
            ) : null}
          </div>
        );
      })}
      {pendingUserMessage ? <UserBubble content={pendingUserMessage} pending /> : null}
      {busy && (lastRun?.status !== 'running' || pendingUserMessage) ? (
        <p className="text-xs text-slate-500 dark:text-slate-400" data-testid="assistant-waiting">
          <span aria-hidden="true">● </span>Waiting for the assistant…
        </p>
      ) : null}
      {requestError ? <ErrorRow error={requestError} onRetry={busy ? undefined : onRetry} /> : null}
    </div>
  );
}
