/**
 * The review list (ADMIN/OWNER): every conversation of the project with its user, time, last run
 * outcome, feedback, approvals, tool calls and usage (tokens, cost). Prop-driven, no hooks: renders on the server.
 */
import Link from 'next/link';
import { FEEDBACK_REASON_LABELS, FEEDBACK_REASONS, feedbackReasonLabels, type FeedbackReason } from '../../schema';
import { ThumbDownIcon, ThumbUpIcon, TrashIcon } from '../icons';
import { DEFAULT_USAGE_DAYS, UsageCell, type UsageTotals } from './UsageSummary';

export type ReviewFilter = 'all' | 'negative' | 'failed' | 'approvals';

export interface ReviewRow {
  id: string;
  title: string;
  user: { id: string; name: string | null; email: string };
  updatedAt: Date | string;
  lastRunStatus: string | null;
  negativeFeedback: number;
  positiveFeedback: number;
  approvals: number;
  toolCalls: number;
  /** Every reason given with the conversation's thumbs down. */
  reasons?: readonly FeedbackReason[];
  /** The user deleted it from their history (the review keeps it). */
  deleted?: boolean;
  /** Tokens and cost of all its answers. */
  usage?: UsageTotals;
}

export const REVIEW_FILTERS: Array<{ value: ReviewFilter; label: string }> = [
  { value: 'all', label: 'All' },
  { value: 'negative', label: 'Negative feedback' },
  { value: 'failed', label: 'Failed runs' },
  { value: 'approvals', label: 'With approvals' },
];

const OUTCOME: Record<string, { icon: string; text: string }> = {
  COMPLETED: { icon: '✓', text: 'Completed' },
  FAILED: { icon: '✕', text: 'Failed' },
  ABORTED: { icon: '■', text: 'Stopped' },
  INTERRUPTED: { icon: '?', text: 'Waiting for approval' },
  RUNNING: { icon: '…', text: 'Running' },
};

export function RunOutcome({ status }: { status: string | null }) {
  if (!status) return <span className="text-slate-500 dark:text-slate-400">No runs</span>;
  const o = OUTCOME[status] ?? { icon: '•', text: status };
  return (
    <span data-outcome={status}>
      <span aria-hidden="true">{o.icon} </span>
      {o.text}
    </span>
  );
}

function fmt(d: Date | string): { text: string; iso: string } {
  const date = typeof d === 'string' ? new Date(d) : d;
  return {
    text: `${date.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })} UTC`,
    iso: date.toISOString(),
  };
}

/** The review list's URL for a filter, a reason, a page and a usage period (defaults left out). */
export function reviewHref(
  basePath: string,
  o: { filter?: ReviewFilter; reason?: FeedbackReason | null; cursor?: string; days?: number },
): string {
  const q = new URLSearchParams();
  if (o.filter && o.filter !== 'all') q.set('filter', o.filter);
  if (o.reason) q.set('reason', o.reason);
  if (o.cursor) q.set('cursor', o.cursor);
  if (o.days && o.days !== DEFAULT_USAGE_DAYS) q.set('days', String(o.days));
  return q.size ? `${basePath}?${q}` : basePath;
}

const CHIP = 'rounded-full border px-3 py-1 text-sm';
const CHIP_ACTIVE = 'border-blue-700 bg-blue-700 text-white';
const CHIP_IDLE = 'border-slate-300 hover:bg-slate-100 dark:border-slate-600 dark:hover:bg-slate-800';

function chipClass(active: boolean): string {
  return `${CHIP} ${active ? CHIP_ACTIVE : CHIP_IDLE}`;
}

export function ReviewFilters(props: {
  basePath: string;
  current: ReviewFilter;
  reason?: FeedbackReason | null;
  /** The usage period shown, kept when the filters change. */
  days?: number;
}) {
  const { basePath, current, reason = null, days } = props;
  return (
    <div className="space-y-2">
      <nav aria-label="Filter conversations" className="flex flex-wrap gap-2">
        {REVIEW_FILTERS.map((f) => (
          <Link
            key={f.value}
            href={reviewHref(basePath, { filter: f.value, reason, days })}
            aria-current={current === f.value ? 'page' : undefined}
            data-testid={`review-filter-${f.value}`}
            className={chipClass(current === f.value)}
          >
            {f.label}
          </Link>
        ))}
      </nav>
      <nav aria-label="Filter by thumbs-down reason" className="flex flex-wrap items-center gap-2">
        <span className="text-sm text-slate-600 dark:text-slate-300">Reason:</span>
        {[null, ...FEEDBACK_REASONS].map((r) => (
          <Link
            key={r ?? 'any'}
            href={reviewHref(basePath, { filter: current, reason: r, days })}
            aria-current={reason === r ? 'page' : undefined}
            data-testid={`review-reason-${r ?? 'any'}`}
            className={chipClass(reason === r)}
          >
            {r ? FEEDBACK_REASON_LABELS[r] : 'Any'}
          </Link>
        ))}
      </nav>
    </div>
  );
}

const COLUMNS = ['Conversation', 'User', 'Updated', 'Last run', 'Feedback', 'Approvals', 'Tool calls', 'Usage'];
/** The columns of counts, aligned right. */
const NUMERIC = new Set(['Approvals', 'Tool calls', 'Usage']);

export function ReviewTable({ rows, basePath }: { rows: ReviewRow[]; basePath: string }) {
  if (rows.length === 0) return <p className="text-sm text-slate-600 dark:text-slate-300">No conversations match.</p>;
  return (
    <div className="relative overflow-x-auto">
      <table className="min-w-full border-collapse text-sm" data-testid="review-table">
        <thead>
          <tr className="border-b border-slate-300 text-left dark:border-slate-700">
            {COLUMNS.map((label) => (
              <th key={label} scope="col" className={NUMERIC.has(label) ? 'py-2 pr-3 text-right' : 'py-2 pr-3'}>
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const t = fmt(r.updatedAt);
            return (
              <tr
                key={r.id}
                className="border-b border-slate-200 align-top dark:border-slate-800"
                data-testid="review-row"
                data-conversation-id={r.id}
                data-deleted={r.deleted === true ? 'true' : undefined}
              >
                <td className="py-2 pr-3">
                  <Link
                    href={`${basePath}/${encodeURIComponent(r.id)}`}
                    className="font-medium text-blue-700 underline dark:text-blue-300"
                  >
                    {r.title || 'Untitled conversation'}
                  </Link>
                  {r.deleted === true ? (
                    <span
                      data-testid="review-deleted"
                      className="ml-2 inline-block rounded border border-slate-400 px-1.5 text-xs text-slate-700 dark:border-slate-500 dark:text-slate-300"
                    >
                      <TrashIcon /> deleted by user
                    </span>
                  ) : null}
                </td>
                <td className="py-2 pr-3">
                  {r.user.name || r.user.email}
                  <span className="block text-xs text-slate-500 dark:text-slate-400">{r.user.email}</span>
                </td>
                <td className="py-2 pr-3 whitespace-nowrap">
                  <time dateTime={t.iso}>{t.text}</time>
                </td>
                <td className="py-2 pr-3">
                  <RunOutcome status={r.lastRunStatus} />
                </td>
                <td
                  className="py-2 pr-3 whitespace-nowrap"
                  data-testid="review-feedback"
                  data-negative={r.negativeFeedback}
                  data-positive={r.positiveFeedback}
                >
                  <span title="positive">
                    <ThumbUpIcon /> {r.positiveFeedback}
                    <span className="sr-only"> positive</span>
                  </span>{' '}
                  <span title="negative" className={r.negativeFeedback ? 'font-semibold' : ''}>
                    <ThumbDownIcon /> {r.negativeFeedback}
                    <span className="sr-only"> negative</span>
                  </span>
                  {r.reasons?.length ? (
                    <span
                      className="block text-xs text-slate-600 dark:text-slate-300"
                      data-testid="review-reasons"
                      data-reasons={r.reasons.join(' ')}
                    >
                      {feedbackReasonLabels(r.reasons)}
                    </span>
                  ) : null}
                </td>
                <td className="py-2 pr-3 text-right">{r.approvals}</td>
                <td className="py-2 pr-3 text-right">{r.toolCalls}</td>
                <UsageCell usage={r.usage ?? { inputTokens: 0, outputTokens: 0, costUsd: null, estimated: false }} />
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
