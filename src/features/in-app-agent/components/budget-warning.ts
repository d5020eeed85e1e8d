/**
 * The panel's budget warning: a run in a project with budgets ends with the budgets as they stand
 * (`CUSTOM_EVENTS.budget`); once one of them has used 80 % of its window, the panel says so, once
 * per budget and window (the windows already warned about are kept per user and project in
 * browser storage, so another tab or a reload does not say it again). Pure.
 */
import { BudgetEventValueSchema, budgetToWarn, budgetWarningSentence } from '../budgets';

/** Windows remembered at most (the newest ones). */
const WARNED_KEPT = 12;

/**
 * What to say for a budget event, and the warned windows to keep, or null when nothing is due (no
 * budget at 80 %, or this window was warned about already).
 */
export function budgetWarningFor(value: unknown, warned: readonly string[]): { text: string; warned: string[] } | null {
  const parsed = BudgetEventValueSchema.safeParse(value);
  if (!parsed.success) return null;
  const budget = budgetToWarn(parsed.data.budgets);
  if (!budget) return null;
  const key = `${budget.scope}:${budget.endsAt}`;
  if (warned.includes(key)) return null;
  return { text: budgetWarningSentence(budget), warned: [...warned, key].slice(-WARNED_KEPT) };
}
