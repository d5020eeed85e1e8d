import { preflight, withCors } from '@/features/mcp/oauth/http';
import { handleMcpPost, methodNotAllowed } from '@/features/mcp/server';

/** The product's MCP server (Streamable HTTP, stateless). See src/features/mcp/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export async function POST(req: Request): Promise<Response> {
  return withCors(await handleMcpPost(req));
}

export function GET(): Response {
  return withCors(methodNotAllowed());
}

export function DELETE(): Response {
  return withCors(methodNotAllowed());
}

/** CORS preflight of browser-based MCP clients: answered without credentials, never 401. */
export function OPTIONS(): Response {
  return preflight('POST');
}
