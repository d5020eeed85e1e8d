import { handleAuthRequest } from '@/server/auth-route';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

type RouteCtx = { params: Promise<{ nextauth: string[] }> };

async function handler(req: Request, ctx: RouteCtx): Promise<Response> {
  try {
    return await handleAuthRequest(req, ctx);
  } catch (err) {
    console.error(`[auth] request failed: ${(err as Error)?.name ?? 'Error'}`);
    return new Response(JSON.stringify({ error: { code: 'INTERNAL_ERROR', message: 'Something went wrong.' } }), {
      status: 500,
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
  }
}

export { handler as GET, handler as POST };
