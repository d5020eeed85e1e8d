import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { joinViews } from '@/features/in-app-agent/components/review/ReviewConversation';
import { UsageSummary, type ProjectUsage } from '@/features/in-app-agent/components/review/UsageSummary';
import type { ConversationView } from '@/features/in-app-agent/schema';

const usage = (over: Partial<ProjectUsage> = {}): ProjectUsage => ({
  days: 30,
  byDay: [
    { day: '2026-11-25', runs: 2, inputTokens: 200, outputTokens: 20, costUsd: 0.0009 },
    { day: '2026-11-24', runs: 1, inputTokens: 100, outputTokens: 10, costUsd: 0.00045 },
  ],
  byUser: [{ user: { id: 'u1', name: 'Ann' }, runs: 3, inputTokens: 300, outputTokens: 30, costUsd: 0.00135 }],
  total: { runs: 3, inputTokens: 300, outputTokens: 30, costUsd: 0.00135 },
  ...over,
});

const render = (u: ProjectUsage) =>
  renderToStaticMarkup(createElement(UsageSummary, { usage: u, hrefForDays: (d: number) => `/r?days=${d}` }));

describe('UsageSummary', () => {
  it('lists usage per day and per user with their totals, and links the periods', () => {
    const html = render(usage());
    expect(html.match(/data-testid="review-usage-day"/g)).toHaveLength(2);
    expect(html.match(/data-testid="review-usage-user"/g)).toHaveLength(1);
    expect(html).toContain(
      'data-key="2026-11-24" data-runs="1" data-input-tokens="100" data-output-tokens="10" data-cost-usd="0.00045"',
    );
    expect(html).toContain('>Ann</th>');
    expect(html).toContain('$0.00135');
    expect(html.match(/data-key="total"/g)).toHaveLength(2);
    const link = (d: number) => html.match(new RegExp(`<a[^>]*data-testid="review-usage-days-${d}"[^>]*>`))?.[0] ?? '';
    expect(link(30)).toContain('aria-current="page"');
    expect(link(7)).toContain('href="/r?days=7"');
    expect(link(7)).not.toContain('aria-current');
    expect(html).not.toContain('prices are configured');
  });

  it('says when nothing was used, and that costs need prices', () => {
    const none = { runs: 0, inputTokens: 0, outputTokens: 0, costUsd: null };
    const empty = render(usage({ byDay: [], byUser: [], total: none }));
    expect(empty).toContain('data-testid="review-usage-empty"');
    expect(empty).toContain('Costs show once the model’s prices are configured.');
    const figures = { runs: 1, inputTokens: 5, outputTokens: 1, costUsd: null };
    const unpriced = render(
      usage({
        byDay: [{ day: '2026-11-25', ...figures }],
        byUser: [{ user: { id: 'u1', name: 'Ann' }, ...figures }],
        total: figures,
      }),
    );
    expect(unpriced).toContain('no price configured');
    expect(unpriced).not.toContain('data-cost-usd');
  });
});

describe('UsageSummary with an estimate', () => {
  it('marks the rows that count a stopped answer with "≈" and says what it means', () => {
    const estimated = { runs: 1, inputTokens: 900, outputTokens: 40, costUsd: 0.0033, estimated: true };
    const html = render(
      usage({
        byDay: [{ day: '2026-11-25', ...estimated }],
        byUser: [{ user: { id: 'u1', name: 'Ann' }, ...estimated }],
        total: estimated,
      }),
    );
    expect(html.match(/data-estimated="true"/g)).toHaveLength(4);
    expect(html).toContain('≈ $0.0033');
    expect(html).toContain('≈ 900');
    expect(html).toContain('≈: partly estimated');
    expect(render(usage())).not.toContain('≈');
  });
});

describe('joinViews', () => {
  const view = (runId: string, over: Partial<ConversationView> = {}): ConversationView => ({
    threadId: 'cv_1',
    messages: [{ id: `${runId}-u`, role: 'user', content: runId, runId }],
    runs: [{ runId, status: 'completed', interrupts: [] }],
    decisions: {},
    navigations: [],
    ...over,
  });

  it('puts the earlier page first and keeps decisions and versions of both', () => {
    const older = view('r1', {
      decisions: { call_1: { decision: 'approved' } as never },
      versions: { r1: { index: 1, count: 2, runIds: ['r1', 'r1b'] } },
    });
    const newer = view('r2', { navigations: ['/x'] });
    const joined = joinViews(older, newer);
    expect(joined.messages.map((m) => m.runId)).toEqual(['r1', 'r2']);
    expect(joined.runs.map((r) => r.runId)).toEqual(['r1', 'r2']);
    expect(Object.keys(joined.decisions)).toEqual(['call_1']);
    expect(joined.navigations).toEqual(['/x']);
    expect(joined.versions).toEqual({ r1: { index: 1, count: 2, runIds: ['r1', 'r1b'] } });
    expect(joinViews(view('a'), view('b'))).not.toHaveProperty('versions');
  });
});
