import type { Metadata } from 'next';
import { DatasetsStudio } from '@/features/in-app-agent/components/eval/DatasetsStudio';
import { NotAllowed, PageIntro } from '@/features/tracker/components/ui';
import type { ProjectQueryPageProps } from '@/features/tracker/page-access';
import { BackLink } from '../back-link';
import { studioGate } from './studio-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Assistant datasets' };

export default async function AssistantDatasetsPage({ params }: ProjectQueryPageProps) {
  const { projectId } = await params;
  const basePath = `/projects/${encodeURIComponent(projectId)}/assistant/review`;
  const gate = await studioGate(projectId, `${basePath}/datasets`);
  if (gate.kind === 'forbidden')
    return <NotAllowed projectId={projectId} what="review assistant conversations" testId="review-not-allowed" />;
  const datasets = await gate.caller.agent.eval.datasets.list({ projectId });
  return (
    <main className="space-y-4" data-testid="eval-datasets-page">
      <BackLink href={basePath}>All conversations</BackLink>
      <PageIntro title="Datasets and experiments">
        Rated answers become a regression suite: run them against another model, other instructions or other tool
        permissions and see which answers get better or worse before your users do.
      </PageIntro>
      <DatasetsStudio projectId={projectId} basePath={basePath} datasets={datasets} canManage={gate.canManage} />
    </main>
  );
}
