import type { Metadata } from 'next';
import { AddToDataset } from '@/features/in-app-agent/components/eval/AddToDataset';
import { AuditTrail } from '@/features/in-app-agent/components/review/AuditTrail';
import { ReviewConversation } from '@/features/in-app-agent/components/review/ReviewConversation';
import { ReviewExport } from '@/features/in-app-agent/components/review/ReviewExport';
import { RunOutcome } from '@/features/in-app-agent/components/review/ReviewTable';
import { SettingsUsed } from '@/features/in-app-agent/components/review/SettingsUsed';
import {
  approximately,
  ESTIMATE_TITLE,
  formatTokens,
  formatUsd,
} from '@/features/in-app-agent/components/usage-format';
import { orNotFound, reviewGate } from '../access';
import { BackLink } from '../back-link';
import { NotAllowed } from '@/features/tracker/components/ui';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Assistant review: conversation' };

export default async function AssistantReviewConversationPage({
  params,
}: {
  params: Promise<{ projectId: string; conversationId: string }>;
}) {
  const { projectId, conversationId } = await params;
  const basePath = `/projects/${encodeURIComponent(projectId)}/assistant/review`;
  const gate = await reviewGate(projectId, `${basePath}/${encodeURIComponent(conversationId)}`);
  if (gate.kind === 'forbidden')
    return <NotAllowed projectId={projectId} what="review assistant conversations" testId="review-not-allowed" />;

  const data = await orNotFound(gate.caller.agent.review.get({ projectId, conversationId }));
  const lastRun = data.view.runs[data.view.runs.length - 1];
  const lastStatus = lastRun
    ? (
        {
          running: 'RUNNING',
          completed: 'COMPLETED',
          interrupted: 'INTERRUPTED',
          cancelled: 'ABORTED',
          failed: 'FAILED',
        } as const
      )[lastRun.status]
    : null;
  const model = [...data.view.runs].reverse().find((r) => r.model)?.model;
  // Datasets of the evaluation studio this conversation's turns can be added to (agent:manage).
  const datasets = gate.canManage ? await gate.caller.agent.eval.datasets.list({ projectId }) : [];
  const turns = data.view.messages.flatMap((m, i, all) => {
    if (m.role !== 'assistant') return [];
    const next = all.slice(i + 1).find((n) => n.role !== 'tool');
    if (next && next.role !== 'user') return [];
    const question = all.slice(0, i).findLast((n) => n.role === 'user');
    return question ? [{ messageId: m.id, question: question.content }] : [];
  });

  return (
    <main className="space-y-4" data-testid="review-conversation">
      <BackLink href={basePath}>All conversations</BackLink>
      <div className="flex flex-wrap items-start justify-between gap-3">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">
            {data.conversation.title || 'Untitled conversation'}
          </h1>
          <p className="text-sm text-slate-600 dark:text-slate-300">
            {data.user.name || data.user.email} ({data.user.email}) · started{' '}
            <time dateTime={data.conversation.createdAt.toISOString()}>
              {data.conversation.createdAt.toISOString().replace('T', ' ').slice(0, 16)} UTC
            </time>{' '}
            · {/* With earlier pages the count is of the newest page (the whole tree is in the export). */}
            {data.olderBefore ? 'latest ' : ''}
            {data.view.runs.length} run{data.view.runs.length === 1 ? '' : 's'} · last:{' '}
            <RunOutcome status={lastStatus} />
            {model ? ` · model ${model.label}` : ''}
            {data.conversation.deletedAt ? ' · deleted by the user' : ''}
            <span
              data-testid="review-conversation-usage"
              data-estimated={data.usage.estimated || undefined}
              title={data.usage.estimated ? ESTIMATE_TITLE : undefined}
            >
              {' '}
              ·{' '}
              {approximately(
                data.usage.estimated,
                `${formatTokens(data.usage.inputTokens)} tokens in, ${formatTokens(data.usage.outputTokens)} out`,
              )}
              {data.usage.costUsd !== null
                ? `, ${approximately(data.usage.estimated, formatUsd(data.usage.costUsd))}`
                : ''}
            </span>
          </p>
        </div>
        <ReviewExport projectId={projectId} conversationId={conversationId} />
      </div>
      <AddToDataset projectId={projectId} conversationId={conversationId} datasets={datasets} turns={turns} />
      <div className="grid gap-6 lg:grid-cols-[minmax(0,3fr)_minmax(0,2fr)]">
        <section
          aria-label="Conversation (read-only)"
          className="rounded-lg border border-slate-200 p-3 dark:border-slate-800"
        >
          <ReviewConversation
            projectId={projectId}
            conversationId={conversationId}
            view={data.view}
            olderBefore={data.olderBefore}
            feedback={data.feedback}
            now={Date.now()}
          />
        </section>
        <aside aria-label="Audit trail" className="space-y-4">
          <SettingsUsed used={data.settingsUsed} />
          <AuditTrail audit={data.audit} approvals={data.approvals} />
        </aside>
      </div>
    </main>
  );
}
