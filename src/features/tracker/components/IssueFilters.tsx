import Link from 'next/link';
import { Field, MemberOptions, Options, StatusOptions, btn, field } from './ui';

/**
 * The issue list's filters as a plain GET form: filters live in the URL, work without JavaScript
 * and can be bookmarked or shared.
 */
export function IssueFilters({
  action,
  values,
  members,
  labels,
}: {
  action: string;
  values: { status: string; assignee: string; label: string; q: string };
  members: Array<{ id: string; name: string }>;
  labels: string[];
}) {
  return (
    <form
      method="get"
      action={action}
      role="search"
      aria-label="Filter issues"
      className="mb-4 grid gap-3 sm:grid-cols-2 lg:grid-cols-[2fr_1fr_1fr_1fr_auto]"
    >
      <Field id="filter-q" label="Search">
        <input
          id="filter-q"
          name="q"
          type="search"
          defaultValue={values.q}
          maxLength={200}
          placeholder="Words in title or description"
          className={field}
        />
      </Field>
      <Field id="filter-status" label="Status">
        <select id="filter-status" name="status" defaultValue={values.status} className={field}>
          <option value="">Any status</option>
          <StatusOptions />
        </select>
      </Field>
      <Field id="filter-assignee" label="Assignee">
        <select id="filter-assignee" name="assignee" defaultValue={values.assignee} className={field}>
          <option value="">Anyone</option>
          <option value="none">Unassigned</option>
          <MemberOptions members={members} />
        </select>
      </Field>
      <Field id="filter-label" label="Label">
        <select id="filter-label" name="label" defaultValue={values.label} className={field}>
          <option value="">Any label</option>
          <Options choices={labels.map((l) => ({ value: l, label: l }))} />
        </select>
      </Field>
      <div className="flex items-end gap-2">
        <button type="submit" className={btn.secondary}>
          Apply
        </button>
        <Link href={action} className="px-1 py-1.5 text-sm text-slate-600 hover:underline dark:text-slate-400">
          Reset
        </Link>
      </div>
    </form>
  );
}
