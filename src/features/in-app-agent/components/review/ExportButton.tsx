'use client';
import { useState } from 'react';
import { useTRPCClient } from '@/lib/trpc/client';

/** Downloads the conversation's review export (replay, feedback, audit, approvals, runs) as JSON. */
export function ExportButton({ projectId, conversationId }: { projectId: string; conversationId: string }) {
  const client = useTRPCClient();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  return (
    <span className="inline-flex items-center gap-2">
      <button
        type="button"
        data-testid="review-export"
        disabled={busy}
        onClick={async () => {
          setBusy(true);
          setError(null);
          try {
            const data = await client.agent.review.export.query({ projectId, conversationId });
            const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
            const url = URL.createObjectURL(blob);
            const a = document.createElement('a');
            a.href = url;
            a.download = `conversation-${conversationId}.json`;
            document.body.appendChild(a);
            a.click();
            a.remove();
            window.setTimeout(() => URL.revokeObjectURL(url), 1000);
          } catch (err) {
            setError(err instanceof Error ? err.message : 'Export failed.');
          } finally {
            setBusy(false);
          }
        }}
        className="rounded-md border border-slate-400 px-3 py-1 text-sm font-medium disabled:opacity-50"
      >
        {busy ? 'Exporting…' : 'Export JSON'}
      </button>
      {error ? (
        <span role="alert" className="text-sm text-red-800 dark:text-red-300">
          {error}
        </span>
      ) : null}
    </span>
  );
}
