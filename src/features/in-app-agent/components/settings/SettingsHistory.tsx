/**
 * The audit page's list of changes to the assistant's project settings, newest first: versions of
 * the tool permissions (what changed, cell by cell, and argument rules), versions of the
 * instructions (with their text), and "always allow in this conversation" grants with their
 * revocation. Prop-driven; renders on the server.
 */
import { describeRule, POLICY_CHOICE_LABELS, ROLE_LABELS } from '../../tool-policy';
import type { SettingsHistoryEntry } from './settings-api';

type Person = { id: string; name: string } | null;

function When({ at }: { at: Date }) {
  return <time dateTime={at.toISOString()}>{at.toISOString().replace('T', ' ').slice(0, 16)} UTC</time>;
}

const who = (p: Person) => p?.name || 'a former member';

function What({
  entry,
  titles,
  reviewBase,
}: {
  entry: SettingsHistoryEntry;
  titles: Record<string, string>;
  reviewBase: string;
}) {
  const title = (tool: string) => titles[tool] ?? tool;
  if (entry.kind === 'policy') {
    return (
      <>
        <p className="font-medium">Tool permissions, version {entry.version}</p>
        {entry.changes ? (
          <ul className="ml-5 list-disc">
            {entry.changes.cells.map((c) => (
              <li key={`${c.tool}-${c.role}`}>
                {title(c.tool)} · {ROLE_LABELS[c.role]}: {POLICY_CHOICE_LABELS[c.from]} → {POLICY_CHOICE_LABELS[c.to]}
              </li>
            ))}
            {entry.changes.rules.map((r) => (
              <li key={`rules-${r.tool}`}>
                {title(r.tool)}, argument rules:{' '}
                {r.to.length ? r.to.map((rule) => describeRule(r.tool, rule)).join('; ') : 'none'}
              </li>
            ))}
          </ul>
        ) : null}
      </>
    );
  }
  if (entry.kind === 'instructions') {
    return (
      <>
        <p className="font-medium">Assistant instructions, version {entry.version}</p>
        {entry.text ? (
          <details>
            <summary className="cursor-pointer">Text ({entry.text.length.toLocaleString('en-US')} characters)</summary>
            <pre className="mt-1 max-h-64 overflow-auto whitespace-pre-wrap rounded bg-slate-50 p-2 dark:bg-slate-800">
              {entry.text}
            </pre>
          </details>
        ) : (
          <p>Removed: the assistant has no instructions.</p>
        )}
      </>
    );
  }
  return (
    <>
      <p className="font-medium">
        Always allowed “{title(entry.toolName)}” in{' '}
        <a
          className="text-blue-700 underline dark:text-blue-300"
          href={`${reviewBase}/${encodeURIComponent(entry.conversationId)}`}
        >
          a conversation
        </a>{' '}
        (tool permissions version {entry.policyVersion})
      </p>
      {entry.revokedAt ? (
        <p>
          Revoked by {who(entry.revokedBy)}, <When at={entry.revokedAt} />
        </p>
      ) : null}
    </>
  );
}

export function SettingsHistory({
  entries,
  titles,
  projectId,
}: {
  entries: SettingsHistoryEntry[];
  titles: Record<string, string>;
  projectId: string;
}) {
  const reviewBase = `/projects/${encodeURIComponent(projectId)}/assistant/review`;
  return (
    <section aria-labelledby="assistant-settings-history" className="space-y-2" data-testid="settings-history">
      <h2 id="assistant-settings-history" className="text-lg font-semibold">
        Assistant settings
      </h2>
      <p className="text-sm text-slate-600 dark:text-slate-400">
        Changes to the assistant&apos;s tool permissions and instructions, and tools members allowed for the rest of a
        conversation, newest first.
      </p>
      {entries.length === 0 ? (
        <p className="text-sm text-slate-600 dark:text-slate-400">
          No changes yet: the assistant goes by the defaults.
        </p>
      ) : (
        <div className="overflow-x-auto rounded-lg border border-slate-200 dark:border-slate-800">
          <table className="w-full text-left text-sm">
            <caption className="sr-only">Assistant settings changes</caption>
            <thead className="bg-slate-50 text-xs uppercase tracking-wide text-slate-600 dark:bg-slate-900 dark:text-slate-400">
              <tr>
                <th scope="col" className="px-3 py-2">
                  When
                </th>
                <th scope="col" className="px-3 py-2">
                  Who
                </th>
                <th scope="col" className="px-3 py-2">
                  What
                </th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-200 dark:divide-slate-800">
              {entries.map((e) => (
                <tr
                  key={e.kind === 'allow' ? e.id : `${e.kind}-${e.version}`}
                  data-testid="settings-history-row"
                  data-kind={e.kind}
                >
                  <td className="whitespace-nowrap px-3 py-2 align-top">
                    <When at={e.at} />
                  </td>
                  <td className="px-3 py-2 align-top">{who(e.by)}</td>
                  <td className="px-3 py-2 align-top">
                    <What entry={e} titles={titles} reviewBase={reviewBase} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
