import { protectedResourceMetadataResponse } from '@/features/mcp/oauth/endpoints';
import { preflight } from '@/features/mcp/oauth/http';

/** RFC 9728 metadata of the MCP endpoint (the only protected resource). See src/features/mcp/oauth/. */
export const dynamic = 'force-dynamic';

export function GET(): Response {
  return protectedResourceMetadataResponse();
}

export function OPTIONS(): Response {
  return preflight('GET');
}
