'use client';
import type { PendingUndo } from './use-conversation-history';

/**
 * The "Deleted … Undo" toast. It lives in the panel (not in the history list), so the offer stays
 * visible wherever the user goes in the panel until it times out.
 */
export function UndoToast({
  undo,
  error,
  onUndo,
  onDismiss,
}: {
  undo: PendingUndo | null;
  error: string | null;
  onUndo: () => void;
  onDismiss: () => void;
}) {
  if (!undo && !error) return null;
  return (
    <div
      role="status"
      data-testid="conversation-undo"
      className="mx-2 mb-2 flex items-center gap-2 rounded-md border border-slate-300 bg-slate-50 px-3 py-1.5 text-sm shadow-sm dark:border-slate-700 dark:bg-slate-900"
    >
      {undo ? (
        <>
          <span className="min-w-0 flex-1 truncate">Deleted “{undo.title || 'Untitled conversation'}”.</span>
          <button
            type="button"
            onClick={onUndo}
            className="rounded border border-slate-400 px-2 py-0.5 font-medium hover:bg-white dark:border-slate-500 dark:hover:bg-slate-800"
          >
            Undo
          </button>
        </>
      ) : (
        <span role="alert" className="min-w-0 flex-1 text-red-800 dark:text-red-300">
          {error}
        </span>
      )}
      <button
        type="button"
        aria-label="Dismiss"
        title="Dismiss"
        onClick={onDismiss}
        className="rounded px-1 text-slate-500 hover:bg-slate-200 dark:text-slate-400 dark:hover:bg-slate-800"
      >
        <span aria-hidden="true">✕</span>
      </button>
    </div>
  );
}
