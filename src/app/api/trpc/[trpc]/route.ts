import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '@/server/api-root';
import { logTrpcError } from '@/server/trpc-log';
import { createTrpcContext } from '@/server/trpc';

export const dynamic = 'force-dynamic';

function handler(req: Request): Promise<Response> {
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: () => createTrpcContext(req),
    onError: logTrpcError,
  });
}

export { handler as GET, handler as POST };
