'use client';
/**
 * The review studio's datasets: the project's datasets with their cases and experiments, and a new
 * dataset made of the rated answers the filters select (rating, reasons, dates, tools used, model).
 */
import { useRouter } from 'next/navigation';
import { type FormEvent, useState } from 'react';
import { useTRPCClient } from '../../host-client';
import { FEEDBACK_REASON_LABELS, FEEDBACK_REASONS, type FeedbackReason } from '../../schema';
import { trpcErrorMessage } from '../agent-api';
import { ui } from '../settings/styles';
import type { DatasetList } from './types';
import { StudioError, StudioLink, StudioTable } from './StudioTable';

type CreateInput = Parameters<ReturnType<typeof useTRPCClient>['agent']['eval']['datasets']['create']['mutate']>[0];

/** The filters of the form, as the procedure takes them (empty fields: no filter). */
function filterOf(form: FormData): NonNullable<CreateInput['filter']> {
  const text = (k: string) => String(form.get(k) ?? '').trim();
  const rating = text('rating');
  const reason = text('reason');
  const tools = text('tools')
    .split(/[\s,]+/)
    .filter(Boolean);
  return {
    ...(rating ? { rating: Number(rating) as 1 | -1 } : {}),
    ...(reason ? { reasons: [reason as FeedbackReason] } : {}),
    ...(text('from') ? { from: text('from') } : {}),
    ...(text('to') ? { to: text('to') } : {}),
    ...(tools.length ? { tools } : {}),
    ...(text('model') ? { model: text('model') } : {}),
  };
}

export function DatasetsStudio({
  projectId,
  basePath,
  datasets,
  canManage,
}: {
  projectId: string;
  basePath: string;
  datasets: DatasetList;
  canManage: boolean;
}) {
  const client = useTRPCClient();
  const router = useRouter();
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function onCreate(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const filter = filterOf(form);
    if (filter.from && filter.to && filter.from > filter.to) {
      setError('The start date is after the end date.');
      return;
    }
    setPending(true);
    setError(null);
    try {
      const created = await client.agent.eval.datasets.create.mutate({
        projectId,
        name: String(form.get('name') ?? ''),
        filter,
      });
      router.push(`${basePath}/datasets/${encodeURIComponent(created.id)}`);
    } catch (err) {
      setError(trpcErrorMessage(err, 'The dataset could not be created.'));
      setPending(false);
    }
  }

  return (
    <div className="space-y-6">
      <section aria-labelledby="datasets-heading" className="space-y-2">
        <h2 id="datasets-heading" className="text-lg font-semibold">
          Datasets
        </h2>
        <StudioTable
          label="Datasets"
          testId="eval-datasets"
          columns={['Name', 'Cases', 'Experiments', 'Created']}
          empty={datasets.length ? null : 'No datasets yet.'}
        >
          {datasets.map((d) => (
            <tr key={d.id} data-testid="eval-dataset-row" data-dataset-id={d.id}>
              <td>
                <StudioLink href={`${basePath}/datasets/${encodeURIComponent(d.id)}`}>{d.name}</StudioLink>
              </td>
              <td>{d.cases}</td>
              <td>{d.experiments}</td>
              <td>
                <time dateTime={new Date(d.createdAt).toISOString()}>
                  {new Date(d.createdAt).toISOString().slice(0, 10)}
                </time>
              </td>
            </tr>
          ))}
        </StudioTable>
      </section>
      {canManage ? (
        <form
          onSubmit={onCreate}
          aria-labelledby="new-dataset-heading"
          className="space-y-3 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
          data-testid="eval-new-dataset"
        >
          <h2 id="new-dataset-heading" className="text-lg font-semibold">
            New dataset from rated answers
          </h2>
          <p className="text-sm text-slate-600 dark:text-slate-300">
            Each rated answer the filters select becomes a case: the conversation up to the question, the page it was
            asked from, the answer with its tool calls, results and approvals, and its rating. Leave a filter empty to
            take every rated answer (at most 200 at a time).
          </p>
          <div className="grid gap-3 sm:grid-cols-3">
            <label className="text-sm">
              <span className={ui.label}>Name</span>
              <input name="name" required maxLength={80} className={ui.field} data-testid="eval-dataset-name" />
            </label>
            <label className="text-sm">
              <span className={ui.label}>Rating</span>
              <select name="rating" defaultValue="" className={ui.field} data-testid="eval-filter-rating">
                <option value="">Any rating</option>
                <option value="-1">Thumbs down</option>
                <option value="1">Thumbs up</option>
              </select>
            </label>
            <label className="text-sm">
              <span className={ui.label}>Reason</span>
              <select name="reason" defaultValue="" className={ui.field}>
                <option value="">Any reason</option>
                {FEEDBACK_REASONS.map((r) => (
                  <option key={r} value={r}>
                    {FEEDBACK_REASON_LABELS[r]}
                  </option>
                ))}
              </select>
            </label>
            <label className="text-sm">
              <span className={ui.label}>Rated from</span>
              <input type="date" name="from" className={ui.field} />
            </label>
            <label className="text-sm">
              <span className={ui.label}>Rated to</span>
              <input type="date" name="to" className={ui.field} />
            </label>
            <label className="text-sm">
              <span className={ui.label}>Tools used (any of, comma-separated)</span>
              <input
                name="tools"
                placeholder="list_issues, create_issue"
                className={ui.field}
                data-testid="eval-filter-tools"
              />
            </label>
            <label className="text-sm">
              <span className={ui.label}>Model id</span>
              <input name="model" className={ui.field} />
            </label>
          </div>
          <button type="submit" disabled={pending} className={ui.primary} data-testid="eval-dataset-create">
            {pending ? 'Creating…' : 'Create dataset'}
          </button>
          <StudioError message={error} />
        </form>
      ) : null}
    </div>
  );
}
