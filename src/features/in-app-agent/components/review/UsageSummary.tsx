/**
 * What the project's assistant used (ADMIN/OWNER review): tokens in and out and, when the model's
 * prices are configured, the cost in US dollars, per conversation (a cell of the review list) and
 * for the project per day and per user over a chosen range. Prop-driven, no hooks: renders on the
 * server.
 */
import Link from 'next/link';
import type { ReactNode } from 'react';
import { approximately, ESTIMATE_TITLE, formatTokens, formatUsd } from '../usage-format';

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  /** Null when no answer counted here was priced. */
  costUsd: number | null;
  /** One of the answers counted here has an estimated part (stopped or failed mid-answer): shown "≈". */
  estimated?: boolean;
}

export interface ProjectUsage {
  days: number;
  byDay: Array<UsageTotals & { day: string; runs: number }>;
  byUser: Array<UsageTotals & { user: { id: string; name: string }; runs: number }>;
  total: UsageTotals & { runs: number };
}

/** The periods the review offers, in days back from now; `DEFAULT_USAGE_DAYS` is shown without `?days=`. */
export const USAGE_RANGES = [7, 30, 90] as const;
export const DEFAULT_USAGE_DAYS = 30;

function Cost({ usd, estimated }: { usd: number | null; estimated?: boolean }) {
  if (usd === null) {
    return (
      <span title="No price configured" className="text-slate-600 dark:text-slate-300">
        <span aria-hidden="true">—</span>
        <span className="sr-only">no price configured</span>
      </span>
    );
  }
  return <>{approximately(estimated, formatUsd(usd))}</>;
}

/** The review list's cell: "1,204 in · 96 out" and the cost below it ("≈" when partly estimated). */
export function UsageCell({ usage }: { usage: UsageTotals }) {
  return (
    <td
      className="py-2 pr-3 text-right whitespace-nowrap"
      data-testid="review-usage"
      data-input-tokens={usage.inputTokens}
      data-output-tokens={usage.outputTokens}
      data-cost-usd={usage.costUsd ?? undefined}
      data-estimated={usage.estimated || undefined}
      title={usage.estimated ? ESTIMATE_TITLE : undefined}
    >
      {approximately(
        usage.estimated,
        `${formatTokens(usage.inputTokens)} in · ${formatTokens(usage.outputTokens)} out`,
      )}
      {usage.costUsd !== null ? (
        <span className="block text-xs text-slate-600 dark:text-slate-300" data-testid="review-usage-cost">
          {approximately(usage.estimated, formatUsd(usage.costUsd))}
        </span>
      ) : null}
    </td>
  );
}

const TH = 'py-1.5 pr-3 font-medium';
const TD = 'py-1.5 pr-3 text-right tabular-nums whitespace-nowrap';

function UsageRow(props: { label: string; totals: UsageTotals & { runs: number }; testId: string; keyValue: string }) {
  const { label, totals, testId, keyValue } = props;
  return (
    <tr
      className="border-b border-slate-200 dark:border-slate-800"
      data-testid={testId}
      data-key={keyValue}
      data-runs={totals.runs}
      data-input-tokens={totals.inputTokens}
      data-output-tokens={totals.outputTokens}
      data-cost-usd={totals.costUsd ?? undefined}
      data-estimated={totals.estimated || undefined}
      title={totals.estimated ? ESTIMATE_TITLE : undefined}
    >
      <th scope="row" className="py-1.5 pr-3 text-left font-normal">
        {label}
      </th>
      <td className={TD}>{formatTokens(totals.runs)}</td>
      <td className={TD}>{approximately(totals.estimated, formatTokens(totals.inputTokens))}</td>
      <td className={TD}>{approximately(totals.estimated, formatTokens(totals.outputTokens))}</td>
      <td className={TD}>
        <Cost usd={totals.costUsd} estimated={totals.estimated} />
      </td>
    </tr>
  );
}

function UsageTable(props: {
  caption: string;
  first: string;
  testId: string;
  children: ReactNode;
  total: ProjectUsage['total'];
}) {
  return (
    <table className="min-w-full border-collapse text-sm" data-testid={props.testId}>
      <caption className="pb-1 text-left font-semibold">{props.caption}</caption>
      <thead>
        <tr className="border-b border-slate-300 text-left dark:border-slate-700">
          <th scope="col" className={TH}>
            {props.first}
          </th>
          <th scope="col" className={`${TH} text-right`}>
            Answers
          </th>
          <th scope="col" className={`${TH} text-right`}>
            Tokens in
          </th>
          <th scope="col" className={`${TH} text-right`}>
            Tokens out
          </th>
          <th scope="col" className={`${TH} text-right`}>
            Cost
          </th>
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
      <tfoot className="font-semibold">
        <UsageRow label="Total" totals={props.total} testId={`${props.testId}-total`} keyValue="total" />
      </tfoot>
    </table>
  );
}

/** Usage per day (UTC) and per user over the last `usage.days` days, with the range to choose. */
export function UsageSummary({ usage, hrefForDays }: { usage: ProjectUsage; hrefForDays: (days: number) => string }) {
  const priced = usage.total.costUsd !== null;
  return (
    <section
      aria-labelledby="review-usage-title"
      className="space-y-3 rounded-lg border border-slate-200 p-3 dark:border-slate-800"
      data-testid="review-usage-summary"
      data-days={usage.days}
    >
      <div className="flex flex-wrap items-center justify-between gap-2">
        <h2 id="review-usage-title" className="text-lg font-semibold">
          Usage
        </h2>
        <nav aria-label="Usage period" className="flex flex-wrap gap-2 text-sm">
          {USAGE_RANGES.map((d) => (
            <Link
              key={d}
              href={hrefForDays(d)}
              aria-current={usage.days === d ? 'page' : undefined}
              data-testid={`review-usage-days-${d}`}
              className={`rounded-full border px-3 py-1 ${
                usage.days === d
                  ? 'border-blue-700 bg-blue-700 text-white'
                  : 'border-slate-300 hover:bg-slate-100 dark:border-slate-600 dark:hover:bg-slate-800'
              }`}
            >
              Last {d} days
            </Link>
          ))}
        </nav>
      </div>
      <p className="text-sm text-slate-600 dark:text-slate-300">
        Answers of the assistant in this project started in the last {usage.days} days (days in UTC).
        {priced ? '' : ' Costs show once the model’s prices are configured.'}
        {usage.total.estimated
          ? ' ≈: partly estimated (answers stopped or failed while the model was writing; the provider reported nothing for that part).'
          : ''}
      </p>
      {usage.total.runs === 0 ? (
        <p className="text-sm" data-testid="review-usage-empty">
          No answers in this period.
        </p>
      ) : (
        <div className="relative grid gap-4 overflow-x-auto lg:grid-cols-2">
          <UsageTable caption="Per day" first="Day" testId="review-usage-by-day" total={usage.total}>
            {usage.byDay.map((d) => (
              <UsageRow key={d.day} label={d.day} totals={d} testId="review-usage-day" keyValue={d.day} />
            ))}
          </UsageTable>
          <UsageTable caption="Per user" first="User" testId="review-usage-by-user" total={usage.total}>
            {usage.byUser.map((u) => (
              <UsageRow
                key={u.user.id}
                label={u.user.name || u.user.id}
                totals={u}
                testId="review-usage-user"
                keyValue={u.user.id}
              />
            ))}
          </UsageTable>
        </div>
      )}
    </section>
  );
}
