'use client';
/**
 * Renders a folded conversation view: messages, tool cards, approval cards, run outcomes. Purely
 * prop-driven, so the live panel, a reloaded conversation and the read-only review page all show
 * the same thing from the same `ConversationView`.
 */
import { memo, type ReactNode } from 'react';
import type { ConversationView, FeedbackReason, RunState, ViewMessage, ViewToolCall } from '../schema';
import { ApprovalBatch } from './ApprovalCard';
import { cardState, isExpired, readApprovalInterrupt, type ApprovalRequest, type CardState, type DraftAnswer } from './approval';
import { describeError, type PanelError } from './errors';
import { FeedbackButtons, type FeedbackValue } from './FeedbackButtons';
import { Markdown } from './Markdown';
import { ToolCallCard, type ToolCardStatus } from './ToolCallCard';

type AssistantMessage = Extract<ViewMessage, { role: 'assistant' }>;

export interface ApprovalControls {
  drafts: Record<string, DraftAnswer | undefined>;
  onDraftChange: (interruptId: string, draft: DraftAnswer) => void;
  onSubmit: () => void;
  /** Approve all / Reject all of the open batch. */
  onAnswerAll?: (decision: 'approve' | 'reject', note?: string) => void;
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
  now: number;
  /** A user message sent but not yet echoed by the server. */
  pendingUserMessage?: string | null;
  /** An error of the request itself (before any event arrived). */
  requestError?: PanelError | null;
  onRetry?: () => void;
  /** True while a request is in flight (hides Retry, shows the typing indicator). */
  busy?: boolean;
}

const UserBubble = memo(function UserBubble({ id, content, pending }: { id?: string; content: string; pending?: boolean }) {
  return (
    <div
      data-testid="assistant-message"
      data-role="user"
      data-message-id={id}
      data-pending={pending ? 'true' : undefined}
      className="ml-8 self-end rounded-lg bg-blue-50 px-3 py-2 text-sm whitespace-pre-wrap break-words text-slate-900 dark:bg-blue-950 dark:text-slate-100"
    >
      <span className="sr-only">You said: </span>
      {content}
    </div>
  );
});

function toolStatus(call: ViewToolCall, ctx: ToolStatusContext): ToolCardStatus {
  const decision = ctx.view.decisions[call.id];
  if (decision) {
    if (decision.decision !== 'approved') return decision.decision;
    return call.result !== undefined ? call.status : 'approved';
  }
  if (call.result !== undefined) return call.status;
  const req = ctx.interruptsByCall.get(call.id);
  if (req) {
    if (req.expiresAt && Date.parse(req.expiresAt) <= ctx.now) return 'expired';
    if (ctx.openCalls.has(call.id)) return 'awaiting-approval';
  }
  return call.status;
}

/**
 * A batch is answered as a unit: once one of its requests expired, none can be answered.
 * `pending`: the batch belongs to the last, interrupted run (read-only, it shows as waiting).
 */
function batchStates(reqs: ApprovalRequest[], view: ConversationView, now: number, answerable: boolean, pending = answerable): CardState[] {
  const expired = reqs.some((r) => !view.decisions[r.toolCallId] && isExpired(r.expiresAt, now));
  return reqs.map((r) => {
    const s = cardState(r, view.decisions, now, answerable, pending);
    return expired && (s.kind === 'open' || s.kind === 'waiting') ? { kind: 'expired' } : s;
  });
}

interface ToolStatusContext {
  view: ConversationView;
  interruptsByCall: Map<string, ApprovalRequest>;
  openCalls: Set<string>;
  now: number;
}

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
}: {
  message: AssistantMessage;
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
          <Markdown text={message.content} />
        </>
      ) : null}
      {message.streaming && !hasText && message.toolCalls.length === 0 ? (
        <span className="text-sm text-slate-500" aria-hidden="true">
          …
        </span>
      ) : null}
      {message.toolCalls.map((tc, i) => (
        <ToolCallCard key={tc.id} call={tc} status={statuses[i]} editedOnApproval={edited?.[i]} ranWith={ranWith?.[i]} />
      ))}
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
    const err = describeError(run.error?.code, run.error?.message);
    return (
      <div
        data-testid="assistant-error"
        data-code={run.error?.code ?? ''}
        className="flex flex-wrap items-center gap-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
      >
        <span aria-hidden="true">✕</span>
        <span className="flex-1">{err.message}</span>
        {isLast && onRetry && err.retryable && !busy ? (
          <button type="button" data-testid="assistant-retry" onClick={onRetry} className="rounded border border-red-700 px-2 py-0.5 font-medium">
            Retry
          </button>
        ) : null}
      </div>
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

export function ConversationMessages({
  view,
  feedback,
  onFeedback,
  feedbackDrafts,
  onFeedbackDraft,
  approvals,
  now,
  pendingUserMessage,
  requestError,
  onRetry,
  busy,
}: ConversationMessagesProps) {
  const lastRun = view.runs[view.runs.length - 1];
  const interruptsByCall = new Map<string, ApprovalRequest>();
  const batches = new Map<string, ApprovalRequest[]>();
  for (const run of view.runs) {
    const reqs = run.interrupts.map(readApprovalInterrupt).filter((r): r is ApprovalRequest => r !== null);
    if (reqs.length) batches.set(run.runId, reqs);
    for (const r of reqs) interruptsByCall.set(r.toolCallId, r);
  }
  // While a resume is being sent the cards stay answerable-looking but disabled (`submitting`).
  const answerableRun = lastRun && lastRun.status === 'interrupted' ? lastRun.runId : null;
  const openCalls = new Set<string>();
  if (answerableRun) {
    const reqs = batches.get(answerableRun) ?? [];
    const states = batchStates(reqs, view, now, true);
    reqs.forEach((r, i) => {
      if (states[i]?.kind === 'open') openCalls.add(r.toolCallId);
    });
  }
  const ctx: ToolStatusContext = { view, interruptsByCall, openCalls, now };

  // Group messages by run, in order; messages of unknown runs go first.
  const known = new Set(view.runs.map((r) => r.runId));
  const groups: Array<{ run?: RunState; messages: ViewMessage[] }> = [];
  const orphans = view.messages.filter((m) => !known.has(m.runId));
  if (orphans.length) groups.push({ messages: orphans });
  const byRun = new Map<string, ViewMessage[]>();
  for (const m of view.messages) if (known.has(m.runId)) (byRun.get(m.runId) ?? byRun.set(m.runId, []).get(m.runId)!).push(m);
  for (const run of view.runs) groups.push({ run, messages: byRun.get(run.runId) ?? [] });

  const toolCallIds = new Set<string>();
  for (const m of view.messages) if (m.role === 'assistant') for (const tc of m.toolCalls) toolCallIds.add(tc.id);

  return (
    <div className="flex flex-col gap-3" data-testid="conversation-messages">
      {groups.map((g, gi) => {
        const run = g.run;
        const isLast = run !== undefined && run === lastRun;
        const reqs = run ? batches.get(run.runId) : undefined;
        const pending = run !== undefined && run.runId === answerableRun;
        const answerable = pending && Boolean(approvals);
        const runDone = run?.status !== 'running';
        return (
          <div key={run?.runId ?? `orphans-${gi}`} className="flex flex-col gap-3" data-run-id={run?.runId} data-run-status={run?.status}>
            {g.messages.map((m) => {
              if (m.role === 'user') return <UserBubble key={m.id} id={m.id} content={m.content} />;
              if (m.role === 'tool') {
                // Results show inside their tool card; only an orphan result gets its own card.
                if (toolCallIds.has(m.toolCallId)) return null;
                return (
                  <ToolCallCard key={m.id} call={{ id: m.toolCallId, name: 'tool', args: '', status: 'done', result: m.content }} />
                );
              }
              return (
                <AssistantBubble
                  key={m.id}
                  message={m}
                  statuses={m.toolCalls.map((tc) => toolStatus(tc, ctx))}
                  edited={m.toolCalls.map((tc) => {
                    const d = view.decisions[tc.id];
                    return d?.decision === 'approved' && d.edited === true;
                  })}
                  ranWith={m.toolCalls.map((tc) => {
                    const d = view.decisions[tc.id];
                    return d?.decision === 'approved' ? d.args : undefined;
                  })}
                  feedback={feedback?.[m.id]}
                  feedbackDraft={feedbackDrafts?.[m.id]}
                  onFeedbackDraft={onFeedbackDraft}
                  onFeedback={onFeedback}
                  canRate={runDone && !m.streaming && (Boolean(onFeedback) || Boolean(feedback?.[m.id]))}
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
            {run ? <RunFooter run={run} isLast={isLast && !pendingUserMessage && !requestError} onRetry={onRetry} busy={busy} /> : null}
          </div>
        );
      })}
      {pendingUserMessage ? <UserBubble content={pendingUserMessage} pending /> : null}
      {busy && (lastRun?.status !== 'running' || pendingUserMessage) ? (
        <p className="text-xs text-slate-500 dark:text-slate-400" data-testid="assistant-waiting">
          <span aria-hidden="true">● </span>Waiting for the assistant…
        </p>
      ) : null}
      {requestError ? (
        <div
          data-testid="assistant-error"
          data-code={requestError.code ?? ''}
          className="flex flex-wrap items-center gap-2 rounded-md border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-200"
        >
          <span aria-hidden="true">✕</span>
          <span className="flex-1">{requestError.message}</span>
          {onRetry && requestError.retryable && !busy ? (
            <button type="button" data-testid="assistant-retry" onClick={onRetry} className="rounded border border-red-700 px-2 py-0.5 font-medium">
              Retry
            </button>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
