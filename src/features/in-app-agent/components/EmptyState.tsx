'use client';
import type { Suggestion } from './page-context';

/** The empty conversation: a short intro and suggestions that fit the current page. */
export function EmptyState({
  suggestions,
  onPick,
  disabled,
}: {
  suggestions: Suggestion[];
  onPick: (s: Suggestion) => void;
  disabled?: boolean;
}) {
  return (
    <div className="flex flex-col gap-3 py-6 text-sm" data-testid="assistant-empty">
      <div>
        <p className="font-medium">Ask about this project.</p>
        <p className="text-slate-600 dark:text-slate-300">
          The assistant can read issues and, with your approval, change them. It only does what your role allows.
        </p>
      </div>
      <ul className="flex flex-col gap-2" aria-label="Suggestions">
        {suggestions.map((s) => (
          <li key={s.label}>
            <button
              type="button"
              data-testid="assistant-suggestion"
              disabled={disabled}
              onClick={() => onPick(s)}
              className="w-full rounded-md border border-slate-300 px-3 py-2 text-left hover:bg-slate-50 disabled:opacity-50 dark:border-slate-700 dark:hover:bg-slate-900"
            >
              {s.label}
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
