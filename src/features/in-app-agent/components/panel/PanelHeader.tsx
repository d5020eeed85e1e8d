'use client';
/** The panel's title row: History (the conversation list), New and Close. */
import { memo } from 'react';
import { useAgentActions, useAgentSelector, usePanelUi } from '../panel-context';
import { selectBusy } from '../selectors';

export const PanelHeader = memo(function PanelHeader() {
  const { panelView, setPanelView } = usePanelUi();
  const { newConversation, setOpen } = useAgentActions();
  const busy = useAgentSelector(selectBusy);
  return (
    // Not a <header>: inside the dialog it would be a second banner landmark of the page.
    <div className="flex items-center gap-1 border-b border-slate-200 px-3 py-2 dark:border-slate-800">
      <h2 className="flex-1 text-sm font-semibold">
        <span aria-hidden="true">✦ </span>Assistant
      </h2>
      <button
        type="button"
        data-testid="assistant-history"
        aria-pressed={panelView === 'history'}
        onClick={() => setPanelView(panelView === 'history' ? 'chat' : 'history')}
        className="rounded px-2 py-1 text-sm hover:bg-slate-100 dark:hover:bg-slate-800"
      >
        History
      </button>
      <button
        type="button"
        data-testid="assistant-new"
        disabled={busy}
        onClick={() => newConversation()}
        className="rounded px-2 py-1 text-sm hover:bg-slate-100 disabled:opacity-50 dark:hover:bg-slate-800"
      >
        New
      </button>
      <button
        type="button"
        data-testid="assistant-close"
        aria-label="Close the assistant (Escape)"
        title="Close (Esc)"
        onClick={() => setOpen(false)}
        className="rounded px-2 py-1 text-sm hover:bg-slate-100 dark:hover:bg-slate-800"
      >
        <span aria-hidden="true">✕</span>
      </button>
    </div>
  );
});
