'use client';
/**
 * Browser side of the tRPC API: a typed client over `/api/trpc` (superjson, batched), provided to
 * client components by `<Providers>` (src/app/providers.tsx) and read with `useTRPCClient()`.
 *
 * No client-side query cache: the Tracker's pages are server components that read their data on
 * the server and are refreshed (`router.refresh()`) after a mutation, and the assistant's
 * conversations live in the panel's run store (shared by tabs, merged with live runs, paged), so a
 * second cache in the browser would only hold a copy of what those two already own.
 */
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { createContext, type ReactNode, useContext } from 'react';
import superjson from 'superjson';
import type { AppRouter } from '@/server/api-root';
import { TRPC_MAX_BATCH_SIZE } from './limits';

export type TrpcClient = ReturnType<typeof makeTrpcClient>;

export function makeTrpcClient() {
  return createTRPCClient<AppRouter>({
    // Never more calls per request than the server accepts.
    links: [
      httpBatchLink({ url: '/api/trpc', transformer: superjson, maxURLLength: 4000, maxItems: TRPC_MAX_BATCH_SIZE }),
    ],
  });
}

const TrpcClientContext = createContext<TrpcClient | null>(null);

/** Makes one tRPC client available to the client components below it. */
export function TRPCProvider({ client, children }: { client: TrpcClient; children: ReactNode }) {
  return <TrpcClientContext.Provider value={client}>{children}</TrpcClientContext.Provider>;
}

/** The tab's tRPC client (inside `<Providers>`). */
export function useTRPCClient(): TrpcClient {
  const client = useContext(TrpcClientContext);
  if (!client) throw new Error('useTRPCClient() needs <Providers> above it.');
  return client;
}

/** A user-facing message for a failed call (server messages are already safe to show). */
export function errorMessage(err: unknown): string {
  if (err instanceof TRPCClientError) {
    const data = err.data as
      | { code?: string; issues?: Array<{ path: Array<string | number>; message: string }> | null }
      | undefined;
    if (data?.issues?.length) {
      const first = data.issues[0]!;
      return `${first.path.length ? `${first.path.join('.')}: ` : ''}${first.message}`;
    }
    return err.message;
  }
  return err instanceof Error ? err.message : 'Something went wrong. Please try again.';
}
