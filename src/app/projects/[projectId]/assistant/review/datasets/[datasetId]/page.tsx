import type { Metadata } from 'next';
import { DatasetDetail } from '@/features/in-app-agent/components/eval/DatasetDetail';
import { NotAllowed } from '@/features/tracker/components/ui';
import { orNotFound } from '../../access';
import { BackLink } from '../../back-link';
import { studioGate } from '../studio-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Assistant dataset' };

export default async function AssistantDatasetPage({
  params,
}: {
  params: Promise<{ projectId: string; datasetId: string }>;
}) {
  const { projectId, datasetId } = await params;
  const basePath = `/projects/${encodeURIComponent(projectId)}/assistant/review`;
  const gate = await studioGate(projectId, `${basePath}/datasets/${encodeURIComponent(datasetId)}`);
  if (gate.kind === 'forbidden')
    return <NotAllowed projectId={projectId} what="review assistant conversations" testId="review-not-allowed" />;
  const data = await orNotFound(gate.caller.agent.eval.datasets.get({ projectId, datasetId }));
  return (
    <main className="space-y-4" data-testid="eval-dataset-page">
      <BackLink href={`${basePath}/datasets`}>All datasets</BackLink>
      <h1 className="text-2xl font-semibold tracking-tight">{data.name}</h1>
      <DatasetDetail projectId={projectId} basePath={basePath} data={data} canManage={gate.canManage} />
    </main>
  );
}
