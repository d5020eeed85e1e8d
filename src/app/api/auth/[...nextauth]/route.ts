import NextAuth from 'next-auth';
import { authOptions } from '@/server/auth';

export const dynamic = 'force-dynamic';

type RouteCtx = { params: Promise<{ nextauth: string[] }> };

async function handler(req: Request, ctx: RouteCtx): Promise<Response> {
  return NextAuth(req as never, ctx as never, authOptions()) as Promise<Response>;
}

export { handler as GET, handler as POST };
