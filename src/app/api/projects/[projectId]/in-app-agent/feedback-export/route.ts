import { createFeedbackExportHandler } from '@/features/in-app-agent/server/feedback-export';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const GET = createFeedbackExportHandler();
