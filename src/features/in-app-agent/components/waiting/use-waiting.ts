'use client';
/**
 * The requests (approvals, questions) waiting for the signed-in user in this project, kept fresh:
 * read on mount, when a run of this tab ends (`refreshKey`), when the tab comes back into view or
 * focus, every `WAITING_POLL_MS` while it is visible (requests of runs in other tabs, or answered
 * elsewhere), and at the first expiry (by the server's clock, so a wrong local clock does not
 * matter).
 */
import type { inferRouterOutputs } from '@trpc/server';
import { useCallback, useEffect, useRef, useState } from 'react';
import { type AppRouter, useTRPCClient } from '../../host-client';

export type WaitingListData = inferRouterOutputs<AppRouter>['agent']['waiting']['list'];

/** How often a visible tab looks again (ms). */
const WAITING_POLL_MS = 30_000;

export function useWaiting(projectId: string, refreshKey: number): WaitingListData | null {
  const client = useTRPCClient();
  const [data, setData] = useState<WaitingListData | null>(null);
  const inFlight = useRef(false);
  const load = useCallback(async () => {
    if (inFlight.current) return;
    inFlight.current = true;
    try {
      setData(await client.agent.waiting.list.query({ projectId }));
    } catch {
      // Offline or signed out: the last answer stays until the next look.
    } finally {
      inFlight.current = false;
    }
  }, [client, projectId]);

  // Again whenever a run of this tab ends (`refreshKey` changes).
  const seen = useRef<number | null>(null);
  useEffect(() => {
    if (seen.current === refreshKey) return;
    seen.current = refreshKey;
    void load();
  }, [load, refreshKey]);

  useEffect(() => {
    const onVisible = () => {
      if (document.visibilityState === 'visible') void load();
    };
    const onFocus = () => void load();
    const timer = window.setInterval(onVisible, WAITING_POLL_MS);
    document.addEventListener('visibilitychange', onVisible);
    window.addEventListener('focus', onFocus);
    return () => {
      window.clearInterval(timer);
      document.removeEventListener('visibilitychange', onVisible);
      window.removeEventListener('focus', onFocus);
    };
  }, [load]);

  // Look again when the first of them expires (measured on the server's clock).
  const firstExpiry = data?.conversations.reduce(
    (min, c) => Math.min(min, new Date(c.expiresAt).getTime()),
    Number.POSITIVE_INFINITY,
  );
  const serverNow = data ? new Date(data.now).getTime() : 0;
  useEffect(() => {
    if (!firstExpiry || !Number.isFinite(firstExpiry)) return;
    const wait = Math.min(2 ** 31 - 1, Math.max(1_000, firstExpiry - serverNow + 500));
    const timer = window.setTimeout(() => void load(), wait);
    return () => window.clearTimeout(timer);
  }, [firstExpiry, serverNow, load]);

  return data;
}
