import { TRPCError } from '@trpc/server';
import { notFound } from 'next/navigation';
import { requireProjectPage } from '@/features/tracker/page-access';
import type { ServerCaller } from '@/server/server-caller';

export type ReviewGate = { kind: 'forbidden' } | { kind: 'ok'; caller: ServerCaller; canManage: boolean };

/**
 * The review pages are for ADMIN and OWNER (scope `agent:review`). Signed-out visitors go to the
 * login page, non-members get a 404 (both by `requireProjectPage`), other members a "not allowed"
 * page. The data comes from the `agent.review.*` procedures, which check the scope again.
 */
export async function reviewGate(projectId: string, path: string): Promise<ReviewGate> {
  const ctx = await requireProjectPage(projectId, path);
  if (!ctx.can('agent:review')) return { kind: 'forbidden' };
  return { kind: 'ok', caller: ctx.caller, canManage: ctx.can('agent:manage') };
}

/** True when a tRPC call failed with NOT_FOUND (e.g. a conversation of another project). */
function isNotFound(err: unknown): boolean {
  return err instanceof TRPCError && err.code === 'NOT_FOUND';
}

/** A review page's read: NOT_FOUND becomes the page's 404; any other failure propagates. */
export function orNotFound<T>(read: Promise<T>): Promise<T> {
  return read.catch((err: unknown) => {
    if (isNotFound(err)) notFound();
    throw err;
  });
}
