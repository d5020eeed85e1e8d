'use client';
/**
 * The review page's feedback export: a plain GET form to the export route, so the browser streams
 * the JSONL file straight to disk (nothing is held in the page), and it works without JavaScript.
 * With JavaScript, a date range the wrong way round is caught before the request.
 */
import { useState, type FormEvent } from 'react';
import { FEEDBACK_REASON_LABELS, FEEDBACK_REASONS } from '../../schema';

/** Where the host mounts the export route (`createFeedbackExportHandler`). */
function feedbackExportPath(projectId: string): string {
  return `/api/projects/${encodeURIComponent(projectId)}/in-app-agent/feedback-export`;
}

const field = [
  'rounded border border-slate-300 bg-white px-2 py-1 text-sm text-slate-900',
  'dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100',
].join(' ');
const button = [
  'rounded-md border border-slate-400 px-3 py-1 text-sm font-medium hover:bg-slate-100',
  'dark:border-slate-500 dark:hover:bg-slate-800',
].join(' ');

export function FeedbackExportForm({ projectId }: { projectId: string }) {
  const [error, setError] = useState<string | null>(null);

  function onSubmit(e: FormEvent<HTMLFormElement>) {
    const f = new FormData(e.currentTarget);
    const from = String(f.get('from') ?? '');
    const to = String(f.get('to') ?? '');
    // ISO dates compare as text.
    if (from && to && from > to) {
      e.preventDefault();
      setError('The start date is after the end date.');
      return;
    }
    setError(null);
  }

  return (
    <form
      method="get"
      action={feedbackExportPath(projectId)}
      onSubmit={onSubmit}
      aria-label="Export rated answers"
      aria-describedby="feedback-export-help"
      className="flex flex-wrap items-end gap-3 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="feedback-export"
    >
      <p id="feedback-export-help" className="basis-full text-sm text-slate-600 dark:text-slate-300">
        Export rated answers as JSONL, one line per rating with the conversation up to the rated answer (dates are UTC
        days of the latest rating; leave empty for all).
      </p>
      <label className="flex flex-col gap-1 text-sm">
        <span>From</span>
        <input type="date" name="from" className={field} data-testid="feedback-export-from" />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        <span>To</span>
        <input type="date" name="to" className={field} data-testid="feedback-export-to" />
      </label>
      <label className="flex flex-col gap-1 text-sm">
        <span>Rating</span>
        <select name="rating" defaultValue="" className={field}>
          <option value="">Any rating</option>
          <option value="-1">Thumbs down</option>
          <option value="1">Thumbs up</option>
        </select>
      </label>
      <label className="flex flex-col gap-1 text-sm">
        <span>Reason</span>
        <select name="reason" defaultValue="" className={field} data-testid="feedback-export-reason">
          <option value="">Any reason</option>
          {FEEDBACK_REASONS.map((r) => (
            <option key={r} value={r}>
              {FEEDBACK_REASON_LABELS[r]}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" data-testid="feedback-export-submit" className={button}>
        Download JSONL
      </button>
      {error ? (
        <p role="alert" className="basis-full text-sm text-red-800 dark:text-red-300">
          {error}
        </p>
      ) : null}
    </form>
  );
}
