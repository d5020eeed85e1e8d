'use client';
/**
 * The budget warning above the message field: a budget of the project is 80 % used (the store sets
 * it once per budget and window from the run's budget event; the live region has already said it).
 * "Dismiss" hides it until the next warning.
 */
import { useState } from 'react';
import { useAgentSelector } from '../panel-context';

export function BudgetWarning() {
  const warning = useAgentSelector((state) => state.budgetWarning);
  const [dismissed, setDismissed] = useState<string | null>(null);
  if (!warning || warning === dismissed) return null;
  return (
    <div
      data-testid="assistant-budget-warning"
      className="mb-1 flex items-start gap-2 rounded-md border border-amber-300 bg-amber-50 px-2 py-1 text-xs text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
    >
      <p className="min-w-0 flex-1">{warning}</p>
      <button type="button" className="underline" onClick={() => setDismissed(warning)}>
        Dismiss
      </button>
    </div>
  );
}
