'use client';
/**
 * The assistant side panel: docked right and resizable on desktop, full screen on small screens.
 * Connected to the controller (InAppAgentProvider); renders the prop-driven components.
 */
import { usePathname } from 'next/navigation';
import {
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type KeyboardEvent as ReactKeyboardEvent,
  type RefObject,
} from 'react';
import { LIMITS } from '../constants';
import { ConversationList } from './ConversationList';
import { ConversationMessages } from './ConversationMessages';
import { EmptyState } from './EmptyState';
import type { ConnectionPhase } from './agent-store';
import { isTextField, useInAppAgent, type Announcement } from './InAppAgentProvider';
import { QueuedMessages } from './QueuedMessages';
import { UndoToast } from './UndoToast';
import { ModelNotice } from './ModelNotice';
import { suggestionsFor, type Suggestion } from './page-context';
import { PANEL_WIDTH } from './storage';

const FOCUSABLE = 'a[href], button, input, select, textarea, summary, [tabindex]:not([tabindex="-1"])';

function useDesktop(): boolean {
  const [desktop, setDesktop] = useState(false);
  useEffect(() => {
    const mq = window.matchMedia('(min-width: 768px)');
    const on = () => setDesktop(mq.matches);
    on();
    mq.addEventListener('change', on);
    return () => mq.removeEventListener('change', on);
  }, []);
  return desktop;
}

/** Keeps the fixed panel aligned with its in-flow placeholder (below the header, sticky on scroll). */
function useDockTop(anchor: RefObject<HTMLElement | null>, active: boolean): number {
  const [top, setTop] = useState(0);
  useEffect(() => {
    if (!active) return;
    let frame: number | null = null;
    const measure = () => {
      frame = null;
      const el = anchor.current;
      if (!el) return;
      setTop(Math.max(0, Math.round(el.getBoundingClientRect().top)));
    };
    const schedule = () => {
      if (frame === null) frame = window.requestAnimationFrame(measure);
    };
    measure();
    window.addEventListener('scroll', schedule, { passive: true });
    window.addEventListener('resize', schedule);
    const ro = new ResizeObserver(schedule);
    if (anchor.current?.parentElement) ro.observe(anchor.current.parentElement);
    return () => {
      window.removeEventListener('scroll', schedule);
      window.removeEventListener('resize', schedule);
      ro.disconnect();
      if (frame !== null) window.cancelAnimationFrame(frame);
    };
  }, [anchor, active]);
  return top;
}

/** A text field the user has typed into: Escape there leaves the field instead of closing the panel. */
function fieldWithContent(el: EventTarget | null): HTMLElement | null {
  if (!(el instanceof Element) || !isTextField(el)) return null;
  const text = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement ? el.value : (el.textContent ?? '');
  return text.trim() ? el : null;
}

/** Polite live region: each new entry (answer, approval request, failure) is read once. */
function Announcer({ items }: { items: Announcement[] }) {
  return (
    <div
      aria-live="polite"
      aria-atomic="false"
      aria-relevant="additions"
      className="sr-only"
      data-testid="assistant-announcer"
    >
      {items.map((a) => (
        <p key={a.id} data-testid="assistant-announcement">
          {a.text}
        </p>
      ))}
    </div>
  );
}

function ResizeHandle({ width, setWidth }: { width: number; setWidth: (w: number) => void }) {
  const drag = useRef<{ x: number; w: number } | null>(null);
  return (
    <div
      role="separator"
      aria-orientation="vertical"
      aria-label="Resize the assistant panel"
      aria-valuenow={width}
      aria-valuemin={PANEL_WIDTH.min}
      aria-valuemax={PANEL_WIDTH.max}
      tabIndex={0}
      data-testid="assistant-resize"
      title="Drag, or use the arrow keys, to resize"
      onPointerDown={(e) => {
        e.preventDefault();
        (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
        drag.current = { x: e.clientX, w: width };
      }}
      onPointerMove={(e) => {
        if (!drag.current) return;
        setWidth(drag.current.w + (drag.current.x - e.clientX));
      }}
      onPointerUp={(e) => {
        drag.current = null;
        (e.currentTarget as HTMLElement).releasePointerCapture(e.pointerId);
      }}
      onKeyDown={(e) => {
        const big = e.shiftKey ? 4 : 1;
        if (e.key === 'ArrowLeft') setWidth(width + PANEL_WIDTH.step * big);
        else if (e.key === 'ArrowRight') setWidth(width - PANEL_WIDTH.step * big);
        else if (e.key === 'Home') setWidth(PANEL_WIDTH.min);
        else if (e.key === 'End') setWidth(PANEL_WIDTH.max);
        else return;
        e.preventDefault();
      }}
      className="absolute inset-y-0 left-0 z-10 w-1.5 -translate-x-1/2 cursor-col-resize bg-transparent hover:bg-blue-400/50 focus-visible:bg-blue-500/60"
    />
  );
}

/** What the status line under the input says while an answer runs. */
const CONNECTION_TEXT: Record<ConnectionPhase, string> = {
  idle: '',
  sending: 'Sending…',
  streaming: 'The assistant is answering… (Enter queues a message)',
  reconnecting: 'Reconnecting…',
  stopping: 'Stopping…',
};

export function AssistantPanel() {
  const assistant = useInAppAgent();
  const pathname = usePathname();
  const desktop = useDesktop();
  const placeholder = useRef<HTMLDivElement>(null);
  const top = useDockTop(placeholder, assistant.open && desktop);
  const inputRef = useRef<HTMLTextAreaElement>(null);
  const scrollRef = useRef<HTMLDivElement>(null);
  const panelRef = useRef<HTMLDivElement>(null);
  const stick = useRef(true);
  /** The message the user was reading when earlier ones were asked for, and where it was. */
  const anchor = useRef<{ id: string; top: number } | null>(null);
  const [showJump, setShowJump] = useState(false);
  const mode = assistant.panelView;

  // Focus the input when the user opens the panel (or starts a new conversation).
  useEffect(() => {
    if (!assistant.focusRequest) return;
    window.requestAnimationFrame(() => inputRef.current?.focus());
  }, [assistant.focusRequest]);

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
      if (!assistant.loadingOlder) anchor.current = null;
      return;
    }
    if (stick.current) el.scrollTop = el.scrollHeight;
    else setShowJump(true);
  }, [
    assistant.view,
    assistant.pendingUserMessage,
    assistant.requestError,
    mode,
    assistant.open,
    assistant.loadingOlder,
  ]);

  // Content also grows after React commits (markdown, code blocks, a card expanding): keep
  // following it while the user is at the bottom, so a reloaded conversation opens at its latest.
  // biome-ignore lint/correctness/useExhaustiveDependencies: re-observe when the panel opens, changes view or gains messages (new children)
  useEffect(() => {
    const el = scrollRef.current;
    if (!el || typeof ResizeObserver === 'undefined') return;
    const observer = new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    });
    for (const child of Array.from(el.children)) observer.observe(child);
    observer.observe(el);
    return () => observer.disconnect();
  }, [assistant.open, mode, assistant.view.messages.length]);

  // A conversation that finished loading opens at its newest message.
  useEffect(() => {
    if (assistant.hydrating) return;
    stick.current = true;
    const el = scrollRef.current;
    if (el) el.scrollTop = el.scrollHeight;
  }, [assistant.hydrating]);

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

  if (!assistant.open) return null;

  const empty =
    assistant.view.messages.length === 0 &&
    !assistant.pendingUserMessage &&
    !assistant.hydrating &&
    !assistant.requestError;
  const suggestions = suggestionsFor(pathname);
  const pick = (s: Suggestion) => {
    if (s.complete) {
      stick.current = true;
      assistant.send(s.prompt);
    } else {
      assistant.setDraft(s.prompt);
      window.requestAnimationFrame(() => {
        const el = inputRef.current;
        if (el) {
          el.focus();
          el.setSelectionRange(el.value.length, el.value.length);
        }
      });
    }
  };
  const submit = () => {
    stick.current = true;
    assistant.send();
  };
  const loadEarlier = () => {
    const el = scrollRef.current;
    if (el) {
      // The first message still in sight is the one to keep in place.
      stick.current = false;
      const top = el.getBoundingClientRect().top;
      const shown = el.querySelectorAll<HTMLElement>('[data-testid="assistant-message"][data-message-id]');
      const first = Array.from(shown).find((m) => m.getBoundingClientRect().bottom > top);
      anchor.current = first ? { id: first.dataset.messageId!, top: first.getBoundingClientRect().top - top } : null;
    }
    assistant.loadOlder();
  };

  const onKeyDown = (e: ReactKeyboardEvent<HTMLElement>) => {
    if (e.key === 'Escape' && !e.defaultPrevented && !e.nativeEvent.isComposing) {
      e.preventDefault();
      // Escape in a field with text first leaves the field (what was typed stays); a second
      // Escape, or one elsewhere in the panel, closes the panel.
      const field = fieldWithContent(e.target);
      if (field) {
        field.blur();
        panelRef.current?.focus();
        return;
      }
      assistant.setOpen(false);
      return;
    }
    // Full screen on small screens: the page behind is hidden, so Tab cycles within the panel.
    if (e.key === 'Tab' && !desktop) {
      const focusables = Array.from(e.currentTarget.querySelectorAll<HTMLElement>(FOCUSABLE)).filter(
        (el) => !el.hasAttribute('disabled') && el.getClientRects().length > 0,
      );
      const first = focusables[0];
      const last = focusables[focusables.length - 1];
      if (!first || !last) return;
      if (e.shiftKey && document.activeElement === first) {
        e.preventDefault();
        last.focus();
      } else if (!e.shiftKey && document.activeElement === last) {
        e.preventDefault();
        first.focus();
      }
    }
  };

  return (
    <>
      {/* In-flow placeholder: reserves the panel's width beside the page content on desktop. */}
      <div
        ref={placeholder}
        aria-hidden="true"
        className="hidden shrink-0 md:block"
        style={{ width: assistant.width }}
      />
      {/* A div, not an aside: an aside may not carry the dialog role of the small-screen layout. The
          roles keep the landmark (complementary) when docked. */}
      {/* biome-ignore-start lint/a11y/noStaticElementInteractions: the role is set below (complementary or dialog) */}
      {/* biome-ignore-start lint/a11y/useAriaPropsSupportedByRole: complementary and dialog both take aria-label; aria-modal only comes with dialog */}
      <div
        id="assistant-panel"
        ref={panelRef}
        tabIndex={-1}
        data-testid="assistant-panel"
        data-layout={desktop ? 'docked' : 'fullscreen'}
        data-conversation-id={assistant.conversationId ?? ''}
        aria-label="Assistant"
        role={desktop ? 'complementary' : 'dialog'}
        aria-modal={desktop ? undefined : true}
        onKeyDown={onKeyDown}
        style={desktop ? { width: assistant.width, top } : undefined}
        className="fixed inset-0 z-50 flex flex-col outline-none border-slate-200 bg-white text-slate-900 md:inset-auto md:bottom-0 md:right-0 md:z-30 md:border-l dark:border-slate-800 dark:bg-slate-950 dark:text-slate-100"
      >
        {/* biome-ignore-end lint/a11y/noStaticElementInteractions: end of the panel's opening tag */}
        {/* biome-ignore-end lint/a11y/useAriaPropsSupportedByRole: end of the panel's opening tag */}
        {desktop ? <ResizeHandle width={assistant.width} setWidth={assistant.setWidth} /> : null}
        {/* Not a <header>: inside the dialog it would be a second banner landmark of the page. */}
        <div className="flex items-center gap-1 border-b border-slate-200 px-3 py-2 dark:border-slate-800">
          <h2 className="flex-1 text-sm font-semibold">
            <span aria-hidden="true">✦ </span>Assistant
          </h2>
          <button
            type="button"
            data-testid="assistant-history"
            aria-pressed={mode === 'history'}
            onClick={() => assistant.setPanelView(mode === 'history' ? 'chat' : 'history')}
            className="rounded px-2 py-1 text-sm hover:bg-slate-100 dark:hover:bg-slate-800"
          >
            History
          </button>
          <button
            type="button"
            data-testid="assistant-new"
            disabled={assistant.busy}
            onClick={() => assistant.newConversation()}
            className="rounded px-2 py-1 text-sm hover:bg-slate-100 disabled:opacity-50 dark:hover:bg-slate-800"
          >
            New
          </button>
          <button
            type="button"
            data-testid="assistant-close"
            aria-label="Close the assistant (Escape)"
            title="Close (Esc)"
            onClick={() => assistant.setOpen(false)}
            className="rounded px-2 py-1 text-sm hover:bg-slate-100 dark:hover:bg-slate-800"
          >
            <span aria-hidden="true">✕</span>
          </button>
        </div>
        <ModelNotice model={assistant.model} />
        <Announcer items={assistant.announcements} />

        {mode === 'history' ? (
          <>
            <ConversationList
              items={assistant.history.items}
              currentId={assistant.conversationId}
              loading={assistant.history.loading}
              error={assistant.history.error}
              search={assistant.history.search}
              onSearch={assistant.history.setSearch}
              onSelect={(id) => {
                if (id !== assistant.conversationId) assistant.selectConversation(id);
                else assistant.setPanelView('chat');
              }}
              onRename={assistant.history.rename}
              onDelete={(id, title) => void assistant.history.remove(id, title)}
              onNew={() => assistant.newConversation()}
              hasMore={assistant.history.hasMore}
              onLoadMore={assistant.history.loadMore}
              disabled={assistant.busy}
            />
            <UndoToast
              undo={assistant.history.pendingUndo}
              error={assistant.history.undoError}
              onUndo={() => void assistant.history.undo()}
              onDismiss={assistant.history.dismissUndo}
            />
          </>
        ) : (
          <>
            <div className="relative min-h-0 flex-1">
              <div
                ref={scrollRef}
                onScroll={onScroll}
                className="h-full overflow-y-auto px-3 py-3"
                data-testid="assistant-scroll"
              >
                {assistant.hydrating && assistant.view.messages.length === 0 ? (
                  <p className="text-sm text-slate-500">Loading the conversation…</p>
                ) : null}
                {assistant.hydrateError ? (
                  <p role="alert" className="text-sm text-red-800 dark:text-red-300">
                    {assistant.hydrateError}
                  </p>
                ) : null}
                {empty ? (
                  <EmptyState suggestions={suggestions} onPick={pick} disabled={!assistant.canSend} />
                ) : (
                  <ConversationMessages
                    view={assistant.view}
                    feedback={assistant.feedback}
                    onFeedback={assistant.submitFeedback}
                    feedbackDrafts={assistant.feedbackDrafts}
                    onFeedbackDraft={assistant.setFeedbackDraft}
                    approvals={{
                      drafts: assistant.approvalDrafts,
                      onDraftChange: assistant.setApprovalDraft,
                      onSubmit: assistant.submitApprovals,
                      onAnswerAll: assistant.answerAll,
                      submitting: assistant.busy,
                      error: assistant.approvalError,
                    }}
                    now={assistant.now}
                    pendingUserMessage={assistant.pendingUserMessage}
                    requestError={assistant.requestError}
                    onRetry={assistant.canRetry ? assistant.retry : undefined}
                    busy={assistant.busy}
                    revise={
                      assistant.canRevise
                        ? { onEdit: assistant.editLastMessage, onRegenerate: assistant.regenerate }
                        : undefined
                    }
                    versions={{
                      onSelect: assistant.selectVersion,
                      disabled: assistant.busy || assistant.switchingVersion,
                    }}
                    showUsage
                    earlier={
                      assistant.hasOlder
                        ? { onLoad: loadEarlier, loading: assistant.loadingOlder, error: assistant.olderError }
                        : undefined
                    }
                  />
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
            <UndoToast
              undo={assistant.history.pendingUndo}
              error={assistant.history.undoError}
              onUndo={() => void assistant.history.undo()}
              onDismiss={assistant.history.dismissUndo}
            />
            <form
              className="border-t border-slate-200 p-2 dark:border-slate-800"
              onSubmit={(e) => {
                e.preventDefault();
                submit();
              }}
            >
              <QueuedMessages
                items={assistant.queue}
                busy={assistant.busy}
                held={assistant.queueHeld}
                paused={assistant.queuePaused}
                onClear={assistant.clearQueue}
                onEdit={assistant.editQueued}
                onEditing={assistant.setQueuedEditing}
                onRemove={assistant.removeQueued}
                onSendNow={assistant.sendQueuedNow}
              />
              {assistant.selection ? (
                <div
                  className="mb-1 flex items-center gap-1 text-xs text-slate-600 dark:text-slate-300"
                  data-testid="assistant-selection"
                >
                  <span className="min-w-0 flex-1 truncate">
                    Includes your selection: “{assistant.selection.slice(0, 80)}
                    {assistant.selection.length > 80 ? '…' : ''}”
                  </span>
                  <button type="button" className="underline" onClick={assistant.clearSelection}>
                    Remove
                  </button>
                </div>
              ) : null}
              <label htmlFor="assistant-input" className="sr-only">
                Message the assistant
              </label>
              <textarea
                id="assistant-input"
                ref={inputRef}
                data-testid="assistant-input"
                value={assistant.draft}
                onChange={(e) => assistant.setDraft(e.target.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
                    e.preventDefault();
                    submit();
                  }
                }}
                rows={2}
                maxLength={LIMITS.maxUserMessageChars}
                placeholder="Ask the assistant… (Enter to send, Shift+Enter for a new line)"
                aria-describedby={assistant.blockedReason ? 'assistant-blocked' : undefined}
                className="w-full resize-none rounded-md border border-slate-300 bg-white p-2 text-sm dark:border-slate-600 dark:bg-slate-900"
              />
              <div className="mt-1 flex items-center gap-2">
                <p
                  id="assistant-blocked"
                  data-testid="assistant-status"
                  data-connection={assistant.connection}
                  className="min-w-0 flex-1 text-xs text-slate-600 dark:text-slate-300"
                >
                  {assistant.blockedReason ??
                    assistant.statusNote ??
                    (assistant.busy ? CONNECTION_TEXT[assistant.connection] : (assistant.inputHint ?? ''))}
                </p>
                {assistant.busy ? (
                  <>
                    <button
                      type="submit"
                      data-testid="assistant-queue-send"
                      disabled={!assistant.canSend || !assistant.draft.trim()}
                      title="Queue this message: it is sent when the answer ends (Enter)"
                      className={[
                        'rounded-md border border-blue-700 px-3 py-1 text-sm font-medium text-blue-800',
                        'disabled:opacity-50 dark:text-blue-300',
                      ].join(' ')}
                    >
                      Queue
                    </button>
                    <button
                      type="button"
                      data-testid="assistant-stop"
                      onClick={assistant.stop}
                      disabled={assistant.connection === 'stopping'}
                      className="rounded-md border border-slate-400 px-3 py-1 text-sm font-medium disabled:opacity-50"
                    >
                      <span aria-hidden="true">■ </span>
                      {assistant.connection === 'stopping' ? 'Stopping…' : 'Stop'}
                    </button>
                  </>
                ) : (
                  <button
                    type="submit"
                    data-testid="assistant-send"
                    disabled={!assistant.canSend || !assistant.draft.trim()}
                    className="rounded-md bg-blue-700 px-3 py-1 text-sm font-medium text-white disabled:opacity-50"
                  >
                    Send
                  </button>
                )}
              </div>
            </form>
          </>
        )}
      </div>
    </>
  );
}
