'use client';
import { memo, type ReactNode } from 'react';
import type { ViewToolCall } from '../schema';
import { humanizeToolName, summarizeArgs } from './approval';
import { HourglassIcon, SpinnerIcon, ToolIcon } from './icons';
import { resultRendererFor } from './tool-ui/registry';

export type ToolCardStatus = ViewToolCall['status'] | 'awaiting-approval' | 'approved' | 'rejected' | 'expired';

const STATUS: Record<ToolCardStatus, { icon: ReactNode; text: string; cls: string }> = {
  streaming: { icon: <SpinnerIcon />, text: 'Preparing', cls: 'text-slate-600 dark:text-slate-300' },
  called: { icon: <SpinnerIcon />, text: 'Running', cls: 'text-slate-600 dark:text-slate-300' },
  done: { icon: '✓', text: 'Done', cls: 'text-emerald-700 dark:text-emerald-400' },
  error: { icon: '✕', text: 'Failed', cls: 'text-red-700 dark:text-red-400' },
  'awaiting-approval': { icon: '?', text: 'Waiting for approval', cls: 'text-amber-700 dark:text-amber-300' },
  approved: { icon: '✓', text: 'Approved', cls: 'text-emerald-700 dark:text-emerald-400' },
  rejected: { icon: '⊘', text: 'Rejected', cls: 'text-red-700 dark:text-red-400' },
  expired: { icon: <HourglassIcon />, text: 'Approval expired', cls: 'text-slate-600 dark:text-slate-300' },
};

function parsedResult(result: string): unknown {
  try {
    return JSON.parse(result);
  } catch {
    return result;
  }
}

function prettyResult(result: string): string {
  const parsed = parsedResult(result);
  return typeof parsed === 'string' ? parsed : JSON.stringify(parsed, null, 2);
}

function ToolCallCardImpl({
  call,
  status,
  editedOnApproval,
  ranWith,
}: {
  call: ViewToolCall;
  status?: ToolCardStatus;
  /** The user changed the arguments before approving: `call.args` is only the proposal. */
  editedOnApproval?: boolean;
  /** The arguments the call actually ran with (from the approval decision), when known. */
  ranWith?: Record<string, unknown>;
}) {
  const s = STATUS[status ?? call.status];
  const args = summarizeArgs(call.args);
  // A successful result of a tool with a renderer shows as product UI; failures stay plain.
  const Rendered = call.result !== undefined && call.status === 'done' ? resultRendererFor(call.name) : null;
  const ran = ranWith ? summarizeArgs(ranWith) : null;
  return (
    <div
      data-testid="tool-card"
      data-tool={call.name}
      data-status={status ?? call.status}
      data-edited={editedOnApproval ? 'true' : undefined}
      className="my-1.5 rounded-md border border-slate-200 bg-slate-50 text-xs dark:border-slate-700 dark:bg-slate-900"
    >
      <div className="flex items-start gap-2 px-2.5 py-1.5">
        <span className="mt-0.5">
          <ToolIcon />
        </span>
        <div className="min-w-0 flex-1">
          <div className="flex flex-wrap items-baseline gap-x-2">
            <span className="font-medium" title={call.name}>
              {humanizeToolName(call.name)}
            </span>
            <code className="text-[0.7rem] text-slate-500 dark:text-slate-400">{call.name}</code>
          </div>
          {ran !== null ? (
            <>
              <div className="truncate text-slate-700 dark:text-slate-200" title={ran} data-testid="tool-card-ran-with">
                Ran with: {ran || '(no arguments)'}
              </div>
              {editedOnApproval && args ? (
                <div
                  className="truncate text-slate-500 line-through decoration-slate-400 dark:text-slate-400"
                  title={args}
                >
                  <span className="sr-only">Proposed: </span>
                  {args}
                </div>
              ) : null}
            </>
          ) : (
            <>
              {args ? (
                <div
                  className={`truncate text-slate-600 dark:text-slate-300 ${editedOnApproval ? 'line-through decoration-slate-400' : ''}`}
                  title={args}
                >
                  {editedOnApproval ? <span className="sr-only">Proposed: </span> : null}
                  {args}
                </div>
              ) : null}
              {editedOnApproval ? (
                <div className="text-slate-600 dark:text-slate-300" data-testid="tool-card-edited">
                  Ran with the arguments you edited{call.result !== undefined ? ' (see Result)' : ''}.
                </div>
              ) : null}
            </>
          )}
        </div>
        <span className={`shrink-0 whitespace-nowrap ${s.cls}`}>
          <span aria-hidden="true">{s.icon} </span>
          {s.text}
        </span>
      </div>
      {Rendered && call.result !== undefined ? (
        // Hidden when the renderer shows nothing (a result it does not read): the raw result remains.
        <div
          className="border-t border-slate-200 px-2.5 py-1.5 empty:hidden dark:border-slate-700"
          data-testid="tool-card-rendered"
        >
          <Rendered call={call} result={parsedResult(call.result)} />
        </div>
      ) : null}
      {call.result !== undefined ? (
        <details className="border-t border-slate-200 px-2.5 py-1 dark:border-slate-700">
          <summary className="cursor-pointer select-none text-slate-600 dark:text-slate-300">Result</summary>
          <pre className="mt-1 max-h-64 overflow-auto whitespace-pre-wrap break-words font-mono text-[0.7rem]">
            {prettyResult(call.result)}
          </pre>
        </details>
      ) : null}
    </div>
  );
}

export const ToolCallCard = memo(ToolCallCardImpl);
