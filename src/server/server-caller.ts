import 'server-only';
import { headers } from 'next/headers';
import type { PrismaClient } from '@/generated/prisma/client';
import { appRouter } from './api-root';
import type { SessionUser } from './auth';
import { createCallerFactory } from './trpc';

const createCaller = createCallerFactory(appRouter);

/**
 * A tRPC caller for server components, acting as the signed-in user of the current request, so
 * pages read data through the same procedures (and the same authorization) as the browser.
 */
export async function serverCaller(user: SessionUser, prisma: PrismaClient) {
  const req = new Request('http://localhost/server-component', { headers: new Headers(await headers()) });
  return createCaller({ req, user, prisma });
}

export type ServerCaller = Awaited<ReturnType<typeof serverCaller>>;
