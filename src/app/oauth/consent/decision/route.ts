import { handleConsentDecision } from '@/features/mcp/oauth/authorize';

/** "Allow" or "Deny" on the consent page (same origin, signed in). See src/features/mcp/oauth/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function POST(req: Request): Promise<Response> {
  return handleConsentDecision(req);
}
