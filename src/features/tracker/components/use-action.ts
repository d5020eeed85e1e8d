'use client';
import { useRouter } from 'next/navigation';
import { useCallback, useState, useTransition } from 'react';
import { errorMessage } from '@/lib/trpc/client';

/**
 * Runs a mutation, exposes pending/error state, and refreshes the server-rendered page afterwards
 * so it shows the new data.
 */
export function useAction() {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [refreshing, startTransition] = useTransition();

  const run = useCallback(
    async <T>(fn: () => Promise<T>, opts: { refresh?: boolean } = {}): Promise<T | undefined> => {
      setBusy(true);
      setError(null);
      try {
        const result = await fn();
        if (opts.refresh !== false) startTransition(() => router.refresh());
        return result;
      } catch (err) {
        setError(errorMessage(err));
        return undefined;
      } finally {
        setBusy(false);
      }
    },
    [router],
  );

  return { run, error, setError, pending: busy || refreshing };
}
