/**
 * Budgets of a project's assistant, as every side reads them: the scopes and their UTC windows, the
 * units, the budget state a run reports (`CUSTOM_EVENTS.budget`), the 80 % warning and the words
 * for a budget. Isomorphic (the server's admission and settings, the panel, the review): no Node or
 * browser APIs. The server's statements are in `server/budgets.ts`.
 */
import { z } from 'zod';
import { formatTokens, formatUsd } from './components/usage-format';

/** Which window a budget limits (the database enum `AgentBudgetScope`), in the order they are shown. */
export const BUDGET_SCOPES = ['MEMBER_DAY', 'MEMBER_MONTH', 'PROJECT_MONTH'] as const;
export type BudgetScope = (typeof BUDGET_SCOPES)[number];
const BudgetScopeSchema = z.enum(BUDGET_SCOPES);

/** What a budget counts: US dollars at the configured model prices, or tokens (in + out). */
const BUDGET_UNITS = ['USD', 'TOKENS'] as const;
export type BudgetUnit = (typeof BUDGET_UNITS)[number];
const BudgetUnitSchema = z.enum(BUDGET_UNITS);

/** The panel warns once a budget's window has used this much of it. */
const BUDGET_WARN_FRACTION = 0.8;

/** The largest budget accepted: a billion dollars, or a trillion tokens. */
export const MAX_BUDGET = { USD: 1e9, TOKENS: 1e12 } as const;

/** One budget and what its current window has spent. */
export const BudgetStateSchema = z.object({
  scope: BudgetScopeSchema,
  unit: BudgetUnitSchema,
  amount: z.number().positive(),
  spent: z.number().nonnegative(),
  /** When the window ends and the budget renews (ISO 8601, UTC). */
  endsAt: z.string(),
});
export type BudgetState = z.infer<typeof BudgetStateSchema>;

/** The value of `CUSTOM_EVENTS.budget`: the run's budgets as they stand after it (its usage added). */
export const BudgetEventValueSchema = z.object({ budgets: z.array(BudgetStateSchema).max(BUDGET_SCOPES.length) });

/** The UTC window of a scope that holds `at`: a day for a member's daily budget, else a calendar month. */
export function budgetWindow(scope: BudgetScope, at: Date): { start: Date; end: Date } {
  const y = at.getUTCFullYear();
  const m = at.getUTCMonth();
  if (scope === 'MEMBER_DAY') {
    const start = new Date(Date.UTC(y, m, at.getUTCDate()));
    return { start, end: new Date(Date.UTC(y, m, at.getUTCDate() + 1)) };
  }
  return { start: new Date(Date.UTC(y, m, 1)), end: new Date(Date.UTC(y, m + 1, 1)) };
}

/** "$12.50" or "20,000 tokens". */
export function formatBudgetAmount(amount: number, unit: BudgetUnit): string {
  return unit === 'USD' ? formatUsd(amount) : `${formatTokens(Math.round(amount))} tokens`;
}

/** What a scope is called in the settings and the usage page. */
export const BUDGET_SCOPE_LABELS: Record<BudgetScope, string> = {
  MEMBER_DAY: 'Each member, per day',
  MEMBER_MONTH: 'Each member, per month',
  PROJECT_MONTH: 'The whole project, per month',
};

/** The budget in a sentence's words: "your daily assistant budget in this project". */
function budgetName(scope: BudgetScope): string {
  if (scope === 'MEMBER_DAY') return 'your daily assistant budget in this project';
  if (scope === 'MEMBER_MONTH') return 'your monthly assistant budget in this project';
  return "this project's monthly assistant budget";
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** When a window ends, in words: "at 00:00 UTC" (a day) or "on 1 January at 00:00 UTC" (a month). */
function renewsAt(scope: BudgetScope, endsAt: Date): string {
  if (scope === 'MEMBER_DAY') return 'at 00:00 UTC';
  return `on ${endsAt.getUTCDate()} ${MONTHS[endsAt.getUTCMonth()]} at 00:00 UTC`;
}

/** Who used which budget, for the refusal's sentence. */
const SPENT_BY: Record<BudgetScope, string> = {
  MEMBER_DAY: 'You have used your daily assistant budget in this project',
  MEMBER_MONTH: 'You have used your monthly assistant budget in this project',
  PROJECT_MONTH: 'This project has used its monthly assistant budget',
};

/** The refusal's sentence: which budget is spent, how much it is, and when it renews. */
export function budgetSpentSentence(budget: Pick<BudgetState, 'scope' | 'unit' | 'amount' | 'endsAt'>): string {
  const amount = formatBudgetAmount(budget.amount, budget.unit);
  const renews = renewsAt(budget.scope, new Date(budget.endsAt));
  return (
    `${SPENT_BY[budget.scope]} (${amount}). It renews ${renews}; until then the assistant cannot start new ` +
    'answers for you here. A project admin can change it in Settings, Budgets.'
  );
}

/** The 80 % warning's sentence. */
export function budgetWarningSentence(budget: BudgetState): string {
  const used = Math.min(100, Math.floor((budget.spent / budget.amount) * 100));
  const name = budgetName(budget.scope);
  const capital = name.charAt(0).toUpperCase() + name.slice(1);
  return (
    `${capital} is ${used} % used (${formatBudgetAmount(budget.spent, budget.unit)} of ` +
    `${formatBudgetAmount(budget.amount, budget.unit)}). It renews ${renewsAt(budget.scope, new Date(budget.endsAt))}.`
  );
}

/** The budgets after a run: what the window had spent when it opened, plus the run's own usage. */
export function budgetsAfterRun(
  before: readonly BudgetState[],
  usage: { inputTokens?: number; outputTokens?: number; costUsd?: number } | undefined,
): BudgetState[] {
  const tokens = (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0);
  const cost = usage?.costUsd ?? 0;
  return before.map((b) => ({ ...b, spent: b.spent + (b.unit === 'USD' ? cost : tokens) }));
}

/** The budget to warn about: the most used one at or past `BUDGET_WARN_FRACTION`, or null. */
export function budgetToWarn(budgets: readonly BudgetState[]): BudgetState | null {
  let worst: BudgetState | null = null;
  for (const b of budgets) {
    const used = b.spent / b.amount;
    if (used >= BUDGET_WARN_FRACTION && (!worst || used > worst.spent / worst.amount)) worst = b;
  }
  return worst;
}
