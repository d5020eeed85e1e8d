import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '@/server/api-root';
import { logTrpcError } from '@/server/trpc-log';
import { createTrpcContext, trpcResponseMeta } from '@/server/trpc';
import { guardTrpcRequest, retryAfterHeader, TRPC_ENDPOINT } from '@/server/trpc-http';

export const dynamic = 'force-dynamic';

async function handler(original: Request): Promise<Response> {
  // Size, batch and nesting caps first (see trpc-http.ts): refused with tRPC's error envelope.
  const guarded = await guardTrpcRequest(original);
  if ('refused' in guarded) return guarded.refused;
  const req = guarded.req;
  return fetchRequestHandler({
    endpoint: TRPC_ENDPOINT,
    req,
    router: appRouter,
    createContext: () => createTrpcContext(req),
    onError: logTrpcError,
    // A database outage is a 503; a rate-limited call says when to come back.
    responseMeta: (opts) => {
      const meta = trpcResponseMeta(opts);
      return meta.status ? meta : { headers: retryAfterHeader(opts.errors) };
    },
  });
}

export { handler as GET, handler as POST };
