import { handleRegister } from '@/features/mcp/oauth/endpoints';
import { preflight } from '@/features/mcp/oauth/http';

/** Dynamic Client Registration (RFC 7591). See src/features/mcp/oauth/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function POST(req: Request): Promise<Response> {
  return handleRegister(req);
}

export function OPTIONS(): Response {
  return preflight('POST');
}
