import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '@/server/api-root';
import { withRequestContext } from '@/server/log';
import { logTrpcError } from '@/server/trpc-log';
import { createTrpcContext, trpcResponseMeta } from '@/server/trpc';

export const dynamic = 'force-dynamic';

function handler(req: Request): Promise<Response> {
  return withRequestContext(req, () =>
    fetchRequestHandler({
      endpoint: '/api/trpc',
      req,
      router: appRouter,
      createContext: () => createTrpcContext(req),
      onError: logTrpcError,
      responseMeta: trpcResponseMeta,
    }),
  );
}

export { handler as GET, handler as POST };
