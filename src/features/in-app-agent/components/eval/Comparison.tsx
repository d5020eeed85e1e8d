/**
 * Two experiments of one dataset, case by case: which cases got better or worse with the second
 * candidate, which only changed (other tools, another answer), with both answers side by side as a
 * word diff.
 */
import { answerDiff } from '../../eval/diff';
import { AnswerDiffView, Verdict } from './CaseResultView';
import type { ComparisonData } from './types';
import { StudioTable } from './StudioTable';

const VERDICT_LABELS = { better: 'Better', worse: 'Worse', changed: 'Changed', same: 'Same' } as const;
const VERDICT_TONES = {
  better: 'text-green-800 dark:text-green-300',
  worse: 'text-red-800 dark:text-red-300',
  changed: 'text-amber-800 dark:text-amber-300',
  same: 'text-slate-700 dark:text-slate-300',
} as const;

export function Comparison({ data }: { data: ComparisonData }) {
  const s = data.summary;
  return (
    <div className="space-y-4" data-testid="eval-comparison">
      <p className="text-sm" data-testid="eval-comparison-summary">
        <strong>{data.other.name}</strong> against <strong>{data.base.name}</strong>: {s.better} better, {s.worse}{' '}
        worse, {s.changed} changed, {s.same} the same.
      </p>
      <StudioTable
        label="Cases of both experiments"
        caption="Cases of both experiments"
        columns={['Case', 'Verdict', data.base.name, data.other.name]}
      >
        {data.cases.map((c) => (
          <tr
            key={c.caseId}
            data-testid="eval-comparison-row"
            data-case-id={c.caseId}
            data-verdict={c.verdict}
            className="align-top"
          >
            <td className="max-w-xs py-1">
              <details>
                <summary className="cursor-pointer">{data.questions[c.caseId] || '(no text)'}</summary>
                <AnswerDiffView
                  diff={answerDiff(c.base.answer, c.other.answer)}
                  label={`Answer of ${data.other.name} against ${data.base.name}`}
                />
              </details>
            </td>
            <td className={`py-1 font-medium ${VERDICT_TONES[c.verdict]}`}>{VERDICT_LABELS[c.verdict]}</td>
            <td className="py-1">
              <Verdict passed={c.base.passed} outcome={c.base.outcome} />{' '}
              <span className="text-xs">{c.base.toolCalls.map((t) => t.name).join(', ') || 'no tools'}</span>
            </td>
            <td className="py-1">
              <Verdict passed={c.other.passed} outcome={c.other.outcome} />{' '}
              <span className="text-xs">{c.other.toolCalls.map((t) => t.name).join(', ') || 'no tools'}</span>
            </td>
          </tr>
        ))}
      </StudioTable>
    </div>
  );
}
