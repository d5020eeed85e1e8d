'use client';
/**
 * "Allowed in this conversation": the tools the user answered "always allow" for (their later calls
 * in this conversation run without a card), each with Revoke. Read from the server when the
 * conversation changes and after each run (a resume may have added one, a change of the project's
 * tool permissions ends them all); shown only when there is one.
 */
import { useEffect, useState } from 'react';
import { useAgentSelector, usePanelUi } from '../panel-context';
import { type Allowances, failureOf, useSettingsApi } from '../settings/settings-api';

export function ConversationAllowances() {
  const { projectId } = usePanelUi();
  const conversationId = useAgentSelector((state) => state.conversationId);
  const runsFinished = useAgentSelector((state) => state.runsFinished);
  const api = useSettingsApi();
  const [list, setList] = useState<{ conversationId: string; tools: Allowances['tools'] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);

  // biome-ignore lint/correctness/useExhaustiveDependencies: runsFinished is the trigger to read again
  useEffect(() => {
    if (!conversationId) {
      setList(null);
      return;
    }
    let current = true;
    api
      .allowances({ projectId, conversationId })
      .then((res) => {
        if (current) setList({ conversationId, tools: res.tools });
      })
      // A conversation not saved yet (or gone) has none; nothing to show.
      .catch(() => {
        if (current) setList(null);
      });
    return () => {
      current = false;
    };
  }, [api, projectId, conversationId, runsFinished]);

  if (!conversationId || list?.conversationId !== conversationId || !list.tools.length) return null;

  async function revoke(toolName: string) {
    if (!conversationId) return;
    setRevoking(toolName);
    setError(null);
    try {
      const res = await api.revokeAllowance({ projectId, conversationId, toolName });
      setList({ conversationId, tools: res.tools });
    } catch (err) {
      const failure = failureOf(err, 'Could not revoke it. Try again.');
      // Already gone (revoked in another tab, or the project's permissions changed): read the list again.
      if (failure.code === 'ALLOWANCE_NOT_FOUND') {
        setList({ conversationId, tools: list?.tools.filter((t) => t.toolName !== toolName) ?? [] });
      } else setError(failure.message);
    } finally {
      setRevoking(null);
    }
  }

  return (
    <section
      aria-labelledby="assistant-allowances-title"
      className="border-t border-slate-200 px-3 py-2 text-xs dark:border-slate-800"
      data-testid="conversation-allowances"
    >
      <h2 id="assistant-allowances-title" className="font-medium">
        Allowed in this conversation
      </h2>
      <ul className="mt-1 space-y-1">
        {list.tools.map((t) => (
          <li
            key={t.toolName}
            className="flex items-center justify-between gap-2"
            data-testid="allowance"
            data-tool={t.toolName}
          >
            <span>
              {t.title} <span className="text-slate-600 dark:text-slate-400">· runs without asking</span>
            </span>
            <button
              type="button"
              className="rounded border border-slate-300 px-2 py-0.5 font-medium hover:bg-slate-100 disabled:opacity-60 dark:border-slate-600 dark:hover:bg-slate-800"
              aria-label={`Revoke: ${t.title}`}
              disabled={revoking === t.toolName}
              onClick={() => void revoke(t.toolName)}
            >
              Revoke
            </button>
          </li>
        ))}
      </ul>
      {error ? (
        <p role="alert" className="mt-1 text-red-800 dark:text-red-300">
          {error}
        </p>
      ) : null}
    </section>
  );
}
