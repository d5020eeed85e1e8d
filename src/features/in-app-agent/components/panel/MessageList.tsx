'use client';
/**
 * The panel's conversation: the messages (ConversationMessages), the empty state with suggestions,
 * and the scrolling: it follows new content while the user is at the bottom, stops when they
 * scroll up (then "Jump to latest" appears), and keeps the message being read in place when
 * earlier messages load above it. Reads the store through selectors; the follow state lives in the
 * panel (`useFollowLatest`), which outlives this list while the history view shows.
 */
import { usePathname } from 'next/navigation';
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, type RefObject } from 'react';
import { ConversationMessages } from '../ConversationMessages';
import { EmptyState } from '../EmptyState';
import { suggestionsFor, type Suggestion } from '../page-context';
import { useAgentActions, useAgentBinding, useAgentSelector, useNow } from '../panel-context';
import { ProductLinksProvider } from '../tool-ui/product-links';
import {
  selectApprovalDrafts,
  selectBusy,
  selectCanRevise,
  selectCanSend,
  selectHasOlder,
  selectQuestionDrafts,
} from '../selectors';

/** The message the user was reading when earlier ones were asked for, and where it was. */
interface Anchor {
  id: string;
  top: number;
}

/** Whether the list follows new content, and what stays in place while earlier messages load. */
export interface FollowLatest {
  scrollRef: RefObject<HTMLDivElement | null>;
  /** The user is at the bottom: new content scrolls into view. */
  stick: { current: boolean };
  anchor: { current: Anchor | null };
}

/** The panel's follow state; a conversation that finished loading opens at its newest message. */
export function useFollowLatest(): FollowLatest {
  const scrollRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  const anchor = useRef<Anchor | null>(null);
  const hydrating = useAgentSelector((state) => state.hydrating);
  useEffect(() => {
    if (hydrating) return;
    stick.current = true;
    const el = scrollRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [hydrating]);
  return useMemo(() => ({ scrollRef, stick, anchor }), []);
}

export interface MessageListProps {
  follow: FollowLatest;
  /** The composer's field (a suggestion that needs more words goes there). */
  inputRef: RefObject<HTMLTextAreaElement | null>;
}

export const MessageList = memo(function MessageList({ follow, inputRef }: MessageListProps) {
  const { store } = useAgentBinding();
  const actions = useAgentActions();
  const pathname = usePathname();
  const now = useNow();
  const view = useAgentSelector((state) => state.view);
  const projectId = useAgentSelector((state) => state.projectId);
  const pendingUserMessage = useAgentSelector((state) => state.pendingUserMessage);
  const requestError = useAgentSelector((state) => state.requestError);
  const hydrating = useAgentSelector((state) => state.hydrating);
  const hydrateError = useAgentSelector((state) => state.hydrateError);
  const feedback = useAgentSelector((state) => state.feedback);
  const feedbackDrafts = useAgentSelector((state) => state.feedbackDrafts);
  const approvalDrafts = useAgentSelector(selectApprovalDrafts);
  const approvalError = useAgentSelector((state) => state.approvalError);
  const questionDrafts = useAgentSelector(selectQuestionDrafts);
  const busy = useAgentSelector(selectBusy);
  const canSend = useAgentSelector(selectCanSend);
  const canRetry = useAgentSelector(() => store.canRetry);
  const canRevise = useAgentSelector(selectCanRevise);
  const switchingVersion = useAgentSelector((state) => state.switchingVersion);
  const hasOlder = useAgentSelector(selectHasOlder);
  const loadingOlder = useAgentSelector((state) => state.loadingOlder);
  const olderError = useAgentSelector((state) => state.olderError);
  const { scrollRef, stick, anchor } = follow;
  const [showJump, setShowJump] = useState(false);
  // A follow-up the model suggested, sent with one click (the list follows it to the bottom).
  const sendSuggestion = useCallback(
    (text: string) => {
      stick.current = true;
      actions.send(text);
    },
    [actions, stick],
  );

  // Follow new content while the user is at the bottom; stop when they scroll up. Earlier messages
  // arriving above keep the message the user was reading where it was.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the list names what makes the content grow; the effect reads the DOM
  useLayoutEffect(() => {
    const el = scrollRef.current;
    if (!el) return;
    const pin = anchor.current;
    if (pin) {
      const target = Array.from(el.querySelectorAll<HTMLElement>('[data-message-id]')).find(
        (m) => m.dataset.messageId === pin.id,
      );
      if (target) el.scrollTop += target.getBoundingClientRect().top - el.getBoundingClientRect().top - pin.top;
      if (!loadingOlder) anchor.current = null;
      return;
    }
    if (stick.current) el.scrollTop = el.scrollHeight;
    else setShowJump(true);
  }, [view, pendingUserMessage, requestError, loadingOlder]);

  // Content also grows after React commits (markdown, code blocks, a card expanding): keep
  // following it while the user is at the bottom, so a reloaded conversation opens at its latest.
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-observe when the list gains messages (new children)
  useEffect(() => {
    const el = scrollRef.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    });
    for (const child of Array.from(el.children)) observer.observe(child);
    observer.observe(el);
    return () => observer.disconnect();
  }, [view.messages.length]);

  const onScroll = () => {
    const el = scrollRef.current;
    if (!el) return;
    const atBottom = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
    stick.current = atBottom;
    if (atBottom) setShowJump(false);
  };
  const jump = () => {
    const el = scrollRef.current;
    if (!el) return;
    stick.current = true;
    el.scrollTop = el.scrollHeight;
    setShowJump(false);
  };

  const approvals = useMemo(
    () => ({
      drafts: approvalDrafts,
      onDraftChange: actions.setApprovalDraft,
      onSubmit: actions.submitApprovals,
      onAnswerAll: actions.answerAll,
      submitting: busy,
      error: approvalError,
    }),
    [actions, approvalDrafts, busy, approvalError],
  );
  const questions = useMemo(
    () => ({
      drafts: questionDrafts,
      onDraftChange: actions.setQuestionDraft,
      onAnswer: actions.answerQuestion,
      submitting: busy,
      error: approvalError,
    }),
    [actions, questionDrafts, busy, approvalError],
  );
  const revise = useMemo(
    () => (canRevise ? { onEdit: actions.editLastMessage, onRegenerate: actions.regenerate } : undefined),
    [actions, canRevise],
  );
  const versions = useMemo(
    () => ({ onSelect: actions.selectVersion, disabled: busy || switchingVersion }),
    [actions, busy, switchingVersion],
  );
  const earlier = useMemo(() => {
    if (!hasOlder) return undefined;
    const onLoad = () => {
      const el = scrollRef.current;
      if (el) {
        // The first message still in sight is the one to keep in place.
        stick.current = false;
        const top = el.getBoundingClientRect().top;
        const shown = el.querySelectorAll<HTMLElement>('[data-testid="assistant-message"][data-message-id]');
        const first = Array.from(shown).find((m) => m.getBoundingClientRect().bottom > top);
        anchor.current = first ? { id: first.dataset.messageId!, top: first.getBoundingClientRect().top - top } : null;
      }
      actions.loadOlder();
    };
    return { onLoad, loading: loadingOlder, error: olderError };
  }, [actions, anchor, hasOlder, loadingOlder, olderError, scrollRef, stick]);

  const empty = view.messages.length === 0 && !pendingUserMessage && !hydrating && !requestError;
  const pick = (s: Suggestion) => {
    if (s.complete) {
      stick.current = true;
      actions.send(s.prompt);
    } else {
      actions.setDraft(s.prompt);
      window.requestAnimationFrame(() => {
        const el = inputRef.current;
        if (el) {
          el.focus();
          el.setSelectionRange(el.value.length, el.value.length);
        }
      });
    }
  };

  return (
    <div className="relative min-h-0 flex-1">
      <div
        ref={scrollRef}
        onScroll={onScroll}
        className="h-full overflow-y-auto px-3 py-3"
        data-testid="assistant-scroll"
      >
        {hydrating && view.messages.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-300">Loading the conversation…</p>
        ) : null}
        {hydrateError ? (
          <p role="alert" className="text-sm text-red-800 dark:text-red-300">
            {hydrateError}
          </p>
        ) : null}
        {empty ? (
          <EmptyState suggestions={suggestionsFor(pathname)} onPick={pick} disabled={!canSend} />
        ) : (
          <ProductLinksProvider projectId={projectId}>
            <ConversationMessages
              view={view}
              feedback={feedback}
              onFeedback={actions.submitFeedback}
              feedbackDrafts={feedbackDrafts}
              onFeedbackDraft={actions.setFeedbackDraft}
              approvals={approvals}
              questions={questions}
              now={now}
              pendingUserMessage={pendingUserMessage}
              requestError={requestError}
              onRetry={canRetry ? actions.retry : undefined}
              busy={busy}
              revise={revise}
              versions={versions}
              showUsage
              projectId={projectId}
              earlier={earlier}
              onSuggestion={canSend ? sendSuggestion : undefined}
            />
          </ProductLinksProvider>
        )}
      </div>
      {showJump ? (
        <button
          type="button"
          data-testid="assistant-jump"
          onClick={jump}
          className="absolute bottom-2 left-1/2 -translate-x-1/2 rounded-full border border-slate-300 bg-white px-3 py-1 text-xs shadow dark:border-slate-600 dark:bg-slate-900"
        >
          <span aria-hidden="true">↓ </span>Jump to latest
        </button>
      ) : null}
    </div>
  );
});
