'use client';
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { useTRPCClient } from '@/lib/trpc/client';
import type { IssuePriority, IssueStatus } from '../constants';
import {
  ConfirmButtons,
  ErrorText,
  Field,
  MemberOptions,
  PriorityOptions,
  StatusOptions,
  btn,
  field,
  labelText,
} from './ui';
import { useAction } from './use-action';

interface IssueRef {
  projectId: string;
  number: number;
}

/** Edit title, description and priority in place. */
export function IssueEditor({
  issue,
  children,
}: {
  issue: IssueRef & { title: string; body: string; priority: IssuePriority };
  /** The read-only view, shown when not editing. */
  children: React.ReactNode;
}) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const [editing, setEditing] = useState(false);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const f = new FormData(e.currentTarget);
    const ok = await run(() =>
      client.tracker.issues.update.mutate({
        projectId: issue.projectId,
        number: issue.number,
        title: String(f.get('title') ?? ''),
        body: String(f.get('body') ?? ''),
        priority: String(f.get('priority')) as IssuePriority,
      }),
    );
    if (ok) setEditing(false);
  }

  if (!editing) {
    return (
      <div>
        {children}
        <button type="button" className={`${btn.secondary} mt-3`} onClick={() => setEditing(true)}>
          Edit
        </button>
      </div>
    );
  }
  return (
    <form onSubmit={onSubmit} className="space-y-3" aria-label="Edit issue">
      <Field id="edit-title" label="Title">
        <input id="edit-title" name="title" defaultValue={issue.title} required maxLength={200} className={field} />
      </Field>
      <Field id="edit-body" label="Description">
        <textarea id="edit-body" name="body" defaultValue={issue.body} rows={8} maxLength={20000} className={field} />
      </Field>
      <Field id="edit-priority" label="Priority" className="max-w-xs">
        <select id="edit-priority" name="priority" defaultValue={issue.priority} className={field}>
          <PriorityOptions />
        </select>
      </Field>
      <ErrorText message={error} />
      <div className="flex gap-2">
        <button type="submit" className={btn.primary} disabled={pending}>
          Save
        </button>
        <button type="button" className={btn.secondary} onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** Close / reopen, status and assignee. */
export function IssueStateControls({
  issue,
  members,
}: {
  issue: IssueRef & { status: IssueStatus; assigneeId: string | null };
  members: Array<{ id: string; name: string }>;
}) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const ref = { projectId: issue.projectId, number: issue.number };
  const closed = issue.status === 'CLOSED';
  return (
    <div className="space-y-3">
      <div className="flex flex-wrap gap-2">
        <button
          type="button"
          className={btn.secondary}
          disabled={pending}
          onClick={() =>
            void run(() => (closed ? client.tracker.issues.reopen : client.tracker.issues.close).mutate(ref))
          }
        >
          {closed ? 'Reopen issue' : 'Close issue'}
        </button>
      </div>
      <Field id="issue-status-select" label="Status">
        <select
          id="issue-status-select"
          value={issue.status}
          disabled={pending}
          className={field}
          onChange={(e) =>
            void run(() => client.tracker.issues.update.mutate({ ...ref, status: e.target.value as IssueStatus }))
          }
        >
          <StatusOptions />
        </select>
      </Field>
      <Field id="issue-assignee-select" label="Assignee">
        <select
          id="issue-assignee-select"
          value={issue.assigneeId ?? ''}
          disabled={pending}
          className={field}
          onChange={(e) =>
            void run(() => client.tracker.issues.assign.mutate({ ...ref, assigneeId: e.target.value || null }))
          }
        >
          <option value="">Unassigned</option>
          <MemberOptions members={members} />
        </select>
      </Field>
      <ErrorText message={error} />
    </div>
  );
}

/** Replace the issue's labels. */
export function IssueLabelsControl({ issue, all, selected }: { issue: IssueRef; all: string[]; selected: string[] }) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const toggle = (name: string, on: boolean) => {
    const next = on ? [...new Set([...selected, name])] : selected.filter((l) => l !== name);
    void run(() =>
      client.tracker.issues.update.mutate({ projectId: issue.projectId, number: issue.number, labels: next }),
    );
  };
  return (
    <fieldset className="space-y-1" disabled={pending}>
      <legend className={labelText}>Labels</legend>
      <div className="flex flex-wrap gap-x-3 gap-y-1">
        {all.map((l) => (
          <label key={l} className="inline-flex items-center gap-1.5 text-sm">
            <input type="checkbox" checked={selected.includes(l)} onChange={(e) => toggle(l, e.target.checked)} />
            {l}
          </label>
        ))}
      </div>
      <ErrorText message={error} />
    </fieldset>
  );
}

/** Delete with an explicit confirmation step. */
export function DeleteIssueButton({ issue }: { issue: IssueRef }) {
  const client = useTRPCClient();
  const router = useRouter();
  const { run, error, pending } = useAction();
  const [confirming, setConfirming] = useState(false);
  if (!confirming) {
    return (
      <button type="button" className={btn.dangerOutline} onClick={() => setConfirming(true)}>
        Delete issue
      </button>
    );
  }
  return (
    <div
      role="group"
      aria-label="Confirm deletion"
      className="space-y-2 rounded-md border border-red-300 p-3 dark:border-red-800"
    >
      <p className="text-sm">Delete issue #{issue.number} and all its comments? This cannot be undone.</p>
      <div className="flex gap-2">
        <ConfirmButtons
          label="Delete permanently"
          pending={pending}
          onConfirm={async () => {
            const res = await run(() => client.tracker.issues.delete.mutate(issue), { refresh: false });
            if (res) {
              router.push(`/projects/${encodeURIComponent(issue.projectId)}/issues`);
              router.refresh();
            }
          }}
          onCancel={() => setConfirming(false)}
        />
      </div>
      <ErrorText message={error} />
    </div>
  );
}

export function CommentForm({ issue }: { issue: IssueRef }) {
  const client = useTRPCClient();
  const { run, error, pending } = useAction();
  const [body, setBody] = useState('');
  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    if (!body.trim()) return;
    const ok = await run(() => client.tracker.comments.add.mutate({ ...issue, body }));
    if (ok) setBody('');
  }
  return (
    <form onSubmit={onSubmit} className="space-y-2">
      <label htmlFor="comment-body" className={labelText}>
        Add a comment
      </label>
      <textarea
        id="comment-body"
        value={body}
        onChange={(e) => setBody(e.target.value)}
        rows={4}
        maxLength={10000}
        className={field}
      />
      <ErrorText message={error} />
      <button type="submit" className={btn.primary} disabled={pending || !body.trim()}>
        Comment
      </button>
    </form>
  );
}
