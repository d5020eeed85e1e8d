'use client';

/** The review page's "Export JSON" button. Prop-driven: the export itself is the controller's. */
export function ExportButton({ busy, error, onExport }: { busy: boolean; error: string | null; onExport: () => void }) {
  return (
    <span className="inline-flex items-center gap-2">
      <button
        type="button"
        data-testid="review-export"
        disabled={busy}
        onClick={onExport}
        className="rounded-md border border-slate-400 px-3 py-1 text-sm font-medium hover:bg-slate-100 disabled:opacity-50 dark:border-slate-500 dark:hover:bg-slate-800"
      >
        {busy ? 'Exporting…' : 'Export JSON'}
      </button>
      {error ? (
        <span role="alert" className="text-sm text-red-800 dark:text-red-300">
          {error}
        </span>
      ) : null}
    </span>
  );
}
