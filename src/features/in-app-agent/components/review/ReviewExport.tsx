'use client';
/**
 * The review page's export controller: fetches the conversation's export through the module's
 * data calls and hands it to the browser as a JSON download; renders the prop-driven button.
 */
import { useCallback, useState } from 'react';
import { trpcErrorMessage, useAgentApi } from '../agent-api';
import { ExportButton } from './ExportButton';

/** Offers `data` as a file download named `name`. */
function downloadJson(name: string, data: unknown): void {
  const blob = new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 1000);
}

function useConversationExport(projectId: string, conversationId: string) {
  const api = useAgentApi();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async () => {
    setBusy(true);
    setError(null);
    try {
      const data = await api.exportConversation({ projectId, conversationId });
      downloadJson(`conversation-${conversationId}.json`, data);
    } catch (err) {
      setError(trpcErrorMessage(err, 'Export failed.'));
    } finally {
      setBusy(false);
    }
  }, [api, conversationId, projectId]);
  return { busy, error, run };
}

export function ReviewExport({ projectId, conversationId }: { projectId: string; conversationId: string }) {
  const exp = useConversationExport(projectId, conversationId);
  return <ExportButton busy={exp.busy} error={exp.error} onExport={() => void exp.run()} />;
}
