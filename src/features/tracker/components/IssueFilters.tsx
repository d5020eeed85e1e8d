import Link from 'next/link';
import { StatusOptions, btn, field, labelText, MemberOptions } from './ui';

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
      <div className="space-y-1">
        <label htmlFor="filter-q" className={labelText}>
          Search
        </label>
        <input
          id="filter-q"
          name="q"
          type="search"
          defaultValue={values.q}
          maxLength={200}
          placeholder="Words in title or description"
          className={field}
        />
      </div>
      <div className="space-y-1">
        <label htmlFor="filter-status" className={labelText}>
          Status
        </label>
        <select id="filter-status" name="status" defaultValue={values.status} className={field}>
          <option value="">Any status</option>
          <StatusOptions />
        </select>
      </div>
      <div className="space-y-1">
        <label htmlFor="filter-assignee" className={labelText}>
          Assignee
        </label>
        <select id="filter-assignee" name="assignee" defaultValue={values.assignee} className={field}>
          <option value="">Anyone</option>
          <option value="none">Unassigned</option>
          <MemberOptions members={members} />
        </select>
      </div>
      <div className="space-y-1">
        <label htmlFor="filter-label" className={labelText}>
          Label
        </label>
        <select id="filter-label" name="label" defaultValue={values.label} className={field}>
          <option value="">Any label</option>
          {labels.map((l) => (
            <option key={l} value={l}>
              {l}
            </option>
          ))}
        </select>
      </div>
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
