// Budget windows, the sentences that name a budget, the state after a run, and the panel's 80 %
// warning (once per budget and window); the title's count and when a notification is due.
import { describe, expect, it } from 'vitest';
import {
  type BudgetState,
  budgetSpentSentence,
  budgetsAfterRun,
  budgetToWarn,
  budgetWindow,
} from '@/features/in-app-agent/budgets';
import { budgetWarningFor } from '@/features/in-app-agent/components/budget-warning';
import {
  finishedNotice,
  LONG_ANSWER_MS,
  outOfSight,
  titleWithCount,
  waitingNotice,
} from '@/features/in-app-agent/components/waiting/attention';

const at = (iso: string) => new Date(iso);

describe('budget windows (UTC)', () => {
  it.each([
    ['MEMBER_DAY', '2026-03-14T23:59:59.999Z', '2026-03-14T00:00:00.000Z', '2026-03-15T00:00:00.000Z'],
    ['MEMBER_DAY', '2026-03-15T00:00:00.000Z', '2026-03-15T00:00:00.000Z', '2026-03-16T00:00:00.000Z'],
    ['MEMBER_DAY', '2026-12-31T12:00:00.000Z', '2026-12-31T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['MEMBER_DAY', '2028-02-28T10:00:00.000Z', '2028-02-28T00:00:00.000Z', '2028-02-29T00:00:00.000Z'],
    ['MEMBER_MONTH', '2026-02-28T23:00:00.000Z', '2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['PROJECT_MONTH', '2026-12-31T23:59:59.000Z', '2026-12-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['PROJECT_MONTH', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
  ] as const)('%s at %s: [%s, %s)', (scope, when, start, end) => {
    const w = budgetWindow(scope, at(when));
    expect([w.start.toISOString(), w.end.toISOString()]).toEqual([start, end]);
  });

  it('a time zone ahead of UTC does not move the window (the day is the UTC day)', () => {
    // 00:30 on 15 March in UTC+2 is 22:30 on 14 March UTC.
    expect(budgetWindow('MEMBER_DAY', at('2026-03-15T00:30:00+02:00')).start.toISOString()).toBe(
      '2026-03-14T00:00:00.000Z',
    );
  });
});

const budget = (over: Partial<BudgetState>): BudgetState => ({
  scope: 'MEMBER_DAY',
  unit: 'TOKENS',
  amount: 1000,
  spent: 0,
  endsAt: '2026-03-15T00:00:00Z',
  ...over,
});

describe('budget sentences', () => {
  it('names the budget, its amount and when it renews', () => {
    expect(budgetSpentSentence(budget({ amount: 20000 }))).toMatch(
      /^You have used your daily assistant budget in this project \(20,000 tokens\)\. It renews at 00:00 UTC;/,
    );
    expect(
      budgetSpentSentence(budget({ scope: 'MEMBER_MONTH', unit: 'USD', amount: 10, endsAt: '2026-04-01T00:00:00Z' })),
    ).toMatch(
      /^You have used your monthly assistant budget in this project \(\$10\.00\)\. It renews on 1 April at 00:00 UTC;/,
    );
    expect(
      budgetSpentSentence(budget({ scope: 'PROJECT_MONTH', unit: 'USD', amount: 500, endsAt: '2027-01-01T00:00:00Z' })),
    ).toMatch(
      /^This project has used its monthly assistant budget \(\$500\.00\)\. It renews on 1 January at 00:00 UTC;/,
    );
  });
});

describe('budgets after a run, and the warning', () => {
  it('adds the run’s tokens or cost by unit', () => {
    const after = budgetsAfterRun(
      [budget({ spent: 100 }), budget({ scope: 'PROJECT_MONTH', unit: 'USD', amount: 1, spent: 0.5 })],
      { inputTokens: 30, outputTokens: 12, costUsd: 0.25 },
    );
    expect(after.map((b) => b.spent)).toEqual([142, 0.75]);
    expect(budgetsAfterRun([budget({ spent: 7 })], undefined)[0]?.spent).toBe(7);
  });

  it('warns from 80 % on, about the most used budget', () => {
    expect(budgetToWarn([budget({ spent: 799 })])).toBeNull();
    expect(budgetToWarn([budget({ spent: 800 })])?.scope).toBe('MEMBER_DAY');
    expect(
      budgetToWarn([
        budget({ spent: 850 }),
        budget({ scope: 'MEMBER_MONTH', spent: 990, endsAt: '2026-04-01T00:00:00Z' }),
      ])?.scope,
    ).toBe('MEMBER_MONTH');
  });

  it('says it once per budget and window, politely worded, and again in the next window', () => {
    const value = { budgets: [budget({ spent: 850 })] };
    const first = budgetWarningFor(value, []);
    expect(first?.text).toBe(
      'Your daily assistant budget in this project is 85 % used (850 tokens of 1,000 tokens). It renews at 00:00 UTC.',
    );
    expect(budgetWarningFor({ budgets: [budget({ spent: 990 })] }, first!.warned)).toBeNull();
    const nextDay = budgetWarningFor(
      { budgets: [budget({ spent: 900, endsAt: '2026-03-16T00:00:00Z' })] },
      first!.warned,
    );
    expect(nextDay?.warned).toHaveLength(2);
    expect(budgetWarningFor({ budgets: [budget({ spent: 10 })] }, [])).toBeNull();
    expect(budgetWarningFor({ nonsense: true }, [])).toBeNull();
  });
});

describe('what catches the eye', () => {
  it('puts the count in front of the title, once, and takes it away', () => {
    expect(titleWithCount('Issues · Tracker', 2)).toBe('(2) Issues · Tracker');
    expect(titleWithCount('(2) Issues · Tracker', 3)).toBe('(3) Issues · Tracker');
    expect(titleWithCount('(3) Issues · Tracker', 0)).toBe('Issues · Tracker');
  });

  it('notifies only out of sight: panel closed or tab hidden', () => {
    expect(outOfSight({ panelOpen: true, hidden: false })).toBe(false);
    expect(outOfSight({ panelOpen: false, hidden: false })).toBe(true);
    expect(outOfSight({ panelOpen: true, hidden: true })).toBe(true);
  });

  it('notifies requests that came to wait, not the ones found on the first look', () => {
    const list = (total: number) => ({
      total,
      conversations: [{ conversationId: 'cv_1', title: 'Release', approvals: total, questions: 0 }],
    });
    expect(waitingNotice(null, list(2))).toBeNull();
    expect(waitingNotice(2, list(2))).toBeNull();
    expect(waitingNotice(2, list(1))).toBeNull();
    expect(waitingNotice(0, list(1))).toMatchObject({
      title: 'Assistant: An approval waits for you',
      body: 'In “Release”.',
      conversationId: 'cv_1',
    });
    expect(
      waitingNotice(1, {
        total: 3,
        conversations: [{ conversationId: 'cv_2', title: 'Q', approvals: 1, questions: 2 }],
      })?.title,
    ).toBe('Assistant: 3 requests wait for you');
  });

  it('notifies a long answer that finished, not a short one nor one that stopped', () => {
    const base = { startedAt: 0, conversationId: 'cv_1', title: null };
    expect(finishedNotice({ ...base, endedAt: LONG_ANSWER_MS - 1, completed: true })).toBeNull();
    expect(finishedNotice({ ...base, endedAt: LONG_ANSWER_MS, completed: false })).toBeNull();
    expect(finishedNotice({ ...base, endedAt: LONG_ANSWER_MS, completed: true })?.title).toBe(
      'Assistant: your answer is ready',
    );
  });
});
