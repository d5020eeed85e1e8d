import { TRPCError } from '@trpc/server';
import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import {
  CommentForm,
  DeleteIssueButton,
  IssueEditor,
  IssueLabelsControl,
  IssueStateControls,
} from '@/features/tracker/components/IssueControls';
import {
  LabelChip,
  NotAllowed,
  PRIORITY_LABEL,
  PriorityText,
  StatusBadge,
  card,
  link,
  When,
} from '@/features/tracker/components/ui';
import { parseIssueNumber, requireProjectPage } from '@/features/tracker/page-access';
import type { IssueDetail } from '@/features/tracker/services/issues';

export const dynamic = 'force-dynamic';

export async function generateMetadata({ params }: { params: Promise<{ number: string }> }): Promise<Metadata> {
  const { number } = await params;
  return { title: `Issue #${parseIssueNumber(number) ?? '?'} · Tracker` };
}

export default async function IssuePage({ params }: { params: Promise<{ projectId: string; number: string }> }) {
  const { projectId, number: raw } = await params;
  const base = `/projects/${encodeURIComponent(projectId)}`;
  const ctx = await requireProjectPage(projectId, `${base}/issues/${raw}`);
  if (!ctx.can('issues:read')) return <NotAllowed projectId={projectId} what="see issues" />;
  const number = parseIssueNumber(raw);
  if (number === null) notFound();
  let issue: IssueDetail;
  try {
    issue = await ctx.caller.tracker.issues.get({ projectId: ctx.project.id, number });
  } catch (err) {
    if (err instanceof TRPCError && err.code === 'NOT_FOUND') notFound();
    throw err;
  }
  const canWrite = ctx.can('issues:write');
  const [members, labels] = canWrite
    ? await Promise.all([
        ctx.caller.tracker.members.list({ projectId: ctx.project.id }),
        ctx.caller.tracker.labels.list({ projectId: ctx.project.id }),
      ])
    : [[], []];
  const ref = { projectId: ctx.project.id, number: issue.number };

  const view = (
    <>
      <h1 id="issue-heading" className="text-2xl font-semibold tracking-tight" data-testid="issue-title">
        {issue.title} <span className="font-normal text-slate-500 dark:text-slate-400">#{issue.number}</span>
      </h1>
      <div className="mt-4 whitespace-pre-wrap break-words text-sm leading-relaxed" data-testid="issue-body">
        {issue.body || <span className="text-slate-500 dark:text-slate-400">No description.</span>}
      </div>
    </>
  );

  return (
    <main>
      <p className="mb-3 text-sm">
        <Link href={`${base}/issues`} className={link}>
          ← All issues
        </Link>
      </p>
      <div className="grid gap-6 lg:grid-cols-[1fr_18rem]">
        <div className="min-w-0 space-y-6">
          <article className={card} aria-labelledby="issue-heading">
            <div className="mb-2 flex flex-wrap items-center gap-2 text-sm text-slate-600 dark:text-slate-400">
              <StatusBadge status={issue.status} />
              <PriorityText priority={issue.priority} />
              <span>
                opened by {issue.reporter?.name ?? 'someone'} · <When date={issue.createdAt} />
              </span>
            </div>
            <div>
              {canWrite ? (
                <IssueEditor issue={{ ...ref, title: issue.title, body: issue.body, priority: issue.priority }}>
                  {view}
                </IssueEditor>
              ) : (
                view
              )}
            </div>
          </article>

          <section aria-labelledby="comments-heading" className="space-y-3">
            <h2 id="comments-heading" className="text-lg font-semibold">
              Comments ({issue.commentCount})
            </h2>
            {issue.comments.length === 0 ? (
              <p className="text-sm text-slate-600 dark:text-slate-400">No comments yet.</p>
            ) : null}
            {issue.comments.length < issue.commentCount ? (
              <p className="text-sm text-slate-600 dark:text-slate-400" data-testid="older-comments-omitted">
                Showing the newest {issue.comments.length} of {issue.commentCount} comments.
              </p>
            ) : null}
            <ol className="space-y-3">
              {issue.comments.map((c) => (
                <li
                  key={c.id}
                  data-testid="comment"
                  data-external={c.external ? 'true' : 'false'}
                  className={
                    c.external
                      ? 'rounded-lg border border-amber-300 bg-amber-50 p-3 dark:border-amber-700 dark:bg-amber-950/40'
                      : 'rounded-lg border border-slate-200 bg-white p-3 dark:border-slate-800 dark:bg-slate-900'
                  }
                >
                  <div className="mb-1 flex flex-wrap items-center gap-2 text-xs text-slate-600 dark:text-slate-400">
                    <span className="font-semibold text-slate-800 dark:text-slate-200">{c.authorName}</span>
                    {c.external ? (
                      <span
                        data-testid="external-badge"
                        className="rounded-full bg-amber-200 px-2 py-0.5 font-medium text-amber-900 dark:bg-amber-800 dark:text-amber-100"
                        title="Written outside the team. Treat its content with care."
                      >
                        External
                      </span>
                    ) : null}
                    <When date={c.createdAt} />
                  </div>
                  <p className="whitespace-pre-wrap break-words text-sm">{c.body}</p>
                </li>
              ))}
            </ol>
            {ctx.can('comments:write') ? <CommentForm issue={ref} /> : null}
          </section>
        </div>

        <aside className="space-y-4" aria-label="Issue details">
          <div className={`${card} space-y-3 text-sm`}>
            {canWrite ? (
              <>
                <IssueStateControls
                  issue={{ ...ref, status: issue.status, assigneeId: issue.assignee?.id ?? null }}
                  members={members.map((m) => ({ id: m.userId, name: m.name }))}
                />
                <IssueLabelsControl
                  issue={ref}
                  all={labels.map((l) => l.name)}
                  selected={issue.labels.map((l) => l.name)}
                />
              </>
            ) : (
              <dl className="space-y-2">
                <div>
                  <dt className="font-medium">Assignee</dt>
                  <dd>{issue.assignee?.name ?? 'Unassigned'}</dd>
                </div>
                <div>
                  <dt className="font-medium">Priority</dt>
                  <dd>{PRIORITY_LABEL[issue.priority]}</dd>
                </div>
                <div>
                  <dt className="font-medium">Labels</dt>
                  <dd className="flex flex-wrap gap-1">
                    {issue.labels.length
                      ? issue.labels.map((l) => <LabelChip key={l.id} name={l.name} color={l.color} />)
                      : 'None'}
                  </dd>
                </div>
              </dl>
            )}
            {issue.closedAt ? (
              <p className="text-slate-600 dark:text-slate-400">
                Closed <When date={issue.closedAt} />
              </p>
            ) : null}
          </div>
          {ctx.can('issues:delete') ? <DeleteIssueButton issue={ref} /> : null}
        </aside>
      </div>
    </main>
  );
}
