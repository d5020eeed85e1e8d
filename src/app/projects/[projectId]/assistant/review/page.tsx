import type { Metadata } from 'next';
import Link from 'next/link';
import { BudgetUsage } from '@/features/in-app-agent/components/review/BudgetUsage';
import { FeedbackExportForm } from '@/features/in-app-agent/components/review/FeedbackExportForm';
import {
  REVIEW_FILTERS,
  ReviewFilters,
  reviewHref,
  ReviewTable,
  type ReviewFilter,
} from '@/features/in-app-agent/components/review/ReviewTable';
import { DEFAULT_USAGE_DAYS, USAGE_RANGES, UsageSummary } from '@/features/in-app-agent/components/review/UsageSummary';
import { FeedbackReasonSchema } from '@/features/in-app-agent/schema';
import { reviewGate } from './access';
import { NotAllowed, PageIntro } from '@/features/tracker/components/ui';
import type { ProjectQueryPageProps } from '@/features/tracker/page-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Assistant review' };

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

export default async function AssistantReviewPage({ params, searchParams }: ProjectQueryPageProps) {
  const { projectId } = await params;
  const sp = await searchParams;
  const basePath = `/projects/${encodeURIComponent(projectId)}/assistant/review`;
  const gate = await reviewGate(projectId, basePath);
  if (gate.kind === 'forbidden')
    return <NotAllowed projectId={projectId} what="review assistant conversations" testId="review-not-allowed" />;

  const rawFilter = one(sp.filter);
  const filter: ReviewFilter = REVIEW_FILTERS.some((f) => f.value === rawFilter) ? (rawFilter as ReviewFilter) : 'all';
  // An unknown reason (an edited link) shows every conversation rather than an error.
  const parsedReason = FeedbackReasonSchema.safeParse(one(sp.reason));
  const reason = parsedReason.success ? parsedReason.data : null;
  const cursor = one(sp.cursor)?.slice(0, 200);
  // The usage period: one of the offered ranges; anything else (an edited link) shows the default.
  const rawDays = Number(one(sp.days));
  const days = USAGE_RANGES.find((d) => d === rawDays) ?? DEFAULT_USAGE_DAYS;
  const [data, usage, budgets] = await Promise.all([
    gate.caller.agent.review.list({
      projectId,
      filter,
      ...(reason ? { reason } : {}),
      ...(cursor ? { cursor } : {}),
    }),
    gate.caller.agent.review.usage({ projectId, days }),
    gate.caller.agent.budgets.get({ projectId }),
  ]);

  return (
    <main className="space-y-4" data-testid="review-page">
      <PageIntro title="Assistant review">
        Every assistant conversation in this project, newest first, with what its answers used. Open one to replay it
        read-only with its tool audit trail.
      </PageIntro>
      <p className="text-sm">
        <Link
          href={`${basePath}/datasets`}
          className="text-blue-700 underline dark:text-blue-300"
          data-testid="review-datasets-link"
        >
          Datasets and experiments
        </Link>
      </p>
      <UsageSummary usage={usage} hrefForDays={(d) => reviewHref(basePath, { filter, reason, days: d })} />
      <BudgetUsage data={budgets} />
      <FeedbackExportForm projectId={projectId} />
      <ReviewFilters basePath={basePath} current={filter} reason={reason} days={days} />
      <ReviewTable rows={data.items} basePath={basePath} />
      <nav aria-label="Pages" className="flex gap-4 text-sm">
        {cursor ? (
          <Link href={reviewHref(basePath, { filter, reason, days })} className="underline">
            Newest
          </Link>
        ) : null}
        {data.nextCursor ? (
          <Link
            href={reviewHref(basePath, { filter, reason, days, cursor: data.nextCursor })}
            className="underline"
            data-testid="review-next"
          >
            Older conversations
          </Link>
        ) : null}
      </nav>
    </main>
  );
}
