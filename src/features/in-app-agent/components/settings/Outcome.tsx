/** What a settings form's last action came to, announced politely: its error, or what it did. */
export function Outcome({ error, notice, testId }: { error: string | null; notice: string | null; testId: string }) {
  return (
    <div aria-live="polite" data-testid={testId}>
      {error ? (
        <p role="alert" className="text-sm text-red-700 dark:text-red-300">
          {error}
        </p>
      ) : null}
      {notice ? <p className="text-sm text-green-700 dark:text-green-300">{notice}</p> : null}
    </div>
  );
}

/** A tRPC error's message for the user. */
export function messageOf(err: unknown, fallback: string): string {
  const m = (err as { message?: unknown } | null)?.message;
  return typeof m === 'string' && m ? m : fallback;
}
