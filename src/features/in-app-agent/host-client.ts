/**
 * Everything the module's browser side takes from its host: the typed tRPC client of the panel.
 * Kept apart from `host.ts` (server only) so nothing of the server reaches the browser bundle;
 * `AppRouter` is a type and leaves no code behind.
 */
export { useTRPCClient } from '@/lib/trpc/client';
export type { AppRouter } from '@/server/api-root';
