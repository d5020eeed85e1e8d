'use client';
/**
 * One member's assistant data in the project, for its admins: export it (a JSONL file, one line per
 * conversation with its runs, messages, approvals, feedback and tool calls, masked like stored
 * text) or delete it (conversations with an answer being written stay until it ends).
 */
import type { inferRouterOutputs } from '@trpc/server';
import { useState } from 'react';
import { type AppRouter, useTRPCClient } from '../../host-client';
import { downloadFile } from '../download';
import { messageOf, Outcome } from './Outcome';
import { ui } from './styles';

export type PeopleData = inferRouterOutputs<AppRouter>['agent']['memberData']['people'];

export function AssistantMemberData({ projectId, initial }: { projectId: string; initial: PeopleData }) {
  const client = useTRPCClient();
  const [people, setPeople] = useState(initial);
  const [userId, setUserId] = useState(initial[0]?.user.id ?? '');
  const [confirming, setConfirming] = useState(false);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const chosen = people.find((p) => p.user.id === userId);
  const name = chosen ? chosen.user.name || chosen.user.email : '';

  async function exportData() {
    if (!chosen) return;
    setPending(true);
    setError(null);
    setNotice(null);
    try {
      const lines: unknown[] = [];
      let cursor: string | undefined;
      for (;;) {
        const page = await client.agent.memberData.export.query({ projectId, userId, ...(cursor ? { cursor } : {}) });
        if (page.header) lines.push(page.header);
        lines.push(...page.lines);
        if (!page.nextCursor) break;
        cursor = page.nextCursor;
      }
      const day = new Date().toISOString().slice(0, 10);
      downloadFile(
        `assistant-data-${userId}-${day}.jsonl`,
        `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`,
        'application/x-ndjson',
      );
      setNotice(`Exported ${lines.length - 1} conversation${lines.length === 2 ? '' : 's'} of ${name}.`);
    } catch (err) {
      setError(messageOf(err, 'The export failed.'));
    } finally {
      setPending(false);
    }
  }

  async function deleteData() {
    if (!chosen) return;
    setPending(true);
    setError(null);
    setNotice(null);
    try {
      const done = await client.agent.memberData.delete.mutate({ projectId, userId });
      setConfirming(false);
      setNotice(
        `Deleted ${done.deleted} conversation${done.deleted === 1 ? '' : 's'} of ${name}.` +
          (done.running
            ? ` ${done.running} with an answer being written stay${done.running === 1 ? 's' : ''}: delete again once it ends.`
            : ''),
      );
      const next = await client.agent.memberData.people.query({ projectId });
      setPeople(next);
      if (!next.some((p) => p.user.id === userId)) setUserId(next[0]?.user.id ?? '');
    } catch (err) {
      setError(messageOf(err, 'The deletion failed.'));
    } finally {
      setPending(false);
    }
  }

  return (
    <div className="space-y-3 border-t border-slate-200 pt-3 dark:border-slate-800" data-testid="member-data">
      <h3 className="text-base font-semibold">A member&apos;s assistant data</h3>
      {people.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-400" data-testid="member-data-empty">
          Nobody has assistant conversations in this project.
        </p>
      ) : (
        <>
          <div>
            <label htmlFor="member-data-user" className={ui.label}>
              Member
            </label>
            <select
              id="member-data-user"
              value={userId}
              onChange={(e) => {
                setUserId(e.target.value);
                setConfirming(false);
              }}
              data-testid="member-data-user"
              className={`mt-1 max-w-sm ${ui.field}`}
            >
              {people.map((p) => (
                <option key={p.user.id} value={p.user.id}>
                  {p.user.name || p.user.email} · {p.conversations} conversation{p.conversations === 1 ? '' : 's'}
                  {p.member ? '' : ' · no longer a member'}
                </option>
              ))}
            </select>
          </div>
          <div className="flex flex-wrap gap-2">
            <button
              type="button"
              className={ui.secondary}
              disabled={pending || !chosen}
              onClick={exportData}
              data-testid="member-data-export"
            >
              Export (JSONL)
            </button>
            {confirming ? (
              <>
                <button
                  type="button"
                  className={ui.danger}
                  disabled={pending}
                  onClick={deleteData}
                  data-testid="member-data-delete-confirm"
                >
                  Delete all of {name}&apos;s assistant data
                </button>
                <button type="button" className={ui.secondary} onClick={() => setConfirming(false)}>
                  Cancel
                </button>
              </>
            ) : (
              <button
                type="button"
                className={ui.dangerOutline}
                disabled={pending || !chosen}
                onClick={() => setConfirming(true)}
                data-testid="member-data-delete"
              >
                Delete…
              </button>
            )}
          </div>
        </>
      )}
      <Outcome error={error} notice={notice} testId="member-data-outcome" />
    </div>
  );
}
