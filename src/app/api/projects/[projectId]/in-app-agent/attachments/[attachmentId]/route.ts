import { createAttachmentRoutes } from '@/features/in-app-agent/server/attachment-routes';

/** Serves an attachment (its uploader, the project's reviewers) or removes an unsent one. */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

const routes = createAttachmentRoutes();
export const GET = routes.serve;
export const DELETE = routes.remove;
