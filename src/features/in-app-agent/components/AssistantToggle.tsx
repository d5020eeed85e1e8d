'use client';
import { useEffect, useState } from 'react';
import { useAgentActions, useAgentSelector, usePanelUi } from './panel-context';
import { useWaitingForMe, WaitingBadge, WaitingList } from './waiting/WaitingList';

/**
 * The header button that opens and closes the assistant panel (also Ctrl/⌘+I), with the number of
 * approvals and questions waiting for the user, and their list (waiting/WaitingList.tsx).
 */
export function AssistantToggle() {
  const { toggle } = useAgentActions();
  const { toggleRef } = usePanelUi();
  const open = useAgentSelector((state) => state.open);
  const [mac, setMac] = useState(false);
  useEffect(() => {
    setMac(/Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent));
  }, []);
  const shortcut = mac ? '⌘I' : 'Ctrl+I';
  const waiting = useWaitingForMe();
  return (
    <>
      <button
        ref={toggleRef}
        type="button"
        data-testid="assistant-toggle"
        aria-expanded={open}
        aria-controls="assistant-panel"
        aria-keyshortcuts="Control+I Meta+I"
        title={`${open ? 'Close' : 'Open'} the assistant (${shortcut})`}
        onClick={toggle}
        className={`inline-flex items-center gap-1.5 rounded-md border px-2.5 py-1 text-sm font-medium ${
          open
            ? 'border-blue-700 bg-blue-700 text-white'
            : 'border-slate-300 text-slate-800 hover:bg-slate-100 dark:border-slate-600 dark:text-slate-100 dark:hover:bg-slate-800'
        }`}
      >
        <span aria-hidden="true">✦</span>
        Assistant
        <WaitingBadge count={waiting?.total ?? 0} />
        <kbd className="hidden rounded border border-current px-1 text-[0.65rem] sm:inline">{shortcut}</kbd>
      </button>
      <WaitingList waiting={waiting} />
    </>
  );
}
