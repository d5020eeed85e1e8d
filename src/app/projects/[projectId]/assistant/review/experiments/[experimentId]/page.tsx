import type { Metadata } from 'next';
import { ExperimentLive } from '@/features/in-app-agent/components/eval/ExperimentLive';
import { NotAllowed } from '@/features/tracker/components/ui';
import { orNotFound } from '../../access';
import { BackLink } from '../../back-link';
import { studioGate } from '../../datasets/studio-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Assistant experiment' };

export default async function AssistantExperimentPage({
  params,
}: {
  params: Promise<{ projectId: string; experimentId: string }>;
}) {
  const { projectId, experimentId } = await params;
  const basePath = `/projects/${encodeURIComponent(projectId)}/assistant/review`;
  const gate = await studioGate(projectId, `${basePath}/experiments/${encodeURIComponent(experimentId)}`);
  if (gate.kind === 'forbidden')
    return <NotAllowed projectId={projectId} what="review assistant conversations" testId="review-not-allowed" />;
  const data = await orNotFound(gate.caller.agent.eval.experiments.get({ projectId, experimentId }));
  return (
    <main className="space-y-4" data-testid="eval-experiment-page">
      <BackLink href={`${basePath}/datasets/${encodeURIComponent(data.dataset.id)}`}>{data.dataset.name}</BackLink>
      <h1 className="text-2xl font-semibold tracking-tight">Experiment: {data.name}</h1>
      <ExperimentLive projectId={projectId} initial={data} canManage={gate.canManage} />
    </main>
  );
}
