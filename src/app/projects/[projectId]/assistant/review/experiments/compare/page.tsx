import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { Comparison } from '@/features/in-app-agent/components/eval/Comparison';
import { NotAllowed } from '@/features/tracker/components/ui';
import type { ProjectQueryPageProps } from '@/features/tracker/page-access';
import { orNotFound } from '../../access';
import { BackLink } from '../../back-link';
import { studioGate } from '../../datasets/studio-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Assistant experiments compared' };

const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.slice(0, 64) ?? '';

export default async function AssistantComparisonPage({ params, searchParams }: ProjectQueryPageProps) {
  const { projectId } = await params;
  const sp = await searchParams;
  const basePath = `/projects/${encodeURIComponent(projectId)}/assistant/review`;
  const gate = await studioGate(projectId, `${basePath}/experiments/compare`);
  if (gate.kind === 'forbidden')
    return <NotAllowed projectId={projectId} what="review assistant conversations" testId="review-not-allowed" />;
  const [baseId, otherId] = [one(sp.base), one(sp.other)];
  if (!baseId || !otherId) notFound();
  const data = await orNotFound(gate.caller.agent.eval.experiments.compare({ projectId, baseId, otherId }));
  return (
    <main className="space-y-4" data-testid="eval-comparison-page">
      <BackLink href={`${basePath}/datasets/${encodeURIComponent(data.dataset.id)}`}>{data.dataset.name}</BackLink>
      <h1 className="text-2xl font-semibold tracking-tight">Comparison</h1>
      <Comparison data={data} />
    </main>
  );
}
