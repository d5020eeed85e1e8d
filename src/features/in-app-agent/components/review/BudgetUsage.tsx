/**
 * Spend against each budget (the review's usage page): the project's month against its monthly
 * budget, and every member who spent something today or this month against the members' daily and
 * monthly budgets, from the spend counters (the same figures the run's admission reads).
 * Prop-driven, no hooks: renders on the server.
 */
import { BUDGET_SCOPE_LABELS, type BudgetScope, type BudgetUnit, formatBudgetAmount } from '../../budgets';
import type { BudgetsData } from '../settings/Budgets';

interface Spend {
  tokens: number;
  costUsd: number;
}

const spentIn = (s: Spend, unit: BudgetUnit) => (unit === 'USD' ? s.costUsd : s.tokens);

/** "12 % of $5.00", or the spend alone without a budget. */
function Against({
  spend,
  budget,
  testId,
}: {
  spend: Spend;
  budget?: { unit: BudgetUnit; amount: number };
  testId: string;
}) {
  if (!budget)
    return (
      <span data-testid={testId}>
        {formatBudgetAmount(spend.costUsd, 'USD')} · {formatBudgetAmount(spend.tokens, 'TOKENS')}
      </span>
    );
  const spent = spentIn(spend, budget.unit);
  const percent = Math.floor((spent / budget.amount) * 100);
  return (
    <span
      data-testid={testId}
      data-percent={percent}
      className={percent >= 100 ? 'font-semibold text-red-800 dark:text-red-300' : undefined}
    >
      {formatBudgetAmount(spent, budget.unit)} of {formatBudgetAmount(budget.amount, budget.unit)} ({percent} %)
    </span>
  );
}

const TH = 'py-1.5 pr-3 text-left font-medium';
const TD = 'py-1.5 pr-3 tabular-nums whitespace-nowrap';

export function BudgetUsage({ data }: { data: BudgetsData }) {
  const budgetOf = (scope: BudgetScope) => data.budgets.find((b) => b.scope === scope);
  const day = budgetOf('MEMBER_DAY');
  const month = budgetOf('MEMBER_MONTH');
  const project = budgetOf('PROJECT_MONTH');
  return (
    <section
      aria-labelledby="review-budgets-title"
      className="space-y-3 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="review-budgets"
    >
      <h2 id="review-budgets-title" className="text-lg font-semibold">
        Budgets
      </h2>
      <p className="text-sm text-slate-600 dark:text-slate-300">
        {data.budgets.length
          ? `Spend against each budget: today (UTC) and ${data.windows.month.start.slice(0, 7)} (UTC month). Budgets are set in Settings, Budgets.`
          : `No budgets are set (Settings, Budgets). Spend today (UTC) and in ${data.windows.month.start.slice(0, 7)}:`}
      </p>
      <p className="text-sm" data-testid="review-budget-project">
        <span className="font-medium">{BUDGET_SCOPE_LABELS.PROJECT_MONTH}: </span>
        <Against spend={data.project} budget={project} testId="review-budget-project-spend" />
      </p>
      {data.members.length === 0 ? (
        <p className="text-sm" data-testid="review-budget-members-empty">
          No member has spent anything this month.
        </p>
      ) : (
        <div className="overflow-x-auto">
          <table className="min-w-full border-collapse text-sm" data-testid="review-budget-members">
            <caption className="pb-1 text-left font-semibold">Per member</caption>
            <thead>
              <tr className="border-b border-slate-300 dark:border-slate-700">
                <th scope="col" className={TH}>
                  Member
                </th>
                <th scope="col" className={TH}>
                  Today{day ? ' (daily budget)' : ''}
                </th>
                <th scope="col" className={TH}>
                  This month{month ? ' (monthly budget)' : ''}
                </th>
              </tr>
            </thead>
            <tbody>
              {data.members.map((m) => (
                <tr
                  key={m.user.id}
                  className="border-b border-slate-200 dark:border-slate-800"
                  data-testid="review-budget-member"
                  data-user-id={m.user.id}
                >
                  <th scope="row" className="py-1.5 pr-3 text-left font-normal">
                    {m.user.name || m.user.id}
                  </th>
                  <td className={TD}>
                    <Against spend={m.day} budget={day} testId="review-budget-day" />
                  </td>
                  <td className={TD}>
                    <Against spend={m.month} budget={month} testId="review-budget-month" />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
