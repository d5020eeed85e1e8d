import { handleMcpPost, methodNotAllowed } from '@/features/mcp/server';
import { withRequestContext } from '@/server/log';

/** The product's MCP server (Streamable HTTP, stateless). See src/features/mcp/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export function POST(req: Request): Promise<Response> {
  return withRequestContext(req, () => handleMcpPost(req));
}

export function GET(): Response {
  return methodNotAllowed();
}

export function DELETE(): Response {
  return methodNotAllowed();
}
