import Link from 'next/link';
import type { ReactNode } from 'react';
import { ui } from '../settings/styles';
import { Scrollable } from './Scrollable';

/**
 * A table of the evaluation studio: scrolls sideways on a narrow screen, one column heading per
 * name, the rows given; with no rows, the `empty` sentence instead.
 */
export function StudioTable({
  label,
  testId,
  caption,
  columns,
  empty,
  children,
}: {
  /** The scrolling group's name. */
  label: string;
  testId?: string;
  /** Said to screen readers as the table's caption. */
  caption?: string;
  columns: ReactNode[];
  /** Shown instead of the table when set (there are no rows). */
  empty?: string | null;
  children: ReactNode;
}) {
  if (empty) return <p className="text-sm text-slate-600 dark:text-slate-300">{empty}</p>;
  return (
    <Scrollable label={label}>
      <table className="w-full text-left text-sm" data-testid={testId}>
        {caption ? <caption className="sr-only">{caption}</caption> : null}
        <thead>
          <tr className="text-xs text-slate-600 dark:text-slate-300">
            {columns.map((c, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: the columns are fixed
              <th key={i} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </Scrollable>
  );
}

/** A link to a page of the studio (a dataset, an experiment), as the tables show them. */
export function StudioLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <Link href={href} className="text-blue-700 underline dark:text-blue-300">
      {children}
    </Link>
  );
}

/** The studio forms' error, said at once. */
export function StudioError({ message }: { message: string | null }) {
  return message ? (
    <p role="alert" className="text-sm text-red-800 dark:text-red-300">
      {message}
    </p>
  ) : null;
}

/** A labelled select of named things (datasets, experiments), sent as `name`. */
export function NameSelect({
  label,
  name,
  options,
  defaultValue,
  testId,
}: {
  label: string;
  name: string;
  options: Array<{ id: string; name: string }>;
  defaultValue?: string;
  testId: string;
}) {
  return (
    <label className="text-sm">
      <span className={ui.label}>{label}</span>
      <select name={name} defaultValue={defaultValue} className={ui.field} data-testid={testId}>
        {options.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
    </label>
  );
}
