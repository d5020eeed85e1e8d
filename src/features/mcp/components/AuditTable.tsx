/**
 * The MCP tool-call audit trail: filter form and table. Prop-driven and hook-free, so it renders on
 * the server; filters are plain GET query parameters (works without JavaScript).
 */
import Link from 'next/link';
import type { AuditFacets, AuditRow } from '../audit';

export interface AuditFilterValues {
  tool?: string;
  status?: 'OK' | 'ERROR' | 'DENIED';
  runId?: string;
  keyKind?: 'PROJECT' | 'IN_APP_AGENT';
  publicKey?: string;
  userId?: string;
}

/** The filters as GET query parameters (the same names the form submits). */
export function auditQuery(values: AuditFilterValues): URLSearchParams {
  return new URLSearchParams(
    Object.entries(values).filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== ''),
  );
}

const STATUS_STYLE: Record<AuditRow['status'], string> = {
  OK: 'bg-emerald-100 text-emerald-900 dark:bg-emerald-900/40 dark:text-emerald-200',
  ERROR: 'bg-amber-100 text-amber-900 dark:bg-amber-900/40 dark:text-amber-200',
  DENIED: 'bg-rose-100 text-rose-900 dark:bg-rose-900/40 dark:text-rose-200',
};

const field =
  'rounded border border-slate-300 bg-white px-2 py-1 text-sm text-slate-900 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100';

function fmt(d: Date | string): { text: string; iso: string } {
  const date = typeof d === 'string' ? new Date(d) : d;
  return {
    text: `${date.toLocaleString('en-GB', { dateStyle: 'medium', timeStyle: 'medium', timeZone: 'UTC' })} UTC`,
    iso: date.toISOString(),
  };
}

/** A choice that is not among the offered options (e.g. from a shared link) stays selectable. */
function withCurrent(options: FilterOption[], current: string | undefined): FilterOption[] {
  return current && !options.some((o) => o.value === current)
    ? [...options, { value: current, label: current }]
    : options;
}

type FilterOption = { value: string; label: string };

const STATUS_OPTIONS: FilterOption[] = [
  { value: 'OK', label: 'OK' },
  { value: 'ERROR', label: 'Error' },
  { value: 'DENIED', label: 'Denied' },
];
const CALLER_OPTIONS: FilterOption[] = [
  { value: 'PROJECT', label: 'Project keys' },
  { value: 'IN_APP_AGENT', label: 'Assistant' },
];

/** One labelled filter: "any" first, then the options; the current value is preselected. */
function FilterSelect(props: {
  label: string;
  name: string;
  value: string | undefined;
  anyLabel: string;
  options: readonly FilterOption[];
}) {
  return (
    <label className="flex min-w-0 max-w-full flex-col gap-1 text-sm">
      <span>{props.label}</span>
      {/* A long option (a key's name) would make the select as wide: it stays within the screen. */}
      <select name={props.name} defaultValue={props.value ?? ''} className={`${field} max-w-full`}>
        <option value="">{props.anyLabel}</option>
        {props.options.map((o) => (
          <option key={o.value} value={o.value}>
            {o.label}
          </option>
        ))}
      </select>
    </label>
  );
}

export function AuditFilters({
  basePath,
  facets,
  values,
}: {
  basePath: string;
  facets: Pick<AuditFacets, 'tools'> & Partial<Omit<AuditFacets, 'tools'>>;
  values: AuditFilterValues;
}) {
  const tools = withCurrent(
    facets.tools.map((t) => ({ value: t, label: t })),
    values.tool,
  );
  const keys = withCurrent(
    (facets.keys ?? []).map((k) => ({
      value: k.publicKey,
      label: `${k.name} (${k.publicKey})${k.revoked ? ', revoked' : ''}`,
    })),
    values.publicKey,
  );
  const users = withCurrent(
    (facets.users ?? []).map((u) => ({ value: u.id, label: u.name })),
    values.userId,
  );
  const filtered = Object.values(values).some((v) => typeof v === 'string' && v !== '');
  return (
    <form
      method="get"
      action={basePath}
      className="flex flex-wrap items-end gap-3"
      aria-label="Filter the audit trail"
      data-testid="audit-filters"
    >
      <FilterSelect label="Tool" name="tool" value={values.tool} anyLabel="All tools" options={tools} />
      <FilterSelect label="Status" name="status" value={values.status} anyLabel="Any status" options={STATUS_OPTIONS} />
      <FilterSelect
        label="Caller"
        name="keyKind"
        value={values.keyKind}
        anyLabel="Any caller"
        options={CALLER_OPTIONS}
      />
      <FilterSelect label="Project key" name="publicKey" value={values.publicKey} anyLabel="Any key" options={keys} />
      <FilterSelect label="Assistant user" name="userId" value={values.userId} anyLabel="Any user" options={users} />
      <label className="flex min-w-0 max-w-full flex-col gap-1 text-sm">
        <span>Assistant run id</span>
        <input
          name="runId"
          defaultValue={values.runId ?? ''}
          maxLength={100}
          className={`${field} w-64 max-w-full`}
          placeholder="run_…"
        />
      </label>
      <button
        type="submit"
        className="rounded bg-blue-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-800"
      >
        Filter
      </button>
      {filtered ? (
        <Link href={basePath} className="py-1.5 text-sm text-blue-700 underline dark:text-blue-300">
          Clear filters
        </Link>
      ) : null}
    </form>
  );
}

function Preview({ label, text }: { label: string; text: string }) {
  if (!text) return <span className="text-slate-500">—</span>;
  return (
    <details>
      <summary className="cursor-pointer text-slate-700 dark:text-slate-300">
        {label} <span className="sr-only">preview</span>
      </summary>
      <pre className="mt-1 max-w-md overflow-x-auto whitespace-pre-wrap break-all rounded bg-slate-100 p-2 text-xs dark:bg-slate-900">
        {text}
      </pre>
    </details>
  );
}

const FROM_CALLER_STYLE =
  'ml-1 rounded bg-slate-200 px-1 py-0.5 font-sans text-[10px] font-medium uppercase tracking-wide ' +
  'text-slate-700 dark:bg-slate-700 dark:text-slate-200';

/** A mark for text the caller sent, which the server did not check (it may say anything). */
function FromCaller({ what }: { what: string }) {
  return (
    <span
      data-testid="caller-supplied"
      title={`The caller sent this ${what}; it is shown as received (shortened), not checked.`}
      className={FROM_CALLER_STYLE}
    >
      from caller
    </span>
  );
}

/** The tool (a caller's unknown name quoted and marked), its call id (always the caller's) and count. */
function ToolCell({ row }: { row: AuditRow }) {
  return (
    <>
      <div className="font-mono">
        {row.callerSuppliedTool ? <span className="break-all">“{row.tool}”</span> : row.tool}
        {row.callerSuppliedTool ? <FromCaller what="tool name" /> : null}
      </div>
      {row.callCount > 1 ? (
        <div className="mt-1 text-xs font-semibold" data-testid="call-count">
          {row.callCount} calls (counted)
        </div>
      ) : null}
      {row.toolCallId ? (
        <div className="mt-1 text-xs text-slate-600 dark:text-slate-400">
          call id <code className="break-all">{row.toolCallId}</code>
          <FromCaller what="call id" />
        </div>
      ) : null}
    </>
  );
}

const COLUMNS = ['Time', 'Tool', 'Status', 'Caller', 'Run', 'Duration', 'Arguments', 'Result'];

export function AuditTable({ rows }: { rows: AuditRow[] }) {
  if (rows.length === 0) {
    return (
      <p className="text-sm text-slate-600 dark:text-slate-300" data-testid="audit-empty">
        No tool calls match.
      </p>
    );
  }
  return (
    <div className="relative overflow-x-auto">
      <table className="min-w-full border-collapse text-sm" data-testid="audit-table">
        <caption className="sr-only">MCP tool calls, newest first</caption>
        <thead>
          <tr className="border-b border-slate-300 text-left dark:border-slate-700">
            {COLUMNS.map((label) => (
              <th
                key={label}
                scope="col"
                className={label === 'Duration' ? 'px-2 py-2 text-right font-medium' : 'px-2 py-2 font-medium'}
              >
                {label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const t = fmt(r.startedAt);
            return (
              <tr
                key={r.id}
                className="border-b border-slate-200 align-top dark:border-slate-800"
                data-testid="audit-row"
                data-status={r.status}
              >
                <td className="whitespace-nowrap px-2 py-2">
                  <time dateTime={t.iso}>{t.text}</time>
                </td>
                <td className="px-2 py-2">
                  <ToolCell row={r} />
                </td>
                <td className="px-2 py-2">
                  <span className={`rounded px-1.5 py-0.5 text-xs font-semibold ${STATUS_STYLE[r.status]}`}>
                    {r.status}
                  </span>
                  {r.errorCode ? (
                    <div className="mt-1 font-mono text-xs text-slate-600 dark:text-slate-400">{r.errorCode}</div>
                  ) : null}
                </td>
                <td className="px-2 py-2">
                  {r.oauthClient ? (
                    <span data-testid="audit-oauth-client">
                      App “{r.oauthClient.name}”{r.userName ? ` for ${r.userName}` : ''}
                    </span>
                  ) : r.keyKind === 'IN_APP_AGENT' ? (
                    <span>Assistant{r.userName ? ` for ${r.userName}` : ''}</span>
                  ) : r.keyKind === 'PROJECT' ? (
                    <span>Project key{r.keyName ? ` “${r.keyName}”` : ''}</span>
                  ) : (
                    <span className="text-slate-500">Deleted key</span>
                  )}
                  {r.keyPublicKey ? (
                    <div className="font-mono text-xs text-slate-600 dark:text-slate-400">{r.keyPublicKey}</div>
                  ) : null}
                  {r.keyScopes ? (
                    <div className="text-xs text-slate-600 dark:text-slate-400" data-testid="audit-key-scopes">
                      Scopes: <span className="font-mono">{r.keyScopes.length ? r.keyScopes.join(', ') : 'none'}</span>
                    </div>
                  ) : null}
                </td>
                <td className="px-2 py-2 font-mono text-xs">{r.runId ?? <span className="text-slate-500">—</span>}</td>
                <td className="whitespace-nowrap px-2 py-2 text-right tabular-nums">{r.durationMs} ms</td>
                <td className="px-2 py-2">
                  <Preview label="Arguments" text={r.argsPreview} />
                </td>
                <td className="px-2 py-2">
                  <Preview label="Result" text={r.resultPreview} />
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
