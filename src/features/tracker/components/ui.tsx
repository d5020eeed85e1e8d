/** Small presentational pieces shared by the Tracker pages (no client state). */
import Link from 'next/link';
import type { ReactNode } from 'react';
import type { Role } from '@/server/rbac';
import { ISSUE_PRIORITIES, ISSUE_STATUSES, type IssuePriority, type IssueStatus } from '../constants';

export const btn = {
  primary:
    'inline-flex items-center justify-center gap-1 rounded-md bg-blue-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-800 disabled:cursor-not-allowed disabled:opacity-60 dark:bg-blue-600 dark:hover:bg-blue-500',
  secondary:
    'inline-flex items-center justify-center gap-1 rounded-md border border-slate-300 px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-100 disabled:cursor-not-allowed disabled:opacity-60 dark:border-slate-600 dark:text-slate-100 dark:hover:bg-slate-800',
  danger:
    'inline-flex items-center justify-center gap-1 rounded-md bg-red-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-red-800 disabled:cursor-not-allowed disabled:opacity-60',
  dangerOutline:
    'inline-flex items-center justify-center gap-1 rounded-md border border-red-300 px-3 py-1.5 text-sm font-medium text-red-700 hover:bg-red-50 disabled:cursor-not-allowed disabled:opacity-60 dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950',
} as const;

const fieldBase =
  'rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm text-slate-900 placeholder:text-slate-400 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100';
export const field = `block w-full ${fieldBase}`;
/** A field sized to its content, for inline controls in table rows. */
export const fieldInline = `inline-block w-auto ${fieldBase}`;
export const labelText = 'block text-sm font-medium text-slate-700 dark:text-slate-300';
export const card = 'rounded-lg border border-slate-200 bg-white p-4 dark:border-slate-800 dark:bg-slate-900';
export const link = 'text-blue-700 underline-offset-2 hover:underline dark:text-blue-300';

const STATUS_LABEL: Record<IssueStatus, string> = { OPEN: 'Open', IN_PROGRESS: 'In progress', CLOSED: 'Closed' };
export const PRIORITY_LABEL: Record<IssuePriority, string> = {
  LOW: 'Low',
  MEDIUM: 'Medium',
  HIGH: 'High',
  URGENT: 'Urgent',
};
export const ROLE_LABEL: Record<Role, string> = { OWNER: 'Owner', ADMIN: 'Admin', MEMBER: 'Member', VIEWER: 'Viewer' };

const STATUS_CLASS: Record<IssueStatus, string> = {
  OPEN: 'bg-green-100 text-green-800 dark:bg-green-900/60 dark:text-green-200',
  IN_PROGRESS: 'bg-amber-100 text-amber-900 dark:bg-amber-900/60 dark:text-amber-200',
  CLOSED: 'bg-slate-200 text-slate-700 dark:bg-slate-700 dark:text-slate-200',
};
const PRIORITY_CLASS: Record<IssuePriority, string> = {
  LOW: 'text-slate-600 dark:text-slate-400',
  MEDIUM: 'text-slate-800 dark:text-slate-200',
  HIGH: 'text-orange-700 dark:text-orange-300',
  URGENT: 'font-semibold text-red-700 dark:text-red-300',
};

export function StatusBadge({ status }: { status: IssueStatus }) {
  return (
    <span
      data-testid="issue-status"
      data-status={status}
      className={`inline-block whitespace-nowrap rounded-full px-2 py-0.5 text-xs font-medium ${STATUS_CLASS[status]}`}
    >
      {STATUS_LABEL[status]}
    </span>
  );
}

export function PriorityText({ priority }: { priority: IssuePriority }) {
  return <span className={`text-xs ${PRIORITY_CLASS[priority]}`}>{PRIORITY_LABEL[priority]}</span>;
}

export function RoleBadge({ role }: { role: Role | null }) {
  return (
    <span
      data-testid="role-badge"
      className="inline-block rounded-full border border-slate-300 px-2 py-0.5 text-xs font-medium text-slate-700 dark:border-slate-600 dark:text-slate-300"
    >
      {role ? ROLE_LABEL[role] : 'Instance admin'}
    </span>
  );
}

function safeColor(c: string): string {
  return /^#[0-9a-fA-F]{3,8}$/.test(c) ? c : '#6b7280';
}

export function LabelChip({ name, color }: { name: string; color: string }) {
  return (
    <span className="inline-flex items-center gap-1 rounded-full border border-slate-300 px-2 py-0.5 text-xs text-slate-700 dark:border-slate-600 dark:text-slate-300">
      <span
        aria-hidden="true"
        className="inline-block h-2 w-2 rounded-full"
        style={{ backgroundColor: safeColor(color) }}
      />
      {name}
    </span>
  );
}

const dateFmt = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });

/** A timestamp rendered on the server (UTC, stated), with the exact value in `dateTime`. */
export function When({ date, prefix }: { date: Date | null | undefined; prefix?: string }) {
  if (!date) return <span className="text-slate-500 dark:text-slate-400">—</span>;
  return (
    <time dateTime={date.toISOString()} title={date.toISOString()}>
      {prefix}
      {dateFmt.format(date)} UTC
    </time>
  );
}

/** One choice of a select: the value submitted and the text shown. */
export interface Choice {
  value: string;
  label: string;
}

/** `values` as choices, each shown with its entry in `labels`. */
export function choicesOf<V extends string>(values: readonly V[], labels: Record<V, string>): Choice[] {
  return values.map((value) => ({ value, label: labels[value] }));
}

/** The `<option>`s of a select, one per choice, in the order given. */
export function Options({ choices }: { choices: readonly Choice[] }) {
  return (
    <>
      {choices.map((choice) => (
        <option key={choice.value} value={choice.value}>
          {choice.label}
        </option>
      ))}
    </>
  );
}

const STATUS_CHOICES = choicesOf(ISSUE_STATUSES, STATUS_LABEL);
const PRIORITY_CHOICES = choicesOf(ISSUE_PRIORITIES, PRIORITY_LABEL);

/** One `option` per project member (value: user id), for the assignee selects. */
export function MemberOptions({ members }: { members: ReadonlyArray<{ id: string; name: string }> }) {
  return <Options choices={members.map((member) => ({ value: member.id, label: member.name }))} />;
}

/** The `<option>`s of a status select, in workflow order. */
export function StatusOptions() {
  return <Options choices={STATUS_CHOICES} />;
}

/** The `<option>`s of a priority select, lowest first. */
export function PriorityOptions() {
  return <Options choices={PRIORITY_CHOICES} />;
}

/**
 * A form control under its label. The label points at `id`: give the control (the child) the same
 * id. `className` adds to the wrapper's spacing (width, flex).
 */
export function Field({
  id,
  label,
  className,
  children,
}: {
  id: string;
  label: ReactNode;
  className?: string;
  children: ReactNode;
}) {
  return (
    <div className={className ? `${className} space-y-1` : 'space-y-1'}>
      <label htmlFor={id} className={labelText}>
        {label}
      </label>
      {children}
    </div>
  );
}

/**
 * The second step of a destructive action: the button that does it (focused, so Enter confirms)
 * and Cancel, which goes back to the first step.
 */
export function ConfirmButtons({
  label,
  pending,
  onConfirm,
  onCancel,
}: {
  label: string;
  pending: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  return (
    <>
      <button type="button" className={btn.danger} disabled={pending} autoFocus onClick={onConfirm}>
        {label}
      </button>
      <button type="button" className={btn.secondary} onClick={onCancel}>
        Cancel
      </button>
    </>
  );
}

export function NotAllowed({
  projectId,
  what,
  testId = 'not-allowed',
}: {
  projectId: string;
  what: string;
  testId?: string;
}) {
  return (
    <main className="mx-auto max-w-xl py-10" data-testid={testId}>
      <h1 className="text-xl font-semibold">Not allowed</h1>
      <p className="mt-2 text-sm text-slate-700 dark:text-slate-300">
        Your role in this project does not allow you to {what}.
      </p>
      <p className="mt-4 text-sm">
        <Link href={`/projects/${encodeURIComponent(projectId)}/issues`} className={link}>
          Back to the issues
        </Link>
      </p>
    </main>
  );
}

export function PageHeading({ title, children }: { title: ReactNode; children?: ReactNode }) {
  return (
    <div className="mb-4 flex flex-wrap items-center justify-between gap-3">
      <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
      {children ? <div className="flex items-center gap-2">{children}</div> : null}
    </div>
  );
}

/** A page's title with a line or two on what it shows (pages without actions beside the title). */
export function PageIntro({ title, children }: { title: ReactNode; children: ReactNode }) {
  return (
    <div>
      <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
      <p className="text-sm text-slate-600 dark:text-slate-300">{children}</p>
    </div>
  );
}

/** A card section named by its `h2` heading (`headingId` labels the section). */
export function CardSection({ headingId, title, children }: { headingId: string; title: string; children: ReactNode }) {
  return (
    <section className={card} aria-labelledby={headingId}>
      <h2 id={headingId} className="mb-3 text-lg font-semibold">
        {title}
      </h2>
      {children}
    </section>
  );
}

export function ErrorText({ message }: { message: string | null }) {
  if (!message) return null;
  return (
    <p role="alert" className="text-sm text-red-700 dark:text-red-300">
      {message}
    </p>
  );
}

/** What a form's last submit came to, announced when it changes: its error, or what it did. */
export function FormOutcome({
  error,
  notice,
  className,
}: {
  error: string | null;
  notice: string | null;
  className?: string;
}) {
  return (
    <div className={className} aria-live="polite">
      <ErrorText message={error} />
      {notice ? <p className="text-sm text-green-700 dark:text-green-300">{notice}</p> : null}
    </div>
  );
}

/** A column of a `DataTable`: its label, extra classes (alignment, hidden on small screens). */
export interface TableColumn {
  label: string;
  className?: string;
  /** Read by screen readers only (a column of buttons). */
  srOnly?: boolean;
}

/**
 * A Tracker table: scrolls sideways on small screens, a caption for screen readers, one header row
 * (`th scope="col"` per column) and the rows given as children.
 */
export function DataTable({
  caption,
  columns,
  testId,
  children,
}: {
  caption: string;
  columns: Array<TableColumn | null>;
  testId: string;
  children: ReactNode;
}) {
  return (
    <div className="relative overflow-x-auto rounded-lg border border-slate-200 dark:border-slate-800">
      <table className="w-full text-left text-sm" data-testid={testId}>
        <caption className="sr-only">{caption}</caption>
        <thead className="bg-slate-50 text-xs uppercase tracking-wide text-slate-600 dark:bg-slate-900 dark:text-slate-400">
          <tr>
            {columns.map((column) =>
              column ? (
                <th
                  key={column.label}
                  scope="col"
                  className={column.className ? `px-3 py-2 ${column.className}` : 'px-3 py-2'}
                >
                  {column.srOnly ? <span className="sr-only">{column.label}</span> : column.label}
                </th>
              ) : null,
            )}
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-200 dark:divide-slate-800">{children}</tbody>
      </table>
    </div>
  );
}
