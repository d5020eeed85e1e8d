import { createAgentHandler } from '@/features/in-app-agent/server/handler';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const POST = createAgentHandler();
