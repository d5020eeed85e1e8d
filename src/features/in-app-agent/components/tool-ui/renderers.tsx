'use client';
/**
 * The renderers of the declared result kinds (`tool-declarations.ts`, `render`): issues as product
 * cards and lists linking to their pages, members as a list, a navigation as its link, help pages as
 * titles with excerpts. Each reads its result with zod and returns null when it does not match, so
 * the generic card (and the raw result behind "Result") is what shows then.
 */
import Link from 'next/link';
import { IssueCard, IssueList } from './IssueViews';
import type { ToolRenderers, ToolResultProps } from './types';
import {
  DocsResultSchema,
  humanize,
  IssueListResultSchema,
  IssueResultSchema,
  MembersResultSchema,
  NavigationResultSchema,
} from './results';
import { internalPath } from '../safe-url';

/** "Showing 20 of 34" when the tool returned one page of more. */
function moreLine(shown: number, total: number | undefined, hasMore: boolean | undefined): string | undefined {
  if (total !== undefined && total > shown) return `Showing ${shown} of ${total}.`;
  if (hasMore) return `Showing the first ${shown}; there are more.`;
  return undefined;
}

function IssueListResult({ result }: ToolResultProps) {
  const parsed = IssueListResultSchema.safeParse(result);
  if (!parsed.success) return null;
  const { issues, total, hasMore } = parsed.data;
  return <IssueList issues={issues} more={moreLine(issues.length, total, hasMore)} />;
}

const NOTES: Record<string, string> = {
  create_issue: 'Created',
  assign_issue: 'Assigned',
  close_issue: 'Closed',
};

function IssueResult({ call, result }: ToolResultProps) {
  const parsed = IssueResultSchema.safeParse(result);
  if (!parsed.success) return null;
  const { issue, updated, commentCount } = parsed.data;
  const note =
    call.name === 'update_issue'
      ? `Updated${updated?.length ? `: ${updated.join(', ')}` : ''}`
      : (NOTES[call.name] ?? undefined);
  const comments =
    commentCount !== undefined ? (
      <p className="text-[0.7rem] text-slate-700 dark:text-slate-300">
        {commentCount} comment{commentCount === 1 ? '' : 's'}
      </p>
    ) : null;
  return <IssueCard issue={issue} note={note} extra={comments} />;
}

function MembersResult({ result }: ToolResultProps) {
  const parsed = MembersResultSchema.safeParse(result);
  if (!parsed.success) return null;
  const { members, total, hasMore } = parsed.data;
  const more = moreLine(members.length, total, hasMore);
  return (
    <div data-testid="member-list">
      <ul className="divide-y divide-slate-200 dark:divide-slate-700">
        {members.map((m) => (
          <li key={m.userId} className="flex flex-wrap items-baseline gap-x-2 py-1 first:pt-0 last:pb-0">
            <span className="font-medium">{m.name}</span>
            <span className="text-slate-700 dark:text-slate-300">{m.email}</span>
            <span className="ml-auto rounded border border-slate-400 px-1 text-[0.7rem] dark:border-slate-500">
              {humanize(m.role)}
            </span>
          </li>
        ))}
      </ul>
      {more ? <p className="mt-1 text-[0.7rem] text-slate-600 dark:text-slate-300">{more}</p> : null}
    </div>
  );
}

function NavigationResult({ result }: ToolResultProps) {
  const parsed = NavigationResultSchema.safeParse(result);
  const href = parsed.success ? internalPath(parsed.data.href) : null;
  if (!href) return null;
  return (
    <p>
      Opened{' '}
      <Link href={href} data-testid="navigation-link" className="text-blue-800 underline dark:text-blue-300">
        {href}
      </Link>
    </p>
  );
}

function DocsResult({ result }: ToolResultProps) {
  const parsed = DocsResultSchema.safeParse(result);
  if (!parsed.success) return null;
  if (!parsed.data.results.length) return <p>Nothing found in the help pages.</p>;
  return (
    <ul className="space-y-1" data-testid="docs-results">
      {parsed.data.results.map((r) => (
        <li key={`${r.page}:${r.title}`}>
          <p className="font-medium">{r.title}</p>
          <p className="line-clamp-2 text-slate-700 dark:text-slate-300">{r.excerpt}</p>
        </li>
      ))}
    </ul>
  );
}

/** The product's renderers, by result kind. */
export const PRODUCT_RENDERERS: ToolRenderers = {
  'issue-list': IssueListResult,
  issue: IssueResult,
  members: MembersResult,
  navigation: NavigationResult,
  docs: DocsResult,
};
