import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { IssueFilters } from '@/features/tracker/components/IssueFilters';
import {
  LabelChip,
  PageHeading,
  PriorityText,
  StatusBadge,
  DataTable,
  btn,
  link,
  When,
} from '@/features/tracker/components/ui';
import { NotAllowed } from '@/features/tracker/components/ui';
import { type ProjectQueryPageProps, requireProjectPage, type SearchParams } from '@/features/tracker/page-access';
import { ISSUE_STATUSES, type IssueStatus } from '@/features/tracker/constants';
import { ListIssuesInput } from '@/features/tracker/services/issues';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Issues · Tracker' };

const PAGE_SIZE = 25;

function one(sp: SearchParams, key: string, max = 200): string | undefined {
  const v = sp[key];
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s.slice(0, max) : undefined;
}

export default async function IssuesPage({ params, searchParams }: ProjectQueryPageProps) {
  const { projectId } = await params;
  const sp = await searchParams;
  const base = `/projects/${encodeURIComponent(projectId)}`;
  const query = new URLSearchParams(
    Object.entries(sp).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])),
  ).toString();
  const ctx = await requireProjectPage(projectId, `${base}/issues${query ? `?${query}` : ''}`);
  if (!ctx.can('issues:read')) return <NotAllowed projectId={projectId} what="see issues" />;

  const statusParam = one(sp, 'status');
  const status = (ISSUE_STATUSES as readonly string[]).includes(statusParam ?? '')
    ? (statusParam as IssueStatus)
    : undefined;
  const assigneeParam = one(sp, 'assignee', 64);
  const label = one(sp, 'label', 50);
  const q = one(sp, 'q', 200);
  const pageNo = Math.min(Math.max(Number.parseInt(one(sp, 'page', 6) ?? '1', 10) || 1, 1), 10_000);

  // Filter values come from the URL: one the service would refuse (e.g. a NUL) is a 404, not a 500.
  const filters = ListIssuesInput.safeParse({
    status,
    assigneeId: assigneeParam === 'none' ? null : assigneeParam,
    label,
    search: q,
    offset: (pageNo - 1) * PAGE_SIZE,
    limit: PAGE_SIZE,
  });
  if (!filters.success) notFound();

  const [members, labels, page] = await Promise.all([
    ctx.caller.tracker.members.list({ projectId: ctx.project.id }),
    ctx.caller.tracker.labels.list({ projectId: ctx.project.id }),
    ctx.caller.tracker.issues.list({ ...filters.data, projectId: ctx.project.id }),
  ]);
  const filtered = Boolean(status || assigneeParam || label || q);
  const pageHref = (n: number) => {
    const u = new URLSearchParams();
    if (status) u.set('status', status);
    if (assigneeParam) u.set('assignee', assigneeParam);
    if (label) u.set('label', label);
    if (q) u.set('q', q);
    if (n > 1) u.set('page', String(n));
    const s = u.toString();
    return `${base}/issues${s ? `?${s}` : ''}`;
  };

  return (
    <main>
      <PageHeading title="Issues">
        {ctx.can('issues:write') ? (
          <Link href={`${base}/issues/new`} className={btn.primary} data-testid="new-issue">
            New issue
          </Link>
        ) : null}
      </PageHeading>

      <IssueFilters
        action={`${base}/issues`}
        values={{ status: status ?? '', assignee: assigneeParam ?? '', label: label ?? '', q: q ?? '' }}
        members={members.map((m) => ({ id: m.userId, name: m.name }))}
        labels={labels.map((l) => l.name)}
      />

      <p className="mb-2 text-sm text-slate-600 dark:text-slate-400" aria-live="polite" data-testid="issue-count">
        {page.total} {page.total === 1 ? 'issue' : 'issues'}
        {filtered ? (page.total === 1 ? ' matches the filters' : ' match the filters') : ''}
      </p>

      {page.issues.length === 0 ? (
        <div className="rounded-lg border border-dashed border-slate-300 p-8 text-center text-sm text-slate-600 dark:border-slate-700 dark:text-slate-400">
          {filtered ? (
            <>
              No issues match.{' '}
              <Link href={`${base}/issues`} className={link}>
                Clear the filters
              </Link>
            </>
          ) : (
            'No issues yet.'
          )}
        </div>
      ) : (
        <DataTable
          caption="Issues, newest first"
          testId="issue-table"
          columns={[
            { label: '#' },
            { label: 'Title' },
            { label: 'Status' },
            { label: 'Priority' },
            { label: 'Assignee' },
            { label: 'Created', className: 'hidden md:table-cell' },
          ]}
        >
          {page.issues.map((i) => (
            <tr key={i.id} data-testid="issue-row" data-number={i.number}>
              <td className="px-3 py-2 text-slate-500 dark:text-slate-400">{i.number}</td>
              <td className="px-3 py-2">
                <Link href={`${base}/issues/${i.number}`} className="font-medium hover:underline">
                  {i.title}
                </Link>
                {i.labels.length ? (
                  <span className="ml-2 inline-flex flex-wrap gap-1 align-middle">
                    {i.labels.map((l) => (
                      <LabelChip key={l.id} name={l.name} color={l.color} />
                    ))}
                  </span>
                ) : null}
              </td>
              <td className="px-3 py-2">
                <StatusBadge status={i.status} />
              </td>
              <td className="px-3 py-2">
                <PriorityText priority={i.priority} />
              </td>
              <td className="px-3 py-2">
                {i.assignee?.name ?? <span className="text-slate-500 dark:text-slate-400">Unassigned</span>}
              </td>
              <td className="hidden whitespace-nowrap px-3 py-2 text-slate-600 md:table-cell dark:text-slate-400">
                <When date={i.createdAt} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}

      {page.total > PAGE_SIZE ? (
        <nav aria-label="Pages" className="mt-4 flex items-center justify-between text-sm">
          {pageNo > 1 ? (
            <Link href={pageHref(pageNo - 1)} className={btn.secondary}>
              Previous
            </Link>
          ) : (
            <span />
          )}
          <span>
            Page {pageNo} of {Math.ceil(page.total / PAGE_SIZE)}
          </span>
          {page.nextOffset !== null ? (
            <Link href={pageHref(pageNo + 1)} className={btn.secondary}>
              Next
            </Link>
          ) : (
            <span />
          )}
        </nav>
      ) : null}
    </main>
  );
}
