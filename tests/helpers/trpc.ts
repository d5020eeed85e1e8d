import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from '@/server/api-root';

/** A tRPC client speaking real HTTP to the test server as the user owning `cookie`. */
export function trpcClient(baseUrl: string, cookie?: string) {
  return createTRPCClient<AppRouter>({
    links: [
      httpLink({
        url: `${baseUrl}/api/trpc`,
        transformer: superjson,
        headers: () => ({ ...(cookie ? { cookie } : {}), origin: baseUrl }),
      }),
    ],
  });
}

/** The tRPC error code (`NOT_FOUND`, `FORBIDDEN`, ...) a call failed with, or null if it succeeded. */
export async function errorCode(p: Promise<unknown>): Promise<string | null> {
  try {
    await p;
    return null;
  } catch (err) {
    if (err instanceof TRPCClientError) return (err.data as { code?: string } | undefined)?.code ?? 'UNKNOWN';
    throw err;
  }
}
