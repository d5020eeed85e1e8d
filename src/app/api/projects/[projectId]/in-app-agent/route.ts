import { createAgentRoutes } from '@/features/in-app-agent/server/handler';
import { withSecurityHeaders } from '@/server/security-headers';

/**
 * Starts an assistant run (AG-UI over SSE). See src/features/in-app-agent/. The proxy does not run
 * before it (src/proxy.ts): it adds the security headers itself.
 */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const POST = withSecurityHeaders(createAgentRoutes().start);
