import type { Metadata } from 'next';
import { NewIssueForm } from '@/features/tracker/components/NewIssueForm';
import { NotAllowed, PageHeading } from '@/features/tracker/components/ui';
import { requireProjectPage } from '@/features/tracker/page-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'New issue · Tracker' };

export default async function NewIssuePage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const ctx = await requireProjectPage(projectId, `/projects/${projectId}/issues/new`);
  if (!ctx.can('issues:write')) return <NotAllowed projectId={projectId} what="create issues" />;
  const [members, labels] = await Promise.all([
    ctx.caller.tracker.members.list({ projectId: ctx.project.id }),
    ctx.caller.tracker.labels.list({ projectId: ctx.project.id }),
  ]);
  return (
    <main>
      <PageHeading title="New issue" />
      <NewIssueForm
        projectId={ctx.project.id}
        members={members.map((m) => ({ id: m.userId, name: m.name }))}
        labels={labels.map((l) => l.name)}
      />
    </main>
  );
}
