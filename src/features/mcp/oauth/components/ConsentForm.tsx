'use client';
/**
 * The consent form: which project, which access (the presets the key form uses, "Read-only" and
 * "Full", or scopes one by one), then "Deny" or "Allow". It posts natively to the decision route,
 * which checks everything again (origin, session, membership, role). Only scopes the user's role in
 * the chosen project holds are offered; "Full" means all of them.
 */
import { useEffect, useState } from 'react';
import { KEY_SCOPES, READ_ONLY_KEY_SCOPES, normalizeKeyScopes, toolsOfScope } from '@/features/mcp/key-scopes';
import { btn, field, labelText } from '@/features/tracker/components/ui';
import type { Scope } from '@/server/rbac';

export interface ConsentFormProject {
  id: string;
  name: string;
  roleLabel: string;
  scopes: Scope[];
}

type Access = 'read-only' | 'full' | 'custom';

const ACCESS: Array<{ value: Access; label: string; help: string }> = [
  {
    value: 'read-only',
    label: 'Read-only',
    help: 'Reads issues, labels, members and the project summary; changes nothing.',
  },
  { value: 'full', label: 'Full', help: 'Everything your role allows in this project.' },
  { value: 'custom', label: 'Choose scopes', help: 'Pick the scopes one by one.' },
];

function same(a: readonly Scope[], b: readonly Scope[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

/** The access the form starts with: what the app asked for, within the role (nothing asked: read-only). */
function initialChoice(requested: readonly Scope[], held: readonly Scope[]): { access: Access; custom: Scope[] } {
  const readOnly = READ_ONLY_KEY_SCOPES.filter((s) => held.includes(s));
  const asked = normalizeKeyScopes(requested.filter((s) => held.includes(s)));
  if (asked.length === 0 || same(asked, readOnly)) return { access: 'read-only', custom: readOnly };
  if (same(asked, held)) return { access: 'full', custom: asked };
  return { access: 'custom', custom: asked };
}

export function ConsentForm(props: {
  action: string;
  sealed: string;
  clientName: string;
  projects: ConsentFormProject[];
  requestedScopes: Scope[];
}) {
  const { projects, requestedScopes } = props;
  const [projectId, setProjectId] = useState(projects[0]?.id ?? '');
  const project = projects.find((p) => p.id === projectId) ?? projects[0];
  const held = project?.scopes ?? [];
  const start = initialChoice(requestedScopes, held);
  const [access, setAccess] = useState<Access>(start.access);
  const [custom, setCustom] = useState<ReadonlySet<Scope>>(() => new Set(start.custom));
  useEffect(() => {
    // Browser tests wait for this before they use the form's controls.
    document.body.dataset.hydrated = 'true';
  }, []);

  function chooseProject(id: string) {
    setProjectId(id);
    const next = projects.find((p) => p.id === id);
    const choice = initialChoice(requestedScopes, next?.scopes ?? []);
    setAccess(choice.access);
    setCustom(new Set(choice.custom));
  }

  function toggle(scope: Scope, on: boolean) {
    setCustom((prev) => {
      const next = new Set(prev);
      if (on) next.add(scope);
      else next.delete(scope);
      return next;
    });
  }

  const granted =
    access === 'full'
      ? held
      : access === 'read-only'
        ? READ_ONLY_KEY_SCOPES.filter((s) => held.includes(s))
        : normalizeKeyScopes(custom);

  return (
    <form method="post" action={props.action} className="space-y-5" aria-label={`Connect ${props.clientName}`}>
      <input type="hidden" name="request" value={props.sealed} />
      {project ? (
        <>
          <div className="space-y-1">
            <label htmlFor="consent-project" className={labelText}>
              Project
            </label>
            <select
              id="consent-project"
              name="projectId"
              value={projectId}
              onChange={(e) => chooseProject(e.currentTarget.value)}
              className={field}
              data-testid="consent-project"
            >
              {projects.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name} ({p.roleLabel})
                </option>
              ))}
            </select>
            <p className="text-xs text-slate-600 dark:text-slate-400">
              The app acts in this project only, and never beyond your role there.
            </p>
          </div>
          <fieldset className="space-y-2" data-testid="consent-access">
            <legend className={labelText}>Access</legend>
            {ACCESS.map((c) => (
              <label key={c.value} className="flex items-start gap-2 text-sm">
                <input
                  type="radio"
                  name="access"
                  value={c.value}
                  checked={access === c.value}
                  onChange={() => setAccess(c.value)}
                  className="mt-1"
                />
                <span>
                  <span className="font-medium">{c.label}</span>
                  <span className="block text-xs text-slate-600 dark:text-slate-400">{c.help}</span>
                </span>
              </label>
            ))}
            {access === 'custom' ? (
              <fieldset className="ml-6 space-y-1" data-testid="consent-scopes">
                <legend className="sr-only">Scopes</legend>
                {KEY_SCOPES.map((scope) => {
                  const allowed = held.includes(scope);
                  return (
                    <label key={scope} className="flex items-start gap-2 text-sm">
                      <input
                        type="checkbox"
                        name="scope"
                        value={scope}
                        checked={allowed && custom.has(scope)}
                        disabled={!allowed}
                        onChange={(e) => toggle(scope, e.currentTarget.checked)}
                        className="mt-1"
                      />
                      <span>
                        <code className="font-mono">{scope}</code>
                        <span className="block text-xs text-slate-600 dark:text-slate-400">
                          {toolsOfScope(scope).join(', ')}
                          {allowed ? '' : ' (your role cannot grant this)'}
                        </span>
                      </span>
                    </label>
                  );
                })}
              </fieldset>
            ) : null}
          </fieldset>
          <p className="text-sm" data-testid="consent-summary">
            <span className="font-medium">{props.clientName}</span> will be able to use:{' '}
            <span className="font-mono text-xs">{granted.length ? granted.join(', ') : 'nothing yet'}</span>
          </p>
        </>
      ) : (
        <p className="text-sm" data-testid="consent-no-projects">
          You are not a member of any project, so there is nothing to connect this app to. You can only deny.
        </p>
      )}
      <div className="flex flex-wrap justify-end gap-2">
        <button type="submit" name="decision" value="deny" className={btn.secondary}>
          Deny
        </button>
        {project ? (
          <button type="submit" name="decision" value="allow" className={btn.primary} disabled={granted.length === 0}>
            Allow
          </button>
        ) : null}
      </div>
    </form>
  );
}
