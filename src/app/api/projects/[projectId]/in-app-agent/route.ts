import { createAgentRoutes } from '@/features/in-app-agent/server/handler';

/** Starts an assistant run (AG-UI over SSE). See src/features/in-app-agent/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const POST = createAgentRoutes().start;
