import { requireProjectPage } from '@/features/tracker/page-access';
import type { ServerCaller } from '@/server/server-caller';

export type StudioGate = { kind: 'forbidden' } | { kind: 'ok'; caller: ServerCaller; canManage: boolean };

/**
 * The evaluation studio's pages: read by ADMIN and OWNER (`agent:review`); creating datasets and
 * running experiments needs `agent:manage` (the procedures check both again).
 */
export async function studioGate(projectId: string, path: string): Promise<StudioGate> {
  const ctx = await requireProjectPage(projectId, path);
  if (!ctx.can('agent:review')) return { kind: 'forbidden' };
  return { kind: 'ok', caller: ctx.caller, canManage: ctx.can('agent:manage') };
}
