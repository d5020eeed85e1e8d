import { redirect } from 'next/navigation';
import { requireProjectPage } from '@/features/tracker/page-access';

export const dynamic = 'force-dynamic';

/** A project's home is its issue list. */
export default async function ProjectHome({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const ctx = await requireProjectPage(projectId, `/projects/${projectId}`);
  redirect(`/projects/${encodeURIComponent(ctx.project.id)}/issues`);
}
