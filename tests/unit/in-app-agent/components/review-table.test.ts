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

const render = (rows: ReviewRow[]) =>
  renderToStaticMarkup(createElement(ReviewTable, { rows, basePath: '/projects/p/assistant/review' }));

describe('ReviewTable', () => {
  it('marks a conversation its user deleted, and only that one', () => {
    const html = render([
      row({ id: 'cv_gone', deleted: true }),
      row({ id: 'cv_kept', deleted: false }),
      row({ id: 'cv_old' }),
    ]);
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

describe('ReviewTable usage', () => {
  it('shows each conversation’s tokens in and out, and its cost when priced', () => {
    const html = render([
      row({ id: 'cv_priced', usage: { inputTokens: 12_345, outputTokens: 678, costUsd: 0.047205 } }),
      row({ id: 'cv_free', usage: { inputTokens: 10, outputTokens: 2, costUsd: null } }),
      row({ id: 'cv_none' }),
    ]);
    expect(html).toContain('<th scope="col" class="py-2 pr-3 text-right">Usage</th>');
    expect(html).toContain('data-input-tokens="12345" data-output-tokens="678" data-cost-usd="0.047205"');
    expect(html).toContain('12,345 in · 678 out');
    expect(html).toContain('$0.0472');
    expect(html).toContain('10 in · 2 out');
    expect(html.match(/data-testid="review-usage-cost"/g)).toHaveLength(1);
    expect(html).toContain('0 in · 0 out');
  });

  it('keeps the usage period in the filter links, leaving the default out', () => {
    const html = renderToStaticMarkup(createElement(ReviewFilters, { basePath: '/r', current: 'all', days: 7 }));
    expect(html).toContain('href="/r?filter=failed&amp;days=7"');
    expect(html).toContain('href="/r?reason=wrong&amp;days=7"');
    const plain = renderToStaticMarkup(createElement(ReviewFilters, { basePath: '/r', current: 'all', days: 30 }));
    expect(plain).toContain('href="/r?filter=failed"');
  });
});
