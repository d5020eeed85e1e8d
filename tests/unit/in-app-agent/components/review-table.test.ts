import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ReviewTable, type ReviewRow } from '@/features/in-app-agent/components/review/ReviewTable';

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
});
