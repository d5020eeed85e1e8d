'use client';
/**
 * A reviewed conversation, read-only: the newest page the server rendered, and "Show earlier
 * messages" above it, which loads the page before the oldest shown run (`review.older`) and puts it
 * in front. Pages are joined into one view, so an approval asked for on one page and decided on the
 * next shows its decision, exactly as in one replay.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { ConversationView } from '../../schema';
import { trpcErrorMessage, useAgentApi } from '../agent-api';
import { ConversationMessages } from '../ConversationMessages';
import { ProductLinksProvider } from '../tool-ui/product-links';
import type { FeedbackValue } from '../FeedbackButtons';
import { concatViews } from '../view-pages';

/**
 * An older page followed by the newer one: the view of the runs of both, in order. The older page
 * ends before the first run of the newer, so nothing is dropped, not even a decision the page
 * carries for a call shown on another page.
 */
export const joinViews = concatViews;

export interface ReviewConversationProps {
  projectId: string;
  conversationId: string;
  view: ConversationView;
  /** The run to ask for the previous page with, or null when the whole conversation is shown. */
  olderBefore: string | null;
  feedback: Record<string, FeedbackValue | undefined>;
  now: number;
}

export function ReviewConversation(props: ReviewConversationProps) {
  const { projectId, conversationId, feedback, now } = props;
  const api = useAgentApi();
  const [view, setView] = useState(props.view);
  const [before, setBefore] = useState(props.olderBefore);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [loaded, setLoaded] = useState<string | null>(null);
  const startRef = useRef<HTMLParagraphElement>(null);

  const loadEarlier = useCallback(async () => {
    if (!before || loading) return;
    setLoading(true);
    setError(null);
    try {
      const page = await api.reviewOlder({ projectId, conversationId, before });
      setView((v) => joinViews(page.view, v));
      setBefore(page.olderBefore);
      const n = page.view.messages.length;
      const start = page.olderBefore ? '' : ': this is the start of the conversation';
      setLoaded(`${n} earlier message${n === 1 ? '' : 's'} shown${start}.`);
    } catch (err) {
      setError(trpcErrorMessage(err, 'Earlier messages could not be loaded.'));
    } finally {
      setLoading(false);
    }
  }, [api, before, conversationId, loading, projectId]);

  // The button goes away with the last page: the focus moves to the line that replaces it.
  const atStart = before === null && loaded !== null;
  useEffect(() => {
    if (atStart) startRef.current?.focus();
  }, [atStart]);

  return (
    <div data-testid="review-messages" data-runs={view.runs.length}>
      <div className="mb-3 flex flex-col items-center gap-1 text-sm">
        {before ? (
          <button
            type="button"
            data-testid="review-older"
            onClick={() => void loadEarlier()}
            disabled={loading}
            className={[
              'rounded-md border border-slate-300 px-3 py-1 hover:bg-slate-100 disabled:opacity-50',
              'dark:border-slate-600 dark:hover:bg-slate-800',
            ].join(' ')}
          >
            {loading ? 'Loading earlier messages…' : 'Show earlier messages'}
          </button>
        ) : loaded ? (
          <p
            ref={startRef}
            tabIndex={-1}
            className="text-slate-600 outline-none dark:text-slate-300"
            data-testid="review-start"
          >
            Start of the conversation
          </p>
        ) : null}
        <p role="status" className="sr-only">
          {loaded ?? ''}
        </p>
        {error ? (
          <p role="alert" className="text-red-800 dark:text-red-300" data-testid="review-older-error">
            {error}
          </p>
        ) : null}
      </div>
      <ProductLinksProvider projectId={projectId}>
        <ConversationMessages view={view} feedback={feedback} now={now} projectId={projectId} />
      </ProductLinksProvider>
    </div>
  );
}
