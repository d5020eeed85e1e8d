'use client';
import { useRouter } from 'next/navigation';
import { useCallback, useState, useTransition } from 'react';
import { errorMessage } from '@/lib/trpc/client';

/**
 * Runs a mutation, exposes pending/error state, and refreshes the server-rendered page afterwards
 * so it shows the new data. With `notice`, a success also leaves a sentence saying what was done
 * (cleared when the next run starts, like the error).
 */
export function useAction() {
  const router = useRouter();
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [refreshing, startTransition] = useTransition();

  const run = useCallback(
    async <T>(
      fn: () => Promise<T>,
      opts: { refresh?: boolean; notice?: (result: T) => string } = {},
    ): Promise<T | undefined> => {
      setBusy(true);
      setError(null);
      setNotice(null);
      try {
        const result = await fn();
        if (opts.notice) setNotice(opts.notice(result));
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

  return { run, error, setError, notice, pending: busy || refreshing };
}
