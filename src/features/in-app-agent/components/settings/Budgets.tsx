'use client';
/**
 * "Budgets" in the project's settings: what the assistant may spend, per member per day and per
 * month and for the whole project per month (UTC), in US dollars when the model's prices are
 * configured, else in tokens. An empty field means no budget. A spent budget refuses new answers
 * until its window renews; an answer already being written is finished.
 */
import type { inferRouterOutputs } from '@trpc/server';
import { useRouter } from 'next/navigation';
import { type FormEvent, useState } from 'react';
import {
  BUDGET_SCOPE_LABELS,
  BUDGET_SCOPES,
  type BudgetScope,
  type BudgetUnit,
  formatBudgetAmount,
  MAX_BUDGET,
} from '../../budgets';
import { type AppRouter, useTRPCClient } from '../../host-client';
import { messageOf, Outcome } from './Outcome';
import { ui } from './styles';

export type BudgetsData = inferRouterOutputs<AppRouter>['agent']['budgets']['get'];

const HELP: Record<BudgetScope, string> = {
  MEMBER_DAY: 'What one member may spend in a day (UTC).',
  MEMBER_MONTH: 'What one member may spend in a calendar month (UTC).',
  PROJECT_MONTH: 'What everyone together may spend in a calendar month (UTC).',
};

/** The field's text for a budget: its amount in the unit it was set in. */
function fieldValue(data: BudgetsData, scope: BudgetScope): string {
  const b = data.budgets.find((x) => x.scope === scope);
  return b ? String(b.amount) : '';
}

/** The amount a field holds, null for none, or why it cannot be saved. */
function parseAmount(text: string, unit: BudgetUnit): { amount: number | null } | { error: string } {
  const t = text.trim().replace(/[$,\s]/g, '');
  if (!t) return { amount: null };
  const n = Number(t);
  if (!Number.isFinite(n) || n <= 0) return { error: 'must be a number above zero' };
  if (unit === 'TOKENS' && !Number.isInteger(n)) return { error: 'must be a whole number of tokens' };
  if (n > MAX_BUDGET[unit]) return { error: 'is larger than any budget can be' };
  return { amount: n };
}

export function AssistantBudgets({ projectId, initial }: { projectId: string; initial: BudgetsData }) {
  const client = useTRPCClient();
  const router = useRouter();
  const [data, setData] = useState(initial);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const unit = data.unit;
  const unitWords = unit === 'USD' ? 'US dollars' : 'tokens (input and output)';

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const budgets: Partial<Record<BudgetScope, number | null>> = {};
    for (const scope of BUDGET_SCOPES) {
      const parsed = parseAmount(String(form.get(scope) ?? ''), unit);
      if ('error' in parsed) {
        setNotice(null);
        setError(`${BUDGET_SCOPE_LABELS[scope]}: the budget ${parsed.error}.`);
        return;
      }
      budgets[scope] = parsed.amount;
    }
    setPending(true);
    setError(null);
    try {
      const saved = await client.agent.budgets.set.mutate({ projectId, budgets });
      setData(saved);
      setNotice(saved.budgets.length ? 'Budgets saved. They hold from the next answer.' : 'Budgets removed.');
      router.refresh();
    } catch (err) {
      setNotice(null);
      setError(messageOf(err, 'The budgets could not be saved.'));
    } finally {
      setPending(false);
    }
  }

  return (
    <form onSubmit={onSubmit} className="space-y-3" aria-describedby="budgets-help" data-testid="budgets-form">
      <p id="budgets-help" className="text-sm text-slate-600 dark:text-slate-400">
        Caps on what the assistant spends in this project, in {unitWords}
        {unit === 'TOKENS' ? ' because no model prices are configured' : ' at the configured model prices'}. Leave a
        field empty for no cap. Once a cap is reached, new answers are refused until it renews; an answer already being
        written is finished, so answers running at that moment can go over by up to one answer each.
      </p>
      <div className="grid gap-3 sm:grid-cols-3">
        {BUDGET_SCOPES.map((scope) => {
          const current = data.budgets.find((b) => b.scope === scope);
          const other = current && current.unit !== unit;
          return (
            <div key={scope}>
              <label htmlFor={`budget-${scope}`} className={ui.label}>
                {BUDGET_SCOPE_LABELS[scope]}
              </label>
              <div className="mt-1 flex items-center gap-1">
                {unit === 'USD' ? (
                  <span aria-hidden="true" className="text-sm">
                    $
                  </span>
                ) : null}
                <input
                  id={`budget-${scope}`}
                  name={scope}
                  inputMode="decimal"
                  autoComplete="off"
                  defaultValue={other ? '' : fieldValue(data, scope)}
                  key={`${scope}:${current?.amount ?? ''}:${current?.unit ?? ''}`}
                  placeholder="No cap"
                  aria-describedby={`budget-${scope}-help`}
                  data-testid={`budget-${scope}`}
                  className={ui.field}
                />
                {unit === 'TOKENS' ? <span className="text-sm">tokens</span> : null}
              </div>
              <p id={`budget-${scope}-help`} className={`mt-1 ${ui.help}`}>
                {HELP[scope]}
                {other
                  ? ` Set as ${formatBudgetAmount(current.amount, current.unit)} before prices changed: enter it again in ${unitWords}.`
                  : ''}
              </p>
            </div>
          );
        })}
      </div>
      <Outcome error={error} notice={notice} testId="budgets-outcome" />
      <button type="submit" className={ui.primary} disabled={pending} data-testid="budgets-save">
        Save budgets
      </button>
    </form>
  );
}
