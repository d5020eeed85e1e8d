'use client';
import { useState, type FormEvent } from 'react';
import { useTRPCClient } from '@/lib/trpc/client';
import { ErrorText, btn, field, labelText } from './ui';
import { useAction } from './use-action';

export function WebhookForm({ projectId, current }: { projectId: string; current: string | null }) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const [saved, setSaved] = useState<string | null>(null);
  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const url = String(new FormData(e.currentTarget).get('webhookUrl') ?? '').trim();
    setSaved(null);
    const res = await run(() => client.tracker.settings.setWebhook.mutate({ projectId, url: url || null }));
    if (res) setSaved(res.webhookUrl ? 'Webhook URL saved.' : 'Webhook removed.');
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
      <div aria-live="polite">
        <ErrorText message={error} />
        {saved ? <p className="text-sm text-green-700 dark:text-green-300">{saved}</p> : null}
      </div>
      <button type="submit" className={btn.primary} disabled={pending}>
        Save webhook
      </button>
    </form>
  );
}

/** Creates a key and shows its secret exactly once. */
export function CreateKeyForm({ projectId }: { projectId: string }) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const [created, setCreated] = useState<{ name: string; secret: string } | null>(null);
  const [copied, setCopied] = useState(false);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const days = String(f.get('expiresInDays') ?? '');
    setCopied(false);
    const res = await run(() =>
      client.tracker.apiKeys.create.mutate({ projectId, name: String(f.get('name') ?? ''), expiresInDays: days ? Number(days) : undefined }),
    );
    if (res) {
      setCreated({ name: res.key.name, secret: res.secret });
      form.reset();
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
      <form onSubmit={onSubmit} aria-label="Create an API key" className="flex flex-wrap items-end gap-3">
        <div className="min-w-56 flex-1 space-y-1">
          <label htmlFor="key-name" className={labelText}>
            Key name
          </label>
          <input id="key-name" name="name" required maxLength={100} placeholder="e.g. CI bot" className={field} />
        </div>
        <div className="space-y-1">
          <label htmlFor="key-expiry" className={labelText}>
            Expires
          </label>
          <select id="key-expiry" name="expiresInDays" defaultValue="" className={field}>
            <option value="">Never</option>
            <option value="7">In 7 days</option>
            <option value="30">In 30 days</option>
            <option value="90">In 90 days</option>
            <option value="365">In a year</option>
          </select>
        </div>
        <button type="submit" className={btn.primary} disabled={pending}>
          Create key
        </button>
      </form>
      <ErrorText message={error} />
      {created ? (
        <div role="status" data-testid="new-key-secret" className="space-y-2 rounded-md border border-amber-300 bg-amber-50 p-3 dark:border-amber-700 dark:bg-amber-950/40">
          <p className="text-sm font-semibold">Copy the secret of “{created.name}” now: it will not be shown again.</p>
          <p className="text-xs text-slate-700 dark:text-slate-300">
            Anyone with this secret can use the project&apos;s MCP tools. Store it in a secret manager, never in code.
          </p>
          <div className="flex flex-wrap items-center gap-2">
            <label htmlFor="key-secret" className="sr-only">
              Secret
            </label>
            <input id="key-secret" readOnly value={created.secret} className={`${field} flex-1 font-mono text-xs`} onFocus={(e) => e.currentTarget.select()} />
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
      <button type="button" className={btn.dangerOutline} onClick={() => setConfirming(true)} aria-label={`Revoke ${name}`}>
        Revoke
      </button>
    );
  }
  return (
    <span role="group" aria-label={`Confirm revoking ${name}`} className="inline-flex flex-wrap items-center justify-end gap-1">
      <button
        type="button"
        className={btn.danger}
        disabled={pending}
        autoFocus
        onClick={async () => {
          await run(() => client.tracker.apiKeys.revoke.mutate({ projectId, keyId }));
          setConfirming(false);
        }}
      >
        Confirm revoke
      </button>
      <button type="button" className={btn.secondary} onClick={() => setConfirming(false)}>
        Cancel
      </button>
      <ErrorText message={error} />
    </span>
  );
}
