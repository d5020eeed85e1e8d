/**
 * Lines every request card (an approval, a question) shows the same way: the countdown of an open
 * request, and the line of a request that is no longer open here (expired, not answered, waiting
 * for its user).
 */
import type { ReactNode } from 'react';
import { formatCountdown } from '../approval';
import { ClockIcon, HourglassIcon } from '../icons';

/** "Expires in 4:59", in red in its last minute. */
export function ExpiresIn({ ms, at }: { ms: number; at: string | undefined }) {
  return (
    <p
      className={`text-xs ${ms < 60_000 ? 'font-semibold text-red-800 dark:text-red-300' : 'text-slate-600 dark:text-slate-300'}`}
    >
      <ClockIcon /> Expires in <time dateTime={at}>{formatCountdown(ms)}</time>
    </p>
  );
}

/**
 * The line of a request that is expired, was left unanswered, or waits for its user (nothing for
 * another state); `data-<dataKey>` carries the state.
 */
export function RequestStateLine({
  kind,
  testId,
  dataKey,
  expired,
  waitingDetail,
}: {
  kind: string;
  testId: string;
  dataKey: 'decision' | 'outcome';
  /** What an expired request came to. */
  expired: string;
  /** After "Open (waiting for the user)". */
  waitingDetail?: ReactNode;
}) {
  const data = (value: string) => ({ 'data-testid': testId, [`data-${dataKey}`]: value });
  if (kind === 'expired')
    return (
      <p className="mt-2 text-sm font-medium" {...data('expired')}>
        <HourglassIcon /> {expired}
      </p>
    );
  if (kind === 'unanswered')
    return (
      <p className="mt-2 text-sm text-slate-600 dark:text-slate-300" {...data('unanswered')}>
        Not answered: a new message was sent instead.
      </p>
    );
  if (kind === 'waiting')
    return (
      <p className="mt-2 text-sm font-medium" {...data('waiting')}>
        <ClockIcon /> Open (waiting for the user)
        {waitingDetail}
      </p>
    );
  return null;
}
