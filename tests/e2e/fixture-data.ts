/**
 * What the browser tests' fixtures (tests/e2e/fixtures.ts) write and the tests look for: a
 * conversation of the demo member longer than one page of the panel, one of the demo owner longer
 * than a page of the assistant review, and a project of its own for
 * the budget and waiting tests (its budgets and approvals touch no other test).
 */
import { LIMITS } from '@/features/in-app-agent/constants';

export const LONG_CONVERSATION = {
  id: 'cv_e2e_long_conversation',
  title: 'A long conversation',
  owner: 'member@example.com',
  /** More turns than the panel's first page holds (five are left for "Show earlier messages"). */
  turns: LIMITS.replayPageRuns + 5,
  question: (n: number) => `Question number ${n}`,
  answer: (n: number) => `Answer number ${n}.`,
} as const;

/** A conversation of the demo owner one run longer than a page of the assistant review. */
export const REVIEW_CONVERSATION = {
  id: 'cv_e2e_review_pages',
  title: 'Earlier notes',
  owner: 'owner@example.com',
  turns: LIMITS.replayPageRuns + 1,
  question: (n: number) => `Earlier note ${String(n).padStart(2, '0')}`,
  answer: (n: number) => `Noted (${n}).`,
} as const;

/** A project of the demo owner (OWNER) and member (MEMBER) with no data of its own. */
export const BUDGET_PROJECT = {
  slug: 'budget-lab',
  name: 'Budget lab',
  owner: 'owner@example.com',
  member: 'member@example.com',
} as const;
