import { createAgentRoutes } from '@/features/in-app-agent/server/handler';

/** Follows an assistant run from a position (Last-Event-ID or ?after=), or from a snapshot. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const GET = createAgentRoutes().events;
