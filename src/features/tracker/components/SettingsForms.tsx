'use client';
import { useState, type FormEvent } from 'react';
import {
  KEY_SCOPE_PRESETS,
  KEY_SCOPES,
  normalizeKeyScopes,
  presetOf,
  READ_ONLY_KEY_SCOPES,
  toolsOfScope,
  type KeyScopePreset,
} from '@/features/mcp/key-scopes';
import { useTRPCClient } from '@/lib/trpc/client';
import type { Scope } from '@/server/rbac';
import { ConfirmButtons, ErrorText, Field, FormOutcome, btn, field, labelText } from './ui';
import { useAction } from './use-action';

export function WebhookForm({ projectId, current }: { projectId: string; current: string | null }) {
  const client = useTRPCClient();
  const { run, error, notice, pending } = useAction();
  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const url = String(new FormData(e.currentTarget).get('webhookUrl') ?? '').trim();
    await run(() => client.tracker.settings.setWebhook.mutate({ projectId, url: url || null }), {
      notice: (saved) => (saved.webhookUrl ? 'Webhook URL saved.' : 'Webhook removed.'),
    });
  }
  return (
    <form onSubmit={onSubmit} className="space-y-2" aria-label="Webhook">
      <label htmlFor="webhook-url" className={labelText}>
        Webhook URL
      </label>
      <input
        id="webhook-url"
        name="webhookUrl"
        type="url"
        inputMode="url"
        placeholder="https://hooks.example.com/…"
        defaultValue={current ?? ''}
        maxLength={2000}
        className={field}
        aria-describedby="webhook-help"
      />
      <p id="webhook-help" className="text-xs text-slate-600 dark:text-slate-400">
        Notifications are POSTed here as JSON. Leave empty to turn them off.
      </p>
      <FormOutcome error={error} notice={notice} />
      <button type="submit" className={btn.primary} disabled={pending}>
        Save webhook
      </button>
    </form>
  );
}

/**
 * A key's scopes as text: the preset's name when they equal one ("Read-only", "Full"), then every
 * scope, so the list says exactly what the key may do. Prop-driven, renders on the server too.
 */
export function KeyScopeList({ scopes }: { scopes: readonly Scope[] }) {
  const preset = presetOf(scopes);
  if (scopes.length === 0) return <span className="text-slate-500 dark:text-slate-400">No scopes</span>;
  return (
    <span className="text-xs">
      {preset ? <span className="block font-medium">{PRESET_LABEL[preset]}</span> : null}
      <span className="font-mono">{scopes.join(', ')}</span>
    </span>
  );
}

const PRESET_LABEL: Record<KeyScopePreset, string> = { 'read-only': 'Read-only', full: 'Full' };

type AccessChoice = KeyScopePreset | 'custom';

const ACCESS_CHOICES: Array<{ value: AccessChoice; label: string; help: string }> = [
  {
    value: 'read-only',
    label: PRESET_LABEL['read-only'],
    help: 'Reads issues, labels, members and the project summary; changes nothing.',
  },
  { value: 'full', label: PRESET_LABEL.full, help: 'Every tool, including delete_issue and notify_webhook.' },
  { value: 'custom', label: 'Choose scopes', help: 'Pick the scopes one by one.' },
];

/** The scopes a choice stands for (the custom choice: the boxes ticked). */
function scopesOfChoice(choice: AccessChoice, custom: ReadonlySet<Scope>): Scope[] {
  return choice === 'custom' ? normalizeKeyScopes(custom) : [...KEY_SCOPE_PRESETS[choice]];
}

/**
 * Creates a key with a preset or hand-picked scopes and an optional expiry, and shows its secret
 * exactly once. `grantableScopes` are the key scopes the creator's role holds: the server refuses
 * anything else, so the form does not offer it.
 */
export function CreateKeyForm(props: { projectId: string; grantableScopes: readonly Scope[] }) {
  const { projectId, grantableScopes } = props;
  const client = useTRPCClient();
  const { run, error, setError, pending } = useAction();
  const [created, setCreated] = useState<{ name: string; secret: string; scopes: Scope[] } | null>(null);
  const [copied, setCopied] = useState(false);
  // Least privilege by default: a new key reads only until someone chooses more.
  const [choice, setChoice] = useState<AccessChoice>('read-only');
  const [custom, setCustom] = useState<ReadonlySet<Scope>>(() => new Set(READ_ONLY_KEY_SCOPES));
  const grantable = new Set(grantableScopes);
  const choiceAllowed = (c: AccessChoice) =>
    c === 'custom' || KEY_SCOPE_PRESETS[c].every((scope) => grantable.has(scope));

  function toggle(scope: Scope, on: boolean) {
    setCustom((prev) => {
      const next = new Set(prev);
      if (on) next.add(scope);
      else next.delete(scope);
      return next;
    });
  }

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const days = String(f.get('expiresInDays') ?? '');
    const scopes = scopesOfChoice(choice, custom);
    setCopied(false);
    if (scopes.length === 0) {
      setError('Choose at least one scope.');
      return;
    }
    const res = await run(() =>
      client.tracker.apiKeys.create.mutate({
        projectId,
        name: String(f.get('name') ?? ''),
        scopes,
        expiresInDays: days ? Number(days) : undefined,
      }),
    );
    if (res) {
      setCreated({ name: res.key.name, secret: res.secret, scopes: res.key.scopes });
      form.reset();
      setChoice('read-only');
      setCustom(new Set(READ_ONLY_KEY_SCOPES));
    }
  }

  async function copy() {
    if (!created) return;
    try {
      await navigator.clipboard.writeText(created.secret);
      setCopied(true);
    } catch {
      setCopied(false);
    }
  }

  return (
    <div className="space-y-4">
      <form onSubmit={onSubmit} aria-label="Create an API key" className="space-y-3">
        <div className="flex flex-wrap items-end gap-3">
          <Field id="key-name" label="Key name" className="min-w-56 flex-1">
            <input id="key-name" name="name" required maxLength={100} placeholder="e.g. CI bot" className={field} />
          </Field>
          <Field id="key-expiry" label="Expires">
            <select id="key-expiry" name="expiresInDays" defaultValue="" className={field}>
              <option value="">Never</option>
              <option value="7">In 7 days</option>
              <option value="30">In 30 days</option>
              <option value="90">In 90 days</option>
              <option value="365">In a year</option>
            </select>
          </Field>
        </div>
        <fieldset className="space-y-2" data-testid="key-access">
          <legend className={labelText}>Access</legend>
          {ACCESS_CHOICES.map((c) => (
            <label key={c.value} className="flex items-start gap-2 text-sm">
              <input
                type="radio"
                name="access"
                value={c.value}
                checked={choice === c.value}
                disabled={!choiceAllowed(c.value)}
                onChange={() => setChoice(c.value)}
                className="mt-1"
              />
              <span>
                <span className="font-medium">{c.label}</span>
                <span className="block text-xs text-slate-600 dark:text-slate-400">{c.help}</span>
              </span>
            </label>
          ))}
          {choice === 'custom' ? (
            <fieldset className="ml-6 space-y-1" data-testid="key-scope-choices">
              <legend className="sr-only">Scopes</legend>
              {KEY_SCOPES.map((scope) => (
                <label key={scope} className="flex items-start gap-2 text-sm">
                  <input
                    type="checkbox"
                    name="scope"
                    value={scope}
                    checked={custom.has(scope)}
                    disabled={!grantable.has(scope)}
                    onChange={(e) => toggle(scope, e.currentTarget.checked)}
                    className="mt-1"
                  />
                  <span>
                    <code className="font-mono">{scope}</code>
                    <span className="block text-xs text-slate-600 dark:text-slate-400">
                      {toolsOfScope(scope).join(', ')}
                      {grantable.has(scope) ? '' : ' (your role cannot grant this)'}
                    </span>
                  </span>
                </label>
              ))}
            </fieldset>
          ) : null}
        </fieldset>
        <button type="submit" className={btn.primary} disabled={pending}>
          Create key
        </button>
      </form>
      <ErrorText message={error} />
      {created ? (
        <div
          role="status"
          data-testid="new-key-secret"
          className="space-y-2 rounded-md border border-amber-300 bg-amber-50 p-3 dark:border-amber-700 dark:bg-amber-950/40"
        >
          <p className="text-sm font-semibold">Copy the secret of “{created.name}” now: it will not be shown again.</p>
          <p className="text-xs text-slate-700 dark:text-slate-300">
            Anyone with this secret can use the project&apos;s MCP tools its scopes allow ({created.scopes.join(', ')}).
            Store it in a secret manager, never in code.
          </p>
          <div className="flex flex-wrap items-center gap-2">
            <label htmlFor="key-secret" className="sr-only">
              Secret
            </label>
            <input
              id="key-secret"
              readOnly
              value={created.secret}
              className={`${field} flex-1 font-mono text-xs`}
              onFocus={(e) => e.currentTarget.select()}
            />
            <button type="button" className={btn.secondary} onClick={() => void copy()}>
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" className={btn.secondary} onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}
    </div>
  );
}

export function RevokeKeyButton({ projectId, keyId, name }: { projectId: string; keyId: string; name: string }) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button
        type="button"
        className={btn.dangerOutline}
        onClick={() => setConfirming(true)}
        aria-label={`Revoke ${name}`}
      >
        Revoke
      </button>
    );
  }
  return (
    <span
      role="group"
      aria-label={`Confirm revoking ${name}`}
      className="inline-flex flex-wrap items-center justify-end gap-1"
    >
      <ConfirmButtons
        label="Confirm revoke"
        pending={pending}
        onConfirm={async () => {
          await run(() => client.tracker.apiKeys.revoke.mutate({ projectId, keyId }));
          setConfirming(false);
        }}
        onCancel={() => setConfirming(false)}
      />
      <ErrorText message={error} />
    </span>
  );
}
