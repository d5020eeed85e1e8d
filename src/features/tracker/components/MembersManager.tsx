'use client';
import { useState, type FormEvent } from 'react';
import { useTRPCClient } from '@/lib/trpc/client';
import type { Role } from '@/server/rbac';
import {
  ConfirmButtons,
  ErrorText,
  Field,
  FormOutcome,
  Options,
  ROLE_LABEL,
  btn,
  choicesOf,
  field,
  fieldInline,
} from './ui';
import { useAction } from './use-action';

const ALL_ROLES: Role[] = ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'];

/** The roles `actor` may hand out: only owners grant OWNER. */
function grantableRoles(actor: Role | null): Role[] {
  return actor === 'OWNER' ? ALL_ROLES : ALL_ROLES.filter((r) => r !== 'OWNER');
}

export function AddMemberForm({ projectId, actorRole }: { projectId: string; actorRole: Role | null }) {
  const client = useTRPCClient();
  const { run, error, notice, pending } = useAction();
  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = e.currentTarget;
    const f = new FormData(form);
    const res = await run(
      () =>
        client.tracker.members.add.mutate({
          projectId,
          email: String(f.get('email') ?? ''),
          role: String(f.get('role')) as Role,
        }),
      { notice: (added) => `${added.name} was added as ${ROLE_LABEL[added.role].toLowerCase()}.` },
    );
    if (res) form.reset();
  }
  return (
    <form onSubmit={onSubmit} aria-label="Add a member" className="flex flex-wrap items-end gap-3">
      <Field id="member-email" label="Email of an existing user" className="min-w-64 flex-1">
        <input id="member-email" name="email" type="email" required maxLength={320} className={field} />
      </Field>
      <Field id="member-role" label="Role">
        <select id="member-role" name="role" defaultValue="MEMBER" className={field}>
          <Options choices={choicesOf(grantableRoles(actorRole), ROLE_LABEL)} />
        </select>
      </Field>
      <button type="submit" className={btn.primary} disabled={pending}>
        Add member
      </button>
      <FormOutcome error={error} notice={notice} className="basis-full" />
    </form>
  );
}

export function MemberRowControls({
  projectId,
  member,
  actorRole,
  isSelf,
}: {
  projectId: string;
  member: { userId: string; name: string; role: Role };
  actorRole: Role | null;
  isSelf: boolean;
}) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const [confirming, setConfirming] = useState(false);
  const locked = actorRole !== 'OWNER' && member.role === 'OWNER';
  if (locked) return <span className="text-xs text-slate-500 dark:text-slate-400">Only owners can change owners</span>;
  return (
    <div className="space-y-1">
      <div className="flex flex-wrap items-center justify-end gap-2 sm:flex-nowrap">
        <label className="sr-only" htmlFor={`role-${member.userId}`}>
          Role of {member.name}
        </label>
        <select
          id={`role-${member.userId}`}
          value={member.role}
          disabled={pending}
          className={fieldInline}
          onChange={(e) =>
            void run(() =>
              client.tracker.members.changeRole.mutate({
                projectId,
                userId: member.userId,
                role: e.target.value as Role,
              }),
            )
          }
        >
          <Options choices={choicesOf(grantableRoles(actorRole), ROLE_LABEL)} />
        </select>
        {confirming ? (
          <span role="group" aria-label={`Confirm removing ${member.name}`} className="inline-flex gap-1">
            <ConfirmButtons
              label="Confirm remove"
              pending={pending}
              onConfirm={async () => {
                const res = await run(
                  () => client.tracker.members.remove.mutate({ projectId, userId: member.userId }),
                  { refresh: !isSelf },
                );
                if (res && isSelf) window.location.assign('/projects');
                else setConfirming(false);
              }}
              onCancel={() => setConfirming(false)}
            />
          </span>
        ) : (
          <button
            type="button"
            className={btn.dangerOutline}
            onClick={() => setConfirming(true)}
            aria-label={`Remove ${member.name}`}
          >
            {isSelf ? 'Leave' : 'Remove'}
          </button>
        )}
      </div>
      {error ? (
        <div className="text-right">
          <ErrorText message={error} />
        </div>
      ) : null}
    </div>
  );
}
