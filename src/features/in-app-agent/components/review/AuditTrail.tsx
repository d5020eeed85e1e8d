/** The audit trail of a conversation's tool calls and its approval decisions (review page). */

export interface AuditEntry {
  id: string;
  tool: string;
  status: string;
  errorCode: string | null;
  argsPreview: string | null;
  resultPreview: string | null;
  durationMs: number | null;
  startedAt: Date | string;
  toolCallId: string | null;
  runId: string | null;
}

export interface ApprovalEntry {
  toolCallId: string;
  toolName: string;
  status: string;
  reason: string | null;
  feedback: string | null;
  decidedAt: Date | string | null;
}

const STATUS_ICON: Record<string, string> = {
  OK: '✓',
  ERROR: '✕',
  DENIED: '⊘',
  APPROVED: '✓',
  CONSUMED: '✓',
  REJECTED: '⊘',
  EXPIRED: '–',
  PENDING: '?',
};

function iso(d: Date | string | null): string {
  if (!d) return '';
  return (typeof d === 'string' ? new Date(d) : d).toISOString();
}

export function AuditTrail({ audit, approvals }: { audit: AuditEntry[]; approvals: ApprovalEntry[] }) {
  return (
    <div className="space-y-6 text-sm">
      <section aria-labelledby="audit-title">
        <h2 id="audit-title" className="mb-2 text-base font-semibold">
          Tool calls ({audit.length})
        </h2>
        {audit.length === 0 ? <p className="text-slate-600 dark:text-slate-300">No tool was executed.</p> : null}
        <ol className="space-y-2" data-testid="review-audit">
          {audit.map((call) => (
            <li
              key={call.id}
              className="rounded-md border border-slate-200 p-2 dark:border-slate-700"
              data-testid="review-audit-entry"
              data-status={call.status}
            >
              <div className="flex flex-wrap items-baseline gap-x-2">
                <code className="font-medium">{call.tool}</code>
                <span>
                  <span aria-hidden="true">{STATUS_ICON[call.status] ?? '•'} </span>
                  {call.status}
                  {call.errorCode ? ` (${call.errorCode})` : ''}
                </span>
                {call.durationMs !== null ? (
                  <span className="text-xs text-slate-500 dark:text-slate-400">{call.durationMs} ms</span>
                ) : null}
                <time className="text-xs text-slate-500 dark:text-slate-400" dateTime={iso(call.startedAt)}>
                  {iso(call.startedAt).replace('T', ' ').slice(0, 19)} UTC
                </time>
              </div>
              {call.argsPreview ? (
                <details className="mt-1">
                  <summary className="cursor-pointer text-xs">Arguments</summary>
                  <pre className="mt-1 whitespace-pre-wrap break-words font-mono text-xs">{call.argsPreview}</pre>
                </details>
              ) : null}
              {call.resultPreview ? (
                <details className="mt-1">
                  <summary className="cursor-pointer text-xs">Result</summary>
                  <pre className="mt-1 max-h-60 overflow-auto whitespace-pre-wrap break-words font-mono text-xs">
                    {call.resultPreview}
                  </pre>
                </details>
              ) : null}
            </li>
          ))}
        </ol>
      </section>
      <section aria-labelledby="approvals-title">
        <h2 id="approvals-title" className="mb-2 text-base font-semibold">
          Approvals ({approvals.length})
        </h2>
        {approvals.length === 0 ? (
          <p className="text-slate-600 dark:text-slate-300">No approval was requested.</p>
        ) : null}
        <ul className="space-y-2" data-testid="review-approvals">
          {approvals.map((approval) => (
            <li
              key={approval.toolCallId}
              className="rounded-md border border-slate-200 p-2 dark:border-slate-700"
              data-status={approval.status}
            >
              <code className="font-medium">{approval.toolName}</code>{' '}
              <span>
                <span aria-hidden="true">{STATUS_ICON[approval.status] ?? '•'} </span>
                {approval.status}
              </span>
              {approval.reason ? (
                <span className="text-xs text-slate-500 dark:text-slate-400"> · {approval.reason}</span>
              ) : null}
              {approval.decidedAt ? (
                <time className="block text-xs text-slate-500 dark:text-slate-400" dateTime={iso(approval.decidedAt)}>
                  decided {iso(approval.decidedAt).replace('T', ' ').slice(0, 19)} UTC
                </time>
              ) : null}
              {approval.feedback ? <p className="mt-1">User note: {approval.feedback}</p> : null}
            </li>
          ))}
        </ul>
      </section>
    </div>
  );
}
