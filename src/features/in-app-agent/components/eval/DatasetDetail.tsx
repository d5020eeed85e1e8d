'use client';
/**
 * One dataset of the review studio: its cases (the question, rating, reasons, tools the original
 * used) with the expectations an admin writes, cases added from a feedback export file, a new
 * experiment against a candidate (with its estimated cost shown before it can start), the
 * dataset's experiments, and two of them picked for a comparison.
 */
import { useRouter } from 'next/navigation';
import { type FormEvent, useState } from 'react';
import { useTRPCClient } from '../../host-client';
import { FEEDBACK_REASON_LABELS, type FeedbackReason } from '../../schema';
import { trpcErrorMessage } from '../agent-api';
import { ui } from '../settings/styles';
import { formatTokens, formatUsd } from '../usage-format';
import type { DatasetData } from './types';
import { NameSelect, StudioError, StudioLink, StudioTable } from './StudioTable';

/** The comparison's two selects: the base first; at first the newest finished experiment against the one before it. */
const COMPARE_SIDES = [
  { label: 'Compare', name: 'base', preset: 1 },
  { label: 'with', name: 'other', preset: 0 },
] as const;

type Client = ReturnType<typeof useTRPCClient>;
type Expectation = Parameters<Client['agent']['eval']['cases']['setExpectations']['mutate']>[0]['expectations'][number];
type Candidate = Parameters<Client['agent']['eval']['experiments']['start']['mutate']>[0]['candidate'];
type Estimate = Awaited<ReturnType<Client['agent']['eval']['experiments']['estimate']['query']>>;

function describeExpectation(e: Expectation): string {
  switch (e.kind) {
    case 'calls':
      return `Calls ${e.tool}${e.args ? ` with ${JSON.stringify(e.args)}` : ''}`;
    case 'not_calls':
      return `Does not call ${e.tool}`;
    case 'mentions':
      return `Mentions “${e.text}”`;
    case 'asks_back':
      return 'Asks back';
  }
}

/** An expectation from the editor's fields, or why it cannot be one. */
function expectationOf(form: FormData): Expectation | string {
  const kind = String(form.get('kind'));
  const tool = String(form.get('tool') ?? '').trim();
  const text = String(form.get('text') ?? '').trim();
  if (kind === 'asks_back') return { kind };
  if (kind === 'mentions') return text ? { kind, text } : 'Write the words the answer must mention.';
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(tool)) return 'Name a tool (for example list_issues).';
  if (kind === 'not_calls') return { kind, tool };
  if (!text) return { kind: 'calls', tool };
  try {
    const args = JSON.parse(text) as unknown;
    if (!args || typeof args !== 'object' || Array.isArray(args)) return 'Arguments must be a JSON object.';
    return { kind: 'calls', tool, args: args as Record<string, unknown> };
  } catch {
    return 'Arguments must be a JSON object, e.g. {"status": "OPEN"}.';
  }
}

type CaseRow = DatasetData['cases'][number];
const questionOf = (c: CaseRow) => (c.data as { userMessage?: { text?: string } }).userMessage?.text ?? '';

function ExpectationsEditor({
  projectId,
  row,
  n,
  canManage,
}: {
  projectId: string;
  row: CaseRow;
  /** The case's place in the list (forms are named by it: each must have its own name). */
  n: number;
  canManage: boolean;
}) {
  const client = useTRPCClient();
  const [list, setList] = useState<Expectation[]>((row.expectations as Expectation[] | null) ?? []);
  const [error, setError] = useState<string | null>(null);
  const [kind, setKind] = useState('calls');

  async function save(next: Expectation[]) {
    setError(null);
    try {
      const saved = await client.agent.eval.cases.setExpectations.mutate({
        projectId,
        caseId: row.id,
        expectations: next,
      });
      setList(saved.expectations);
      return true;
    } catch (err) {
      setError(trpcErrorMessage(err, 'The expectations could not be saved.'));
      return false;
    }
  }

  async function onAdd(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const formEl = e.currentTarget;
    const made = expectationOf(new FormData(formEl));
    if (typeof made === 'string') {
      setError(made);
      return;
    }
    if (await save([...list, made])) formEl.reset();
  }

  const id = `case-${row.id}`;
  return (
    <div className="space-y-1" data-testid="eval-expectations">
      {list.length ? (
        <ul className="text-sm">
          {list.map((x, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a case's expectations, in order
            <li key={i} className="flex items-center gap-2" data-testid="eval-expectation-item">
              <span>{describeExpectation(x)}</span>
              {canManage ? (
                <button
                  type="button"
                  className="text-xs text-red-700 underline dark:text-red-300"
                  onClick={() => void save(list.filter((_, j) => j !== i))}
                  aria-label={`Remove expectation: ${describeExpectation(x)}`}
                >
                  Remove
                </button>
              ) : null}
            </li>
          ))}
        </ul>
      ) : (
        <p className="text-xs text-slate-600 dark:text-slate-300">No expectations.</p>
      )}
      {canManage ? (
        <form
          onSubmit={onAdd}
          className="flex flex-wrap items-end gap-2"
          aria-label={`Add an expectation to case ${n}`}
        >
          <label className="text-xs">
            <span className="block">Expect</span>
            <select
              name="kind"
              value={kind}
              onChange={(ev) => setKind(ev.target.value)}
              className={ui.field}
              data-testid="eval-expectation-kind"
            >
              <option value="calls">calls the tool</option>
              <option value="not_calls">does not call the tool</option>
              <option value="mentions">mentions</option>
              <option value="asks_back">asks back</option>
            </select>
          </label>
          {kind === 'calls' || kind === 'not_calls' ? (
            <label className="text-xs">
              <span className="block">Tool</span>
              <input
                name="tool"
                className={ui.field}
                data-testid="eval-expectation-tool"
                aria-describedby={`${id}-help`}
              />
            </label>
          ) : null}
          {kind === 'calls' || kind === 'mentions' ? (
            <label className="text-xs">
              <span className="block">{kind === 'calls' ? 'With arguments (JSON, optional)' : 'Words'}</span>
              <input name="text" className={ui.field} data-testid="eval-expectation-text" />
            </label>
          ) : null}
          <button type="submit" className={ui.secondary} data-testid="eval-expectation-add">
            Add
          </button>
          <span id={`${id}-help`} className="sr-only">
            The tool's name as the assistant calls it, for example list_issues.
          </span>
        </form>
      ) : null}
      {error ? (
        <p role="alert" className="text-xs text-red-800 dark:text-red-300">
          {error}
        </p>
      ) : null}
    </div>
  );
}

function ImportForm({ projectId, datasetId }: { projectId: string; datasetId: string }) {
  const client = useTRPCClient();
  const router = useRouter();
  const [message, setMessage] = useState<{ error: boolean; text: string } | null>(null);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const file = new FormData(e.currentTarget).get('file');
    if (!(file instanceof File) || !file.size) {
      setMessage({ error: true, text: 'Choose an export file first.' });
      return;
    }
    try {
      const res = await client.agent.eval.datasets.import.mutate({ projectId, datasetId, jsonl: await file.text() });
      const skipped = res.problems.map((p) => `line ${p.line}: ${p.message}`).join('; ');
      setMessage({
        error: false,
        text: `${res.added} case${res.added === 1 ? '' : 's'} added.${skipped ? ` Not taken: ${skipped}` : ''}`,
      });
      router.refresh();
    } catch (err) {
      setMessage({ error: true, text: trpcErrorMessage(err, 'The file could not be imported.') });
    }
  }

  return (
    <form onSubmit={onSubmit} className="flex flex-wrap items-end gap-2" aria-label="Add cases from an export file">
      <label className="text-sm">
        <span className={ui.label}>Feedback export file (JSONL)</span>
        <input type="file" name="file" accept=".jsonl,.ndjson,application/x-ndjson,text/plain" className="text-sm" />
      </label>
      <button type="submit" className={ui.secondary}>
        Add from file
      </button>
      {message ? (
        <p role={message.error ? 'alert' : 'status'} className="basis-full text-sm">
          {message.text}
        </p>
      ) : null}
    </form>
  );
}

function candidateOf(form: FormData): Candidate {
  const text = (k: string) => String(form.get(k) ?? '').trim();
  const input = text('priceInput');
  const output = text('priceOutput');
  // Tools the candidate goes without: off for every role (the rest as the project has them).
  const off = text('toolsOff')
    .split(/[\s,]+/)
    .filter(Boolean);
  return {
    name: text('name'),
    ...(off.length
      ? {
          toolPolicy: {
            cells: Object.fromEntries(
              off.map((t) => [
                t,
                { OWNER: 'off' as const, ADMIN: 'off' as const, MEMBER: 'off' as const, VIEWER: 'off' as const },
              ]),
            ),
            rules: {},
          },
        }
      : {}),
    ...(text('modelId') ? { model: { modelId: text('modelId') } } : {}),
    ...(text('instructions') ? { instructions: text('instructions') } : {}),
    ...(input && output ? { prices: { input: Number(input), output: Number(output) } } : {}),
    concurrency: Number(text('concurrency') || '2'),
    ...(text('rubric')
      ? { judge: { rubric: text('rubric'), ...(text('judgeModel') ? { modelId: text('judgeModel') } : {}) } }
      : {}),
  };
}

function ExperimentForm({
  projectId,
  datasetId,
  basePath,
}: {
  projectId: string;
  datasetId: string;
  basePath: string;
}) {
  const client = useTRPCClient();
  const router = useRouter();
  const [estimate, setEstimate] = useState<{ for: string; value: Estimate } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const candidate = candidateOf(new FormData(e.currentTarget));
    const key = JSON.stringify(candidate);
    setError(null);
    setBusy(true);
    try {
      // The cost is shown first; the experiment starts on the second press, for the same candidate.
      if (estimate?.for !== key) {
        setEstimate({
          for: key,
          value: await client.agent.eval.experiments.estimate.query({ projectId, datasetId, candidate }),
        });
        return;
      }
      const { experimentId } = await client.agent.eval.experiments.start.mutate({ projectId, datasetId, candidate });
      router.push(`${basePath}/experiments/${encodeURIComponent(experimentId)}`);
    } catch (err) {
      setError(trpcErrorMessage(err, 'The experiment could not start.'));
    } finally {
      setBusy(false);
    }
  }

  const ready = estimate !== null;
  return (
    <form
      onSubmit={onSubmit}
      onChange={() => setEstimate(null)}
      aria-labelledby="new-experiment-heading"
      className="space-y-3 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="eval-experiment-form"
    >
      <h2 id="new-experiment-heading" className="text-lg font-semibold">
        Run an experiment
      </h2>
      <p className="text-sm text-slate-600 dark:text-slate-300">
        Every case is answered again with the candidate. Read tools run as the case's user; changes and messages are
        never sent: they are answered with the original's result or marked not executed. Empty fields keep the project's
        current model, instructions and tool permissions.
      </p>
      <div className="grid gap-3 sm:grid-cols-3">
        <label className="text-sm">
          <span className={ui.label}>Candidate name</span>
          <input name="name" required maxLength={80} className={ui.field} data-testid="eval-candidate-name" />
        </label>
        <label className="text-sm">
          <span className={ui.label}>Model id</span>
          <input name="modelId" className={ui.field} placeholder="The configured model" />
        </label>
        <label className="text-sm">
          <span className={ui.label}>Cases at once</span>
          <select name="concurrency" defaultValue="2" className={ui.field}>
            {[1, 2, 3, 4].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
        <label className="text-sm">
          <span className={ui.label}>Tools turned off (comma-separated)</span>
          <input name="toolsOff" className={ui.field} placeholder="None" data-testid="eval-candidate-tools-off" />
        </label>
        <label className="text-sm">
          <span className={ui.label}>Price in, $ per million tokens</span>
          <input name="priceInput" inputMode="decimal" className={ui.field} />
        </label>
        <label className="text-sm">
          <span className={ui.label}>Price out, $ per million tokens</span>
          <input name="priceOutput" inputMode="decimal" className={ui.field} />
        </label>
      </div>
      <label className="block text-sm">
        <span className={ui.label}>Instructions</span>
        <textarea
          name="instructions"
          rows={3}
          maxLength={4000}
          placeholder="The project's instructions"
          className={ui.field}
          data-testid="eval-candidate-instructions"
        />
      </label>
      <div className="grid gap-3 sm:grid-cols-3">
        <label className="text-sm sm:col-span-2">
          <span className={ui.label}>Judge rubric (optional)</span>
          <textarea
            name="rubric"
            rows={2}
            maxLength={4000}
            placeholder="A model scores each answer from 0 to 10 by this rubric"
            className={ui.field}
          />
        </label>
        <label className="text-sm">
          <span className={ui.label}>Judge model id</span>
          <input name="judgeModel" className={ui.field} placeholder="The configured model" />
        </label>
      </div>
      {estimate ? (
        <p role="status" className="text-sm" data-testid="eval-estimate" data-cases={estimate.value.cases}>
          {estimate.value.cases} cases · about {formatTokens(estimate.value.inputTokens)} tokens in and{' '}
          {formatTokens(estimate.value.outputTokens)} out
          {estimate.value.costUsd !== null
            ? ` · about ${formatUsd(estimate.value.costUsd)}`
            : ' · no prices, no cost shown'}
        </p>
      ) : null}
      <button
        type="submit"
        disabled={busy}
        className={ui.primary}
        data-testid={ready ? 'eval-start' : 'eval-estimate-button'}
      >
        {ready ? 'Start experiment' : 'Estimate cost'}
      </button>
      <StudioError message={error} />
    </form>
  );
}

export function DatasetDetail({
  projectId,
  basePath,
  data,
  canManage,
}: {
  projectId: string;
  basePath: string;
  data: DatasetData;
  canManage: boolean;
}) {
  const done = data.experiments.filter((e) => e.status !== 'RUNNING');
  return (
    <div className="space-y-6">
      <section aria-labelledby="cases-heading" className="space-y-2">
        <h2 id="cases-heading" className="text-lg font-semibold">
          Cases ({data.cases.length})
        </h2>
        <ol className="space-y-3" data-testid="eval-cases">
          {data.cases.map((c, i) => (
            <li
              key={c.id}
              className="space-y-1 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
              data-testid="eval-case"
              data-case-id={c.id}
            >
              <p className="font-medium">{questionOf(c) || '(no text)'}</p>
              <p className="text-xs text-slate-600 dark:text-slate-300">
                {c.rating === 1 ? 'Thumbs up' : c.rating === -1 ? 'Thumbs down' : 'Not rated'}
                {c.reasons.length
                  ? ` (${c.reasons.map((r) => FEEDBACK_REASON_LABELS[r as FeedbackReason] ?? r).join(', ')})`
                  : ''}
                {' · '}
                {c.toolsUsed.length ? `used ${c.toolsUsed.join(', ')}` : 'no tools'}
                {c.model ? ` · ${c.model}` : ''} · from {c.source === 'export' ? 'an export file' : 'a conversation'}
              </p>
              <ExpectationsEditor projectId={projectId} row={c} n={i + 1} canManage={canManage} />
            </li>
          ))}
        </ol>
        {canManage ? <ImportForm projectId={projectId} datasetId={data.id} /> : null}
      </section>
      {canManage && data.cases.length ? (
        <ExperimentForm projectId={projectId} datasetId={data.id} basePath={basePath} />
      ) : null}
      <section aria-labelledby="experiments-heading" className="space-y-2">
        <h2 id="experiments-heading" className="text-lg font-semibold">
          Experiments
        </h2>
        <StudioTable
          label="Experiments of this dataset"
          testId="eval-experiments"
          columns={['Candidate', 'Status', 'Passed', 'Errors', 'Tokens', 'Cost']}
          empty={data.experiments.length ? null : 'No experiments yet.'}
        >
          {data.experiments.map((e) => (
            <tr key={e.id} data-testid="eval-experiment-row" data-experiment-id={e.id} data-status={e.status}>
              <td>
                <StudioLink href={`${basePath}/experiments/${encodeURIComponent(e.id)}`}>{e.name}</StudioLink>
              </td>
              <td>
                {e.status.toLowerCase()} ({e.done}/{e.total})
              </td>
              <td>{e.passed}</td>
              <td>{e.errored}</td>
              <td>
                {formatTokens(e.inputTokens)} in · {formatTokens(e.outputTokens)} out
              </td>
              <td>{e.costUsd !== null ? formatUsd(e.costUsd) : '—'}</td>
            </tr>
          ))}
        </StudioTable>
        {done.length >= 2 ? (
          <form
            method="get"
            action={`${basePath}/experiments/compare`}
            className="flex flex-wrap items-end gap-2"
            aria-label="Compare two experiments"
          >
            {COMPARE_SIDES.map(({ label, name, preset }) => (
              <NameSelect
                key={name}
                label={label}
                name={name}
                options={done}
                defaultValue={done[preset]!.id}
                testId={`eval-compare-${name}`}
              />
            ))}
            <button type="submit" className={ui.secondary} data-testid="eval-compare">
              Compare
            </button>
          </form>
        ) : null}
      </section>
    </div>
  );
}
