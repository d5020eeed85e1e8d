import { createAgentRoutes } from '@/features/in-app-agent/server/handler';

/** Stops an assistant run, on whichever instance runs it. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const POST = createAgentRoutes().cancel;
