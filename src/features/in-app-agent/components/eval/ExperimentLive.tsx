'use client';
/**
 * An experiment as it runs and once it ended: its progress (polled every second while it runs, and
 * said in a live region), Stop, the JSONL export of its results, and every case's result.
 */
import { useEffect, useState } from 'react';
import { useTRPCClient } from '../../host-client';
import { trpcErrorMessage } from '../agent-api';
import { downloadFile } from '../download';
import { ui } from '../settings/styles';
import { formatTokens, formatUsd } from '../usage-format';
import { CaseResultView } from './CaseResultView';
import { StudioError } from './StudioTable';
import type { ExperimentData } from './types';

const POLL_MS = 1_000;

const STATUS_LABELS: Record<ExperimentData['status'], string> = {
  RUNNING: 'Running',
  COMPLETED: 'Completed',
  STOPPED: 'Stopped',
  FAILED: 'Failed',
};

export function ExperimentLive({
  projectId,
  initial,
  canManage,
}: {
  projectId: string;
  initial: ExperimentData;
  canManage: boolean;
}) {
  const client = useTRPCClient();
  const [data, setData] = useState(initial);
  const [error, setError] = useState<string | null>(null);
  const running = data.status === 'RUNNING';

  useEffect(() => {
    if (!running) return;
    let cancelled = false;
    const timer = window.setTimeout(async () => {
      try {
        const next = await client.agent.eval.experiments.get.query({ projectId, experimentId: data.id });
        if (!cancelled) setData(next);
      } catch (err) {
        if (!cancelled) setError(trpcErrorMessage(err, 'The progress could not be read.'));
      }
    }, POLL_MS);
    return () => {
      cancelled = true;
      window.clearTimeout(timer);
    };
  }, [client, data, projectId, running]);

  async function stop() {
    try {
      await client.agent.eval.experiments.stop.mutate({ projectId, experimentId: data.id });
    } catch (err) {
      setError(trpcErrorMessage(err, 'Stop failed.'));
    }
  }

  async function exportJsonl() {
    try {
      const res = await client.agent.eval.experiments.export.query({ projectId, experimentId: data.id });
      downloadFile(res.filename, res.jsonl, 'application/x-ndjson');
    } catch (err) {
      setError(trpcErrorMessage(err, 'Export failed.'));
    }
  }

  const failed = data.done - data.passed;
  return (
    <div className="space-y-4" data-testid="eval-experiment" data-status={data.status}>
      <div className="space-y-1 rounded-lg border border-slate-200 p-3 dark:border-slate-800">
        <div className="flex flex-wrap items-center gap-3">
          <progress
            max={data.total}
            value={data.done}
            aria-label="Cases done"
            className="h-2 w-48"
            data-testid="eval-progress"
          />
          <p aria-live="polite" className="text-sm" data-testid="eval-progress-text">
            {STATUS_LABELS[data.status]}: {data.done} of {data.total} cases · {data.passed} passed · {failed} not passed
            {data.errored ? ` (${data.errored} failed to answer)` : ''}
            {data.errorCode ? ` · ${data.errorCode}` : ''}
          </p>
          {running && canManage ? (
            <button type="button" className={ui.dangerOutline} onClick={() => void stop()} data-testid="eval-stop">
              {data.stopRequested ? 'Stopping…' : 'Stop'}
            </button>
          ) : null}
          {!running ? (
            <button type="button" className={ui.secondary} onClick={() => void exportJsonl()} data-testid="eval-export">
              Export JSONL
            </button>
          ) : null}
        </div>
        <p className="text-xs text-slate-600 dark:text-slate-300">
          {formatTokens(data.inputTokens)} tokens in · {formatTokens(data.outputTokens)} out
          {data.costUsd !== null ? ` · ${formatUsd(data.costUsd)}` : ''} · system prompt {data.systemPromptVersion}
        </p>
        <StudioError message={error} />
      </div>
      <section aria-labelledby="eval-results-heading" className="space-y-3">
        <h2 id="eval-results-heading" className="text-lg font-semibold">
          Results by case
        </h2>
        {data.results.map((r) => (
          <CaseResultView key={r.caseId} result={r} question={data.questions[r.caseId] ?? ''} />
        ))}
      </section>
    </div>
  );
}
