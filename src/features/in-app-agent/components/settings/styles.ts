/** Class names of the assistant's settings forms (the product's look, without importing its UI). */
export const ui = {
  primary:
    'inline-flex items-center justify-center gap-1 rounded-md bg-blue-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-blue-800 disabled:cursor-not-allowed disabled:opacity-60 dark:bg-blue-600 dark:hover:bg-blue-500',
  secondary:
    'inline-flex items-center justify-center gap-1 rounded-md border border-slate-300 px-3 py-1.5 text-sm font-medium text-slate-800 hover:bg-slate-100 disabled:cursor-not-allowed disabled:opacity-60 dark:border-slate-600 dark:text-slate-100 dark:hover:bg-slate-800',
  danger:
    'inline-flex items-center justify-center gap-1 rounded-md bg-red-700 px-3 py-1.5 text-sm font-medium text-white hover:bg-red-800 disabled:cursor-not-allowed disabled:opacity-60',
  dangerOutline:
    'inline-flex items-center justify-center gap-1 rounded-md border border-red-300 px-3 py-1.5 text-sm font-medium text-red-700 hover:bg-red-50 disabled:cursor-not-allowed disabled:opacity-60 dark:border-red-800 dark:text-red-300 dark:hover:bg-red-950',
  field:
    'block w-full rounded-md border border-slate-300 bg-white px-2.5 py-1.5 text-sm text-slate-900 placeholder:text-slate-500 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100',
  label: 'block text-sm font-medium text-slate-700 dark:text-slate-300',
  help: 'text-xs text-slate-600 dark:text-slate-400',
} as const;
