'use client';
/**
 * Browser side of the tRPC API: a typed client over `/api/trpc` (superjson, batched) and the
 * TanStack React Query integration. Wrap client trees in `<Providers>` (src/app/providers.tsx);
 * components use `useTRPC()` (query/mutation options) or `useTRPCClient()` (plain calls).
 */
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import superjson from 'superjson';
import type { AppRouter } from '@/server/api-root';
import { TRPC_MAX_BATCH_SIZE } from './limits';

export const { TRPCProvider, useTRPC, useTRPCClient } = createTRPCContext<AppRouter>();

export function makeTrpcClient() {
  return createTRPCClient<AppRouter>({
    // Never more calls per request than the server accepts.
    links: [
      httpBatchLink({ url: '/api/trpc', transformer: superjson, maxURLLength: 4000, maxItems: TRPC_MAX_BATCH_SIZE }),
    ],
  });
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

/** The stable appCode of a failed call (e.g. LAST_OWNER), or null. */
export function errorAppCode(err: unknown): string | null {
  if (err instanceof TRPCClientError)
    return ((err.data as { appCode?: string | null } | undefined)?.appCode ?? null) || null;
  return null;
}
