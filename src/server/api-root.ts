import 'server-only';
import { agentRouter } from '@/features/in-app-agent/server/router';
import { mcpAdminRouter } from '@/features/mcp/router';
import { trackerRouter } from '@/features/tracker/router';
import { router } from './trpc';

/** The product's tRPC API: host domain, MCP administration, in-app agent. */
export const appRouter = router({
  tracker: trackerRouter,
  mcp: mcpAdminRouter,
  agent: agentRouter,
});
export type AppRouter = typeof appRouter;
