import { authorizationServerMetadataResponse } from '@/features/mcp/oauth/endpoints';
import { preflight } from '@/features/mcp/oauth/http';

/** RFC 8414 metadata of the product's authorization server. See src/features/mcp/oauth/. */
export const dynamic = 'force-dynamic';

export function GET(): Response {
  return authorizationServerMetadataResponse();
}

export function OPTIONS(): Response {
  return preflight('GET');
}
