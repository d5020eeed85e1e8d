import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ReviewFilters, ReviewTable, type ReviewRow } from '@/features/in-app-agent/components/review/ReviewTable';

const row = (over: Partial<ReviewRow> = {}): ReviewRow => ({
  id: 'cv_1',
  title: 'Login help',
  user: { id: 'u1', name: 'Ann', email: 'ann@example.com' },
  updatedAt: '2026-01-02T03:04:05.000Z',
  lastRunStatus: 'COMPLETED',
  negativeFeedback: 1,
  positiveFeedback: 0,
  approvals: 2,
  toolCalls: 3,
  ...over,
});

const render = (rows: ReviewRow[]) => renderToStaticMarkup(createElement(ReviewTable, { rows, basePath: '/projects/p/assistant/review' }));

describe('ReviewTable', () => {
  it('marks a conversation its user deleted, and only that one', () => {
    const html = render([row({ id: 'cv_gone', deleted: true }), row({ id: 'cv_kept', deleted: false }), row({ id: 'cv_old' })]);
    expect(html.match(/data-testid="review-deleted"/g)).toHaveLength(1);
    expect(html).toMatch(/data-conversation-id="cv_gone" data-deleted="true"/);
    expect(html).toContain('deleted by user');
    expect(html).not.toMatch(/data-conversation-id="cv_kept" data-deleted/);
  });

  it('shows user, outcome, feedback, approvals and tool calls', () => {
    const html = render([row()]);
    expect(html).toContain('Ann');
    expect(html).toContain('data-outcome="COMPLETED"');
    expect(html).toContain('data-negative="1"');
    expect(html).toContain('href="/projects/p/assistant/review/cv_1"');
  });

  it('names the reasons of a conversation’s thumbs down', () => {
    const html = render([row({ reasons: ['wrong', 'did_not_follow_instructions'] }), row({ id: 'cv_2' })]);
    expect(html.match(/data-testid="review-reasons"/g)).toHaveLength(1);
    expect(html).toContain('data-reasons="wrong did_not_follow_instructions"');
    expect(html).toContain('Wrong, Did not follow instructions');
  });
});

describe('ReviewFilters', () => {
  it('links every reason, keeping the other filter, and marks the current one', () => {
    const props = { basePath: '/r', current: 'negative', reason: 'slow' } as const;
    const html = renderToStaticMarkup(createElement(ReviewFilters, props));
    expect(html).toContain('href="/r?filter=negative&amp;reason=wrong"');
    expect(html).toContain('href="/r?filter=negative"');
    const tag = (testId: string) => html.match(new RegExp(`<a[^>]*data-testid="${testId}"[^>]*>`))?.[0] ?? '';
    expect(tag('review-reason-slow')).toContain('aria-current="page"');
    expect(tag('review-reason-slow')).toContain('href="/r?filter=negative&amp;reason=slow"');
    expect(tag('review-reason-wrong')).not.toContain('aria-current');
    // Switching the first filter keeps the reason.
    expect(html).toContain('href="/r?filter=failed&amp;reason=slow"');
    expect(html).toContain('href="/r?reason=slow"');
  });
});
