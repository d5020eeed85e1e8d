import { handleRevoke } from '@/features/mcp/oauth/endpoints';
import { preflight } from '@/features/mcp/oauth/http';
import { withRequestContext } from '@/server/log';

/** Token revocation (RFC 7009). See src/features/mcp/oauth/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function POST(req: Request): Promise<Response> {
  return withRequestContext(req, () => handleRevoke(req));
}

export function OPTIONS(): Response {
  return preflight('POST');
}
