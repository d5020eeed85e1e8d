import { createAttachmentRoutes } from '@/features/in-app-agent/server/attachment-routes';

/** Uploads a file to attach to an assistant message. See src/features/in-app-agent/. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const POST = createAttachmentRoutes().upload;
