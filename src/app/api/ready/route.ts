import { readyRoute } from '@/server/health';

/** Readiness: database reachable, migrations applied, not draining. See src/server/health.ts. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function GET(): Promise<Response> {
  return readyRoute();
}
