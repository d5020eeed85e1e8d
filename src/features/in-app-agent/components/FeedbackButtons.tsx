'use client';
import { useEffect, useId, useState } from 'react';
import { LIMITS } from '../constants';
import { FEEDBACK_REASON_LABELS, FEEDBACK_REASONS, feedbackReasonLabels, type FeedbackReason } from '../schema';
import { ThumbDownIcon, ThumbUpIcon } from './icons';

export interface FeedbackValue {
  value: 1 | -1;
  comment: string | null;
  /** Why a thumbs down (none for a thumbs up). */
  reasons?: readonly FeedbackReason[];
}

export interface FeedbackButtonsProps {
  current?: FeedbackValue;
  /** Persists the rating; rejects with a message on failure. */
  onSubmit?: (value: 1 | -1, comment?: string, reasons?: FeedbackReason[]) => Promise<void>;
  /**
   * The unsaved comment, kept by the controller so closing the panel or a reload does not lose
   * it; `null`/absent means the comment form is closed. Without `onDraftChange` the form keeps its
   * own state.
   */
  draft?: string | null;
  onDraftChange?: (text: string | null) => void;
}

/** A control of the rating: the thumbs, the form's Send and its Cancel. */
export type FeedbackControl =
  | { kind: 'up' }
  | { kind: 'down' }
  | { kind: 'send'; comment: string; reasons: readonly FeedbackReason[] }
  | { kind: 'cancel' };

/**
 * What a control does: the rating it saves (none: nothing is sent, the saved rating stays as it
 * was) and whether the thumbs-down form is open afterwards. A thumbs up is saved at once; a thumbs
 * down only opens (or closes) the form, which saves it when sent, with its reasons and comment
 * (both optional); cancelling saves nothing.
 */
export function feedbackStep(
  control: FeedbackControl,
  formOpen: boolean,
): { save?: { value: 1 | -1; comment?: string; reasons?: FeedbackReason[] }; formOpen: boolean } {
  switch (control.kind) {
    case 'up':
      return { save: { value: 1 }, formOpen: false };
    case 'down':
      return { formOpen: !formOpen };
    case 'send': {
      const comment = control.comment.trim() || undefined;
      const reasons = control.reasons.length ? [...control.reasons] : undefined;
      return { save: { value: -1, comment, reasons }, formOpen: true };
    }
    case 'cancel':
      return { formOpen: false };
  }
}

/**
 * Thumbs up/down on a completed assistant message; a thumbs down can carry reasons (any of the
 * module's FEEDBACK_REASONS) and a comment, and is saved when its form is sent.
 */
export function FeedbackButtons({ current, onSubmit, draft, onDraftChange }: FeedbackButtonsProps) {
  const id = useId();
  const controlled = onDraftChange !== undefined;
  const [localOpen, setLocalOpen] = useState(false);
  const [localComment, setLocalComment] = useState(current?.comment ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState(false);
  // The reasons being chosen; they start from the saved ones and are sent with the thumbs down.
  const savedReasons = current?.value === -1 ? (current.reasons ?? []) : [];
  const savedReasonsKey = savedReasons.join(' ');
  const [reasons, setReasons] = useState<FeedbackReason[]>([...savedReasons]);

  useEffect(() => {
    if (!controlled) setLocalComment(current?.comment ?? '');
  }, [controlled, current?.comment]);

  useEffect(() => {
    // A rating saved elsewhere (another tab, a reload) replaces what was being chosen.
    setReasons(savedReasonsKey ? (savedReasonsKey.split(' ') as FeedbackReason[]) : []);
  }, [savedReasonsKey]);

  const toggleReason = (reason: FeedbackReason, on: boolean) =>
    setReasons((prev) => FEEDBACK_REASONS.filter((r) => (r === reason ? on : prev.includes(r))));

  const commentOpen = controlled ? draft !== null && draft !== undefined : localOpen;
  const comment = controlled ? (draft ?? '') : localComment;
  const setComment = (text: string) => (controlled ? onDraftChange(text) : setLocalComment(text));
  const openComment = () => (controlled ? onDraftChange(draft ?? current?.comment ?? '') : setLocalOpen(true));
  const closeComment = () => (controlled ? onDraftChange(null) : setLocalOpen(false));

  const readOnly = !onSubmit;

  async function submit(save: { value: 1 | -1; comment?: string; reasons?: FeedbackReason[] }): Promise<boolean> {
    if (!onSubmit) return false;
    setBusy(true);
    setError(null);
    setSaved(false);
    try {
      await onSubmit(save.value, save.comment, save.reasons);
      setSaved(true);
      return true;
    } catch (e) {
      setError(e instanceof Error ? e.message : 'Could not save your feedback.');
      return false;
    } finally {
      setBusy(false);
    }
  }

  /** Applies a control: the form opens or closes, and a rating is saved only when the step says so. */
  function use(control: FeedbackControl): void {
    const step = feedbackStep(control, commentOpen);
    if (!step.formOpen && commentOpen) {
      closeComment();
      // What was ticked and not sent is dropped: the form reopens on the saved reasons.
      setReasons([...savedReasons]);
    } else if (step.formOpen && !commentOpen) {
      openComment();
    }
    if (!step.save) return;
    void submit(step.save).then((ok) => {
      if (ok && control.kind === 'send') closeComment();
    });
  }

  const btn = (pressed: boolean) =>
    `rounded px-1.5 py-0.5 text-sm border ${
      pressed
        ? 'border-slate-700 bg-slate-700 text-white dark:border-slate-200 dark:bg-slate-200 dark:text-slate-900'
        : 'border-transparent text-slate-500 hover:border-slate-300 hover:text-slate-800 dark:text-slate-400 dark:hover:text-slate-100'
    } disabled:opacity-50`;

  if (readOnly && !current) return null;

  return (
    <div className="mt-1 text-xs" data-testid="feedback" data-value={current?.value ?? ''}>
      <div className="flex items-center gap-1" role="group" aria-label="Rate this answer">
        <button
          type="button"
          data-testid="feedback-up"
          aria-pressed={current?.value === 1}
          aria-label="Good answer"
          title="Good answer"
          disabled={busy || readOnly}
          onClick={() => use({ kind: 'up' })}
          className={btn(current?.value === 1)}
        >
          <ThumbUpIcon />
        </button>
        <button
          type="button"
          data-testid="feedback-down"
          aria-pressed={current?.value === -1}
          aria-label="Bad answer"
          title="Bad answer"
          aria-expanded={readOnly ? undefined : commentOpen}
          aria-controls={readOnly ? undefined : `${id}-comment`}
          disabled={busy || readOnly}
          onClick={() => use({ kind: 'down' })}
          className={btn(current?.value === -1)}
        >
          <ThumbDownIcon />
        </button>
        {current ? (
          <span className="text-slate-500 dark:text-slate-400">
            {current.value === 1 ? 'Rated helpful' : 'Rated not helpful'}
          </span>
        ) : null}
        {saved && !error ? (
          <span className="sr-only" role="status">
            Feedback saved
          </span>
        ) : null}
      </div>
      {savedReasons.length > 0 && (readOnly || !commentOpen) ? (
        <p
          className="mt-1 text-slate-600 dark:text-slate-300"
          data-testid="feedback-reasons"
          data-reasons={savedReasonsKey}
        >
          Reasons: {feedbackReasonLabels(savedReasons)}
          {!readOnly && !current?.comment ? (
            <>
              {' '}
              <button type="button" className="underline" onClick={openComment}>
                Edit
              </button>
            </>
          ) : null}
        </p>
      ) : null}
      {readOnly && current?.comment ? (
        <p
          className="mt-1 whitespace-pre-wrap break-words text-slate-600 dark:text-slate-300"
          data-testid="feedback-comment-text"
        >
          Comment: {current.comment}
        </p>
      ) : null}
      {!readOnly && commentOpen ? (
        <form
          id={`${id}-comment`}
          className="mt-1 flex flex-col gap-1"
          onSubmit={(e) => {
            e.preventDefault();
            use({ kind: 'send', comment, reasons });
          }}
        >
          <fieldset className="flex flex-wrap gap-x-3 gap-y-1" data-testid="feedback-reason-choices">
            <legend className="mb-0.5">What went wrong? (choose any)</legend>
            {FEEDBACK_REASONS.map((reason) => (
              <label key={reason} className="inline-flex items-center gap-1">
                <input
                  type="checkbox"
                  data-testid={`feedback-reason-${reason}`}
                  checked={reasons.includes(reason)}
                  onChange={(e) => toggleReason(reason, e.currentTarget.checked)}
                />
                {FEEDBACK_REASON_LABELS[reason]}
              </label>
            ))}
          </fieldset>
          <label htmlFor={`${id}-text`}>Comment (optional)</label>
          <textarea
            id={`${id}-text`}
            data-testid="feedback-comment"
            value={comment}
            maxLength={LIMITS.maxFeedbackChars}
            onChange={(e) => setComment(e.target.value)}
            rows={2}
            className="w-full rounded border border-slate-300 bg-white p-1.5 dark:border-slate-600 dark:bg-slate-950"
          />
          <div className="flex gap-2">
            <button
              type="submit"
              data-testid="feedback-comment-submit"
              disabled={busy}
              className="rounded bg-slate-800 px-2 py-0.5 text-white disabled:opacity-50 dark:bg-slate-200 dark:text-slate-900"
            >
              Send feedback
            </button>
            <button
              type="button"
              data-testid="feedback-cancel"
              onClick={() => use({ kind: 'cancel' })}
              className="underline"
            >
              Cancel
            </button>
          </div>
        </form>
      ) : !readOnly && current?.value === -1 && current.comment ? (
        <p className="mt-1 whitespace-pre-wrap break-words text-slate-600 dark:text-slate-300">
          Your comment: {current.comment}{' '}
          <button type="button" className="underline" onClick={openComment}>
            Edit
          </button>
        </p>
      ) : null}
      {error ? (
        <p role="alert" className="mt-1 text-red-800 dark:text-red-300">
          {error}
        </p>
      ) : null}
    </div>
  );
}
