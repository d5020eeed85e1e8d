import { handleAuthorize } from '@/features/mcp/oauth/authorize';

/** The authorization endpoint: checks the request, then the consent page. See src/features/mcp/oauth/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function GET(req: Request): Promise<Response> {
  return handleAuthorize(req);
}
