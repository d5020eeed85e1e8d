/**
 * One case of an experiment: how it ended, its expectations, the candidate's tool calls (what ran,
 * what was answered from the original run, what was not executed or left pending) against the
 * original's, the answer beside the original as a word diff, and its tokens, cost and latency.
 */
import { formatTokens, formatUsd } from '../usage-format';
import type { CaseResult } from './types';
import { StudioTable } from './StudioTable';

const MODE_LABELS: Record<CaseResult['toolCalls'][number]['mode'], string> = {
  ran: 'ran (read, as the user)',
  replayed: "answered with the original's result",
  not_executed: 'not executed',
  pending: 'pending approval',
  refused: 'not available',
};

const OUTCOME_LABELS: Record<CaseResult['outcome'], string> = {
  completed: 'Answered',
  pending: 'Stopped for a decision',
  error: 'Failed',
};

export function Verdict({ passed, outcome }: { passed: boolean; outcome: CaseResult['outcome'] }) {
  const tone = passed
    ? 'bg-green-100 text-green-900 dark:bg-green-950 dark:text-green-200'
    : outcome === 'error'
      ? 'bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-200'
      : 'bg-amber-100 text-amber-900 dark:bg-amber-950 dark:text-amber-200';
  return (
    <span
      className={`rounded px-1.5 py-0.5 text-xs font-medium ${tone}`}
      data-testid="eval-verdict"
      data-passed={passed}
    >
      {passed ? 'Passed' : outcome === 'error' ? 'Error' : 'Failed'}
    </span>
  );
}

export function AnswerDiffView({ diff, label }: { diff: CaseResult['answerDiff']; label: string }) {
  return (
    <figure data-testid="eval-answer-diff">
      <figcaption className="sr-only">{label}</figcaption>
      <p className="whitespace-pre-wrap rounded border border-slate-200 p-2 text-sm dark:border-slate-700">
        {diff.map((p, i) =>
          p.op === 'same' ? (
            // biome-ignore lint/suspicious/noArrayIndexKey: pieces of one text, in order
            <span key={i}>{p.text}</span>
          ) : p.op === 'added' ? (
            // biome-ignore lint/suspicious/noArrayIndexKey: pieces of one text, in order
            <ins key={i} className="bg-green-100 text-green-900 no-underline dark:bg-green-950 dark:text-green-200">
              {p.text}
            </ins>
          ) : (
            // biome-ignore lint/suspicious/noArrayIndexKey: pieces of one text, in order
            <del key={i} className="bg-red-100 text-red-900 dark:bg-red-950 dark:text-red-200">
              {p.text}
            </del>
          ),
        )}
      </p>
    </figure>
  );
}

const json = (v: unknown) => JSON.stringify(v ?? {});

export function CaseResultView({ result, question }: { result: CaseResult; question: string }) {
  const diff = result.toolDiff;
  return (
    <article
      className="space-y-2 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="eval-case-result"
      data-case-id={result.caseId}
      data-outcome={result.outcome}
      aria-label={`Case: ${question}`}
    >
      <div className="flex flex-wrap items-center gap-2">
        <Verdict passed={result.passed} outcome={result.outcome} />
        <h3 className="font-medium">{question || '(no text)'}</h3>
      </div>
      <p className="text-xs text-slate-600 dark:text-slate-300">
        {OUTCOME_LABELS[result.outcome]}
        {result.error ? ` (${result.error.code}: ${result.error.message})` : ''} ·{' '}
        {formatTokens(result.usage.inputTokens ?? 0)} tokens in, {formatTokens(result.usage.outputTokens ?? 0)} out
        {result.usage.costUsd !== undefined ? ` · ${formatUsd(result.usage.costUsd)}` : ''} · {result.latencyMs} ms
      </p>
      {result.expectations.length ? (
        <ul className="space-y-0.5 text-sm" aria-label="Expectations">
          {result.expectations.map((e, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a case's expectations, in order
            <li key={i} data-testid="eval-expectation" data-passed={e.passed}>
              <span aria-hidden="true">{e.passed ? '✓' : '✗'}</span>{' '}
              <span className="sr-only">{e.passed ? 'Met: ' : 'Not met: '}</span>
              {e.detail}
            </li>
          ))}
        </ul>
      ) : null}
      <StudioTable
        label="Tool calls of the candidate"
        testId="eval-tool-calls"
        caption="Tool calls of the candidate"
        columns={['Tool', 'Arguments', 'In the experiment']}
        empty={result.toolCalls.length ? null : 'No tool calls.'}
      >
        {result.toolCalls.map((c) => (
          <tr key={c.id} data-testid="eval-tool-call" data-tool={c.name} data-mode={c.mode}>
            <td className="font-mono text-xs">{c.name}</td>
            <td className="break-all font-mono text-xs">{json(c.args)}</td>
            <td className="text-xs">
              {MODE_LABELS[c.mode]}
              {c.approval && c.mode !== 'pending' ? ` · ${c.approval} as in the original` : ''}
            </td>
          </tr>
        ))}
      </StudioTable>
      {diff.added.length || diff.removed.length || diff.matched.some((m) => m.args.length) ? (
        <ul className="text-sm" aria-label="Tool calls against the original" data-testid="eval-tool-diff">
          {diff.removed.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: in order
            <li key={`r${i}`}>
              − {c.name} {json(c.args)} <span className="text-xs">(only the original)</span>
            </li>
          ))}
          {diff.added.map((c, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: in order
            <li key={`a${i}`}>
              + {c.name} {json(c.args)} <span className="text-xs">(only the candidate)</span>
            </li>
          ))}
          {diff.matched
            .filter((m) => m.args.length)
            .map((m, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: in order
              <li key={`m${i}`}>
                ~ {m.name}: {m.args.map((a) => `${a.path} ${json(a.original)} → ${json(a.candidate)}`).join(', ')}
              </li>
            ))}
        </ul>
      ) : null}
      {result.judge ? (
        'score' in result.judge ? (
          <details data-testid="eval-judge" data-score={result.judge.score}>
            <summary className="cursor-pointer text-sm">
              Judge ({result.judge.model}): {result.judge.score}/10 · {result.judge.reason}
            </summary>
            <pre className="whitespace-pre-wrap break-all text-xs">{result.judge.prompt}</pre>
          </details>
        ) : (
          <p className="text-sm text-amber-800 dark:text-amber-300" data-testid="eval-judge">
            Judge ({result.judge.model}): {result.judge.error}
          </p>
        )
      ) : null}
      <details>
        <summary className="cursor-pointer text-sm">Answer against the original</summary>
        <AnswerDiffView diff={result.answerDiff} label="Answer: removed and added words against the original" />
      </details>
    </article>
  );
}
