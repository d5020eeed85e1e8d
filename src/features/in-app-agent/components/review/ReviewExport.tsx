'use client';
/**
 * The review page's export controller: fetches the conversation's export through the module's
 * data calls and hands it to the browser as a JSON download; renders the prop-driven button.
 */
import { useCallback, useState } from 'react';
import { trpcErrorMessage, useAgentApi } from '../agent-api';
import { downloadFile } from '../download';
import { ExportButton } from './ExportButton';

function useConversationExport(projectId: string, conversationId: string) {
  const api = useAgentApi();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = useCallback(async () => {
    setBusy(true);
    setError(null);
    try {
      const data = await api.exportConversation({ projectId, conversationId });
      downloadFile(`conversation-${conversationId}.json`, JSON.stringify(data, null, 2), 'application/json');
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
