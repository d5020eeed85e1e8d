'use client';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { errorMessage, useTRPCClient } from '@/lib/trpc/client';
import type { IssuePriority } from '../constants';
import { ErrorText, Field, MemberOptions, PriorityOptions, btn, field, labelText } from './ui';

export function NewIssueForm({
  projectId,
  members,
  labels,
}: {
  projectId: string;
  members: Array<{ id: string; name: string }>;
  labels: string[];
}) {
  const client = useTRPCClient();
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const title = String(f.get('title') ?? '').trim();
    if (!title) {
      setError('Title is required.');
      return;
    }
    setPending(true);
    setError(null);
    try {
      const assignee = String(f.get('assignee') ?? '');
      const issue = await client.tracker.issues.create.mutate({
        projectId,
        title,
        body: String(f.get('body') ?? ''),
        priority: String(f.get('priority') ?? 'MEDIUM') as IssuePriority,
        assigneeId: assignee || null,
        labels: f.getAll('labels').map(String),
      });
      router.push(`/projects/${encodeURIComponent(projectId)}/issues/${issue.number}`);
      router.refresh();
    } catch (err) {
      setError(errorMessage(err));
      setPending(false);
    }
  }

  return (
    <form onSubmit={onSubmit} className="max-w-2xl space-y-4" aria-label="New issue">
      <Field id="issue-title" label="Title">
        <input id="issue-title" name="title" required maxLength={200} className={field} autoFocus />
      </Field>
      <Field id="issue-body" label="Description">
        <textarea id="issue-body" name="body" rows={8} maxLength={20000} className={field} />
      </Field>
      <div className="grid gap-4 sm:grid-cols-2">
        <Field id="issue-priority" label="Priority">
          <select id="issue-priority" name="priority" defaultValue="MEDIUM" className={field}>
            <PriorityOptions />
          </select>
        </Field>
        <Field id="issue-assignee" label="Assignee">
          <select id="issue-assignee" name="assignee" defaultValue="" className={field}>
            <option value="">Unassigned</option>
            <MemberOptions members={members} />
          </select>
        </Field>
      </div>
      {labels.length ? (
        <fieldset className="space-y-1">
          <legend className={labelText}>Labels</legend>
          <div className="flex flex-wrap gap-3">
            {labels.map((l) => (
              <label key={l} className="inline-flex items-center gap-1.5 text-sm">
                <input type="checkbox" name="labels" value={l} />
                {l}
              </label>
            ))}
          </div>
        </fieldset>
      ) : null}
      <ErrorText message={error} />
      <div className="flex gap-2">
        <button type="submit" className={btn.primary} disabled={pending}>
          {pending ? 'Creating…' : 'Create issue'}
        </button>
        <button type="button" className={btn.secondary} onClick={() => router.back()}>
          Cancel
        </button>
      </div>
    </form>
  );
}
