'use client';
/**
 * What a held call will change, on its approval card: for an issue change, the issue's current
 * values (read on the server when the call was held, the interrupt's `preview`) beside the proposed
 * ones (the edited arguments while the user edits them); for a delete, the issue that will go; for
 * the webhook, the exact text that will be sent. Prop-driven: the panel, history and review show it
 * alike.
 */
import type { ReactNode } from 'react';
import type { ApprovalPreview, IssueSnapshot } from '../schema';
import { IssueCard, IssueLink } from './tool-ui/IssueViews';
import { humanize } from './tool-ui/results';

type Args = Record<string, unknown>;

interface Row {
  field: string;
  now: ReactNode;
  after: ReactNode;
}

const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
const labelsText = (labels: unknown) =>
  Array.isArray(labels) ? (labels.length ? labels.map(String).join(', ') : 'None') : text(labels);
const excerpt = (v: unknown) => {
  const s = text(v) ?? '';
  return s.length > 160 ? `${s.slice(0, 159)}…` : s || '(empty)';
};

/** The fields of an issue a call changes: its current value beside the proposed one. */
function issueRows(
  tool: string,
  issue: IssueSnapshot,
  args: Args,
  preview: ApprovalPreview & { kind: 'issue' },
): Row[] {
  const rows: Row[] = [];
  if (tool === 'close_issue') rows.push({ field: 'Status', now: humanize(issue.status), after: humanize('CLOSED') });
  if (tool === 'assign_issue' && 'assignee' in args) {
    const proposed = args.assignee;
    const after =
      proposed === null
        ? 'Unassigned'
        : preview.proposedAssignee && preview.proposedAssignee !== null
          ? preview.proposedAssignee.name
          : `${text(proposed)} (not a member of this project)`;
    rows.push({ field: 'Assignee', now: issue.assignee?.name ?? 'Unassigned', after });
  }
  if (tool === 'update_issue') {
    if ('title' in args) rows.push({ field: 'Title', now: issue.title, after: text(args.title) });
    if ('status' in args)
      rows.push({ field: 'Status', now: humanize(issue.status), after: humanize(text(args.status)) });
    if ('priority' in args)
      rows.push({ field: 'Priority', now: humanize(issue.priority), after: humanize(text(args.priority)) });
    if ('labels' in args) rows.push({ field: 'Labels', now: labelsText(issue.labels), after: labelsText(args.labels) });
    if ('body' in args) rows.push({ field: 'Description', now: '(current text)', after: excerpt(args.body) });
  }
  return rows;
}

function ChangeTable({ rows }: { rows: Row[] }) {
  return (
    <table className="mt-1 w-full border-collapse text-xs" data-testid="approval-changes-table">
      <caption className="sr-only">Values before and after the change</caption>
      <thead>
        <tr className="text-left text-slate-700 dark:text-slate-300">
          <th scope="col" className="py-0.5 pr-2 font-medium">
            Field
          </th>
          <th scope="col" className="py-0.5 pr-2 font-medium">
            Before
          </th>
          <th scope="col" className="py-0.5 font-medium">
            After
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => {
          const same = typeof r.now === 'string' && r.now === r.after;
          return (
            <tr
              key={r.field}
              data-testid="approval-change"
              data-field={r.field}
              className="border-t border-slate-200 align-top dark:border-slate-700"
            >
              <th scope="row" className="py-0.5 pr-2 text-left font-medium">
                {r.field}
              </th>
              <td className="break-words py-0.5 pr-2" data-testid="approval-change-before">
                {r.now}
              </td>
              <td className="break-words py-0.5 font-medium" data-testid="approval-change-after">
                {r.after}
                {same ? <span className="font-normal text-slate-600 dark:text-slate-300"> (unchanged)</span> : null}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

export function ApprovalChanges({
  toolName,
  args,
  preview,
}: {
  toolName: string;
  /** The arguments the call would run with (the edited ones while the user edits them). */
  args: Args;
  preview?: ApprovalPreview;
}) {
  if (toolName === 'notify_webhook' && typeof args.message === 'string') {
    return (
      <div className="mt-2 text-xs" data-testid="approval-changes" data-kind="message">
        <p className="font-medium">This exact text will be sent to the project&apos;s webhook:</p>
        <pre
          data-testid="approval-message"
          className="mt-1 max-h-48 overflow-auto whitespace-pre-wrap break-words rounded border border-slate-300 bg-slate-50 p-1.5 font-mono dark:border-slate-600 dark:bg-slate-800"
        >
          {args.message}
        </pre>
      </div>
    );
  }
  if (!preview) return null;
  const number = typeof args.number === 'number' ? args.number : null;
  const named = preview.kind === 'issue' ? preview.issue.number : preview.number;
  if (number !== null && number !== named) {
    return (
      <p className="mt-2 text-xs" data-testid="approval-changes" data-kind="other-issue">
        The edited arguments name issue #{number}; its current values were not read (the request was for #{named}).
      </p>
    );
  }
  if (preview.kind === 'issue-missing') {
    return (
      <p className="mt-2 text-xs" data-testid="approval-changes" data-kind="missing">
        Issue #{preview.number} does not exist in this project: this call would fail.
      </p>
    );
  }
  const { issue } = preview;
  if (toolName === 'delete_issue') {
    return (
      <div
        className="mt-2 rounded border border-red-300 p-2 text-xs dark:border-red-800"
        data-testid="approval-changes"
        data-kind="delete"
      >
        <p className="mb-1 font-medium">This issue and its comments will be deleted:</p>
        <IssueCard issue={issue} />
      </div>
    );
  }
  const rows = issueRows(toolName, issue, args, preview);
  return (
    <div className="mt-2 text-xs" data-testid="approval-changes" data-kind="issue">
      <p className="font-medium">
        What changes on <IssueLink number={issue.number} title={issue.title} />
      </p>
      {rows.length ? <ChangeTable rows={rows} /> : <p>No field of the issue changes.</p>}
    </div>
  );
}
