'use client';
/**
 * What waits for the user, from anywhere in the project: the count on the assistant's toggle (and
 * in the page title), and "N waiting": a list of the conversations where approvals or questions
 * wait, each opening the panel on it. Also the browser notifications (use-attention.ts).
 */
import { useEffect, useId, useRef, useState } from 'react';
import { useAgentActions, useAgentSelector, usePanelUi } from '../panel-context';
import { useTitleCount } from './page-title';
import { useAttentionNotifications } from './use-attention';
import { useWaiting, type WaitingListData } from './use-waiting';

/** The waiting requests, with the page title's count and the notifications kept in step. */
export function useWaitingForMe(): WaitingListData | null {
  const { projectId } = usePanelUi();
  const runsFinished = useAgentSelector((state) => state.runsFinished);
  const waiting = useWaiting(projectId, runsFinished);
  useTitleCount(waiting?.total ?? 0);
  useAttentionNotifications(waiting);
  return waiting;
}

/** The count on the toggle ("2"), read out as "2 waiting for you". */
export function WaitingBadge({ count }: { count: number }) {
  if (count <= 0) return null;
  return (
    <span
      data-testid="assistant-waiting-badge"
      data-count={count}
      className="inline-flex min-w-5 items-center justify-center rounded-full bg-amber-500 px-1.5 text-xs font-semibold text-slate-950"
    >
      {count}
      <span className="sr-only"> waiting for you</span>
    </span>
  );
}

function describe(c: WaitingListData['conversations'][number]): string {
  const parts: string[] = [];
  if (c.approvals) parts.push(`${c.approvals} approval${c.approvals === 1 ? '' : 's'}`);
  if (c.questions) parts.push(`${c.questions} question${c.questions === 1 ? '' : 's'}`);
  return parts.join(', ');
}

/** "N waiting" and its list; nothing while nothing waits. */
export function WaitingList({ waiting }: { waiting: WaitingListData | null }) {
  const actions = useAgentActions();
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const panel = useRef<HTMLDivElement>(null);
  const id = useId();
  const total = waiting?.total ?? 0;

  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        setOpen(false);
        button.current?.focus();
      }
    };
    const onPointer = (e: PointerEvent) => {
      const target = e.target as Node;
      if (!panel.current?.contains(target) && !button.current?.contains(target)) setOpen(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onPointer);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onPointer);
    };
  }, [open]);

  useEffect(() => {
    if (total === 0) setOpen(false);
  }, [total]);

  if (!waiting || total === 0) return null;
  const more = waiting.total - waiting.conversations.reduce((n, c) => n + c.approvals + c.questions, 0);
  return (
    <div className="relative">
      <button
        ref={button}
        type="button"
        data-testid="assistant-waiting-button"
        aria-expanded={open}
        aria-controls={id}
        onClick={() => setOpen((o) => !o)}
        className="rounded-md border border-amber-500 px-2 py-1 text-sm font-medium text-amber-900 hover:bg-amber-50 dark:text-amber-100 dark:hover:bg-amber-950"
      >
        {total} waiting
      </button>
      {open ? (
        <div
          ref={panel}
          id={id}
          data-testid="assistant-waiting-list"
          className="absolute right-0 z-50 mt-1 w-[min(22rem,calc(100vw-2rem))] rounded-md border border-slate-200 bg-white p-2 shadow-lg dark:border-slate-700 dark:bg-slate-900"
        >
          <h2 className="px-1 pb-1 text-sm font-semibold">Waiting for your answer</h2>
          <ul className="space-y-1">
            {waiting.conversations.map((c) => (
              <li key={c.conversationId}>
                <button
                  type="button"
                  data-testid="assistant-waiting-item"
                  data-conversation-id={c.conversationId}
                  onClick={() => {
                    setOpen(false);
                    actions.selectConversation(c.conversationId);
                    actions.setOpen(true);
                  }}
                  className="w-full rounded px-2 py-1.5 text-left text-sm hover:bg-slate-100 dark:hover:bg-slate-800"
                >
                  <span className="block truncate font-medium">{c.title}</span>
                  <span className="block text-xs text-slate-600 dark:text-slate-300">
                    {describe(c)}
                    {c.tools.length ? ` · ${c.tools.join(', ')}` : ''}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          {more > 0 ? (
            <p className="px-1 pt-1 text-xs text-slate-600 dark:text-slate-300">
              And {more} more in older conversations.
            </p>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
