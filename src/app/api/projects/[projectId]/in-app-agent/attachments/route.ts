import { createAttachmentRoutes } from '@/features/in-app-agent/server/attachment-routes';
import { withSecurityHeaders } from '@/server/security-headers';

/**
 * Uploads a file to attach to an assistant message. See src/features/in-app-agent/. The proxy does
 * not run before it (src/proxy.ts): it adds the security headers itself.
 */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const POST = withSecurityHeaders(createAttachmentRoutes().upload);
