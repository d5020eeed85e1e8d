import { handleToken } from '@/features/mcp/oauth/endpoints';
import { preflight } from '@/features/mcp/oauth/http';

/** The token endpoint (authorization code with PKCE, refresh with rotation). See src/features/mcp/oauth/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function POST(req: Request): Promise<Response> {
  return handleToken(req);
}

export function OPTIONS(): Response {
  return preflight('POST');
}
