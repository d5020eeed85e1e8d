'use client';
/**
 * "Retention" in the project's settings: how long the assistant's conversations are kept after
 * their last activity (with everything under them; the housekeeping purges older ones), and
 * whether e-mail addresses and phone numbers are masked in what is stored, on top of secrets, which
 * always are. Below it, one member's assistant data (MemberData.tsx).
 */
import type { inferRouterOutputs } from '@trpc/server';
import { type FormEvent, useState } from 'react';
import { type AppRouter, useTRPCClient } from '../../host-client';
import { messageOf, Outcome } from './Outcome';
import { ui } from './styles';

export type DataPolicyData = inferRouterOutputs<AppRouter>['agent']['dataPolicy']['get'];

/** Longest retention accepted (as the server's). */
const MAX_DAYS = 36_500;

export function AssistantRetention({ projectId, initial }: { projectId: string; initial: DataPolicyData }) {
  const client = useTRPCClient();
  const [policy, setPolicy] = useState(initial);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const text = String(form.get('retentionDays') ?? '').trim();
    const days = text ? Number(text) : null;
    if (days !== null && (!Number.isInteger(days) || days < 1 || days > MAX_DAYS)) {
      setNotice(null);
      setError(
        `Keep conversations for a whole number of days from 1 to ${MAX_DAYS.toLocaleString('en-US')}, or leave it empty.`,
      );
      return;
    }
    setPending(true);
    setError(null);
    try {
      const saved = await client.agent.dataPolicy.set.mutate({
        projectId,
        retentionDays: days,
        maskContacts: form.get('maskContacts') === 'on',
      });
      setPolicy(saved);
      setNotice(
        saved.retentionDays === null
          ? 'Saved. Conversations are kept until they are deleted.'
          : `Saved. Conversations idle for more than ${saved.retentionDays} day${saved.retentionDays === 1 ? '' : 's'} are deleted.`,
      );
    } catch (err) {
      setNotice(null);
      setError(messageOf(err, 'The retention could not be saved.'));
    } finally {
      setPending(false);
    }
  }

  return (
    <form onSubmit={onSubmit} className="space-y-3" data-testid="retention-form">
      <div>
        <label htmlFor="retention-days" className={ui.label}>
          Keep assistant conversations for (days)
        </label>
        <input
          id="retention-days"
          name="retentionDays"
          inputMode="numeric"
          autoComplete="off"
          defaultValue={policy.retentionDays ?? ''}
          placeholder="Until deleted"
          aria-describedby="retention-days-help"
          data-testid="retention-days"
          className={`mt-1 max-w-40 ${ui.field}`}
        />
        <p id="retention-days-help" className={`mt-1 ${ui.help}`}>
          Counted from a conversation&apos;s last activity. Older conversations are deleted with their messages,
          approvals and feedback, and the previews of their tool calls are removed from the audit trail. Empty: kept
          until deleted.
        </p>
      </div>
      <div className="flex items-start gap-2">
        <input
          id="retention-mask-contacts"
          name="maskContacts"
          type="checkbox"
          defaultChecked={policy.maskContacts}
          aria-describedby="retention-mask-help"
          data-testid="retention-mask-contacts"
          className="mt-1"
        />
        <div>
          <label htmlFor="retention-mask-contacts" className={ui.label}>
            Also mask e-mail addresses and phone numbers
          </label>
          <p id="retention-mask-help" className={ui.help}>
            In what is stored and exported from now on. API keys, tokens and passwords are always masked. The answer
            being written still sees them; later answers read the masked text.
          </p>
        </div>
      </div>
      <Outcome error={error} notice={notice} testId="retention-outcome" />
      <button type="submit" className={ui.primary} disabled={pending} data-testid="retention-save">
        Save retention
      </button>
    </form>
  );
}
