import { handleRevoke } from '@/features/mcp/oauth/endpoints';
import { preflight } from '@/features/mcp/oauth/http';

/** Token revocation (RFC 7009). See src/features/mcp/oauth/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function POST(req: Request): Promise<Response> {
  return handleRevoke(req);
}

export function OPTIONS(): Response {
  return preflight('POST');
}
