import { MCP_PATH } from '@/features/mcp/oauth/config';
import { protectedResourceMetadataResponse } from '@/features/mcp/oauth/endpoints';
import { corsHeaders, preflight } from '@/features/mcp/oauth/http';

/** RFC 9728 metadata, path-suffixed form: `/.well-known/oauth-protected-resource/api/public/mcp`. */
export const dynamic = 'force-dynamic';

export async function GET(_req: Request, ctx: { params: Promise<{ path: string[] }> }): Promise<Response> {
  const { path } = await ctx.params;
  if (`/${path.join('/')}` !== MCP_PATH) {
    return Response.json(
      { error: 'not_found', error_description: `The only protected resource is ${MCP_PATH}.` },
      { status: 404, headers: corsHeaders() },
    );
  }
  return protectedResourceMetadataResponse();
}

export function OPTIONS(): Response {
  return preflight('GET');
}
