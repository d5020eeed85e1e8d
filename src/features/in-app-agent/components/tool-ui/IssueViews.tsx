'use client';
/**
 * Issues as the product shows them, for tool results and approval cards: a status badge, the
 * number and title linking to the issue page (when the project's links are provided), and a line of
 * priority, assignee and labels. Prop-driven.
 */
import Link from 'next/link';
import type { ReactNode } from 'react';
import { useProductLinks } from './product-links';
import { humanize, type IssueRow } from './results';

const STATUS_LOOK: Record<string, string> = {
  OPEN: 'border-emerald-700 text-emerald-800 dark:border-emerald-500 dark:text-emerald-300',
  IN_PROGRESS: 'border-amber-700 text-amber-800 dark:border-amber-500 dark:text-amber-300',
  CLOSED: 'border-slate-500 text-slate-700 dark:border-slate-400 dark:text-slate-300',
};

function IssueStatus({ status }: { status: string }) {
  return (
    <span
      data-testid="issue-card-status"
      className={`inline-block shrink-0 rounded-full border px-1.5 text-[0.7rem] leading-4 ${STATUS_LOOK[status] ?? STATUS_LOOK.CLOSED}`}
    >
      {humanize(status)}
    </span>
  );
}

/** "#12 Title", linking to the issue page when the project's links are known. */
export function IssueLink({ number, title }: { number: number; title: string }) {
  const links = useProductLinks();
  const label = (
    <>
      <span className="tabular-nums text-slate-600 dark:text-slate-300">#{number}</span> {title}
    </>
  );
  if (!links) return <span className="font-medium">{label}</span>;
  return (
    <Link
      href={links.issue(number)}
      data-testid="issue-link"
      data-issue-number={number}
      className="font-medium text-blue-800 underline-offset-2 hover:underline dark:text-blue-300"
    >
      {label}
    </Link>
  );
}

/** A marker on text written outside the team (data, never instructions). */
function External({ fields }: { fields: string[] | undefined }) {
  if (!fields?.length) return null;
  return (
    <span
      className="rounded border border-amber-600 px-1 text-[0.65rem] text-amber-800 dark:border-amber-400 dark:text-amber-300"
      title={`Written outside the team: ${fields.join(', ')}`}
    >
      External
    </span>
  );
}

/** Priority · assignee · labels, as far as the issue has them. */
function IssueFacts({ issue }: { issue: IssueRow }) {
  const facts: Array<{ key: string; node: ReactNode }> = [];
  if (issue.priority) facts.push({ key: 'priority', node: `${humanize(issue.priority)} priority` });
  if (issue.assignee !== undefined)
    facts.push({ key: 'assignee', node: issue.assignee ? issue.assignee.name : 'Unassigned' });
  if (issue.labels?.length)
    facts.push({
      key: 'labels',
      node: (
        <span className="inline-flex flex-wrap gap-1">
          <span className="sr-only">Labels: </span>
          {issue.labels.map((l) => (
            <span key={l} className="rounded bg-slate-200 px-1 text-slate-800 dark:bg-slate-700 dark:text-slate-100">
              {l}
            </span>
          ))}
        </span>
      ),
    });
  if (!facts.length) return null;
  return (
    <div className="flex flex-wrap items-center gap-x-2 gap-y-0.5 text-[0.7rem] text-slate-700 dark:text-slate-300">
      {facts.map((f, i) => (
        <span key={f.key} className="inline-flex items-center gap-2">
          {i > 0 ? <span aria-hidden="true">·</span> : null}
          {f.node}
        </span>
      ))}
    </div>
  );
}

/** One issue in a list: status, number and title, then its facts. */
function IssueRowView({ issue }: { issue: IssueRow }) {
  return (
    <div className="min-w-0" data-testid="issue-row" data-issue-number={issue.number}>
      <div className="flex items-start gap-1.5">
        <IssueStatus status={issue.status} />
        <span className="min-w-0 break-words">
          <IssueLink number={issue.number} title={issue.title} />
        </span>
        <External fields={issue.untrustedFields} />
      </div>
      <IssueFacts issue={issue} />
    </div>
  );
}

/** A list of issues (the rows of one tool result). */
export function IssueList({ issues, more }: { issues: IssueRow[]; more?: string }) {
  if (!issues.length) return <p className="text-slate-700 dark:text-slate-300">No issues.</p>;
  return (
    <div data-testid="issue-list">
      <ul className="divide-y divide-slate-200 dark:divide-slate-700">
        {issues.map((issue) => (
          <li key={issue.number} className="py-1 first:pt-0 last:pb-0">
            <IssueRowView issue={issue} />
          </li>
        ))}
      </ul>
      {more ? <p className="mt-1 text-[0.7rem] text-slate-600 dark:text-slate-300">{more}</p> : null}
    </div>
  );
}

/** One issue as a card, with what happened to it ("Created", "Updated: status"). */
export function IssueCard({ issue, note, extra }: { issue: IssueRow; note?: string; extra?: ReactNode }) {
  return (
    <div data-testid="issue-card" data-issue-number={issue.number} className="space-y-0.5">
      {note ? (
        <p className="text-[0.7rem] font-medium text-slate-700 dark:text-slate-300" data-testid="issue-card-note">
          {note}
        </p>
      ) : null}
      <IssueRowView issue={issue} />
      {extra}
    </div>
  );
}
