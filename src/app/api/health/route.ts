import { healthRoute } from '@/server/health';

/** Liveness: the process answers (no database query). See src/server/health.ts. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function GET(): Response {
  return healthRoute();
}
