import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { formatUsage } from '@/features/in-app-agent/components/ConversationMessages';
import { UsageCell } from '@/features/in-app-agent/components/review/UsageSummary';
import { formatTokens, formatUsd } from '@/features/in-app-agent/components/usage-format';

describe('formatUsd', () => {
  it('shows small amounts with the decimals they need, at least two', () => {
    expect(formatUsd(0)).toBe('$0.00');
    expect(formatUsd(0.00036)).toBe('$0.00036');
    expect(formatUsd(0.000138)).toBe('$0.000138');
    expect(formatUsd(0.0001)).toBe('$0.0001');
    expect(formatUsd(0.0000014)).toBe('$0.000001');
    expect(formatUsd(0.047205)).toBe('$0.0472');
    expect(formatUsd(0.5)).toBe('$0.50');
    expect(formatUsd(2.5)).toBe('$2.50');
    expect(formatUsd(1234.567)).toBe('$1,234.57');
  });

  it('never shows a cost as nothing when it is not zero', () => {
    expect(formatUsd(0.0000004)).toBe('< $0.000001');
    expect(formatUsd(0.0000006)).toBe('$0.000001');
  });

  it('writes token counts with separators', () => {
    expect(formatTokens(1234567)).toBe('1,234,567');
  });
});

describe('the panel and the review', () => {
  it('show the same digits for the same cost', () => {
    for (const [costUsd, shown] of [
      [0.00036, '$0.00036'],
      [0.0123, '$0.0123'],
      [0.047205, '$0.0472'],
      [3.456, '$3.46'],
    ] as const) {
      const panel = formatUsage({ inputTokens: 120, outputTokens: 24, costUsd });
      expect(panel).toBe(`120 in · 24 out · ${shown}`);
      const review = renderToStaticMarkup(
        createElement(
          'table',
          null,
          createElement(
            'tbody',
            null,
            createElement(
              'tr',
              null,
              createElement(UsageCell, {
                usage: { inputTokens: 120, outputTokens: 24, costUsd },
              }),
            ),
          ),
        ),
      );
      expect(review).toContain(`>${shown}</span>`);
    }
  });

  it('mark partly estimated usage (a stopped answer) with "≈", the same in both', () => {
    expect(formatUsage({ inputTokens: 1234, outputTokens: 56, costUsd: 0.00036, estimated: true })).toBe(
      '≈ 1,234 in · 56 out · $0.00036',
    );
    const review = renderToStaticMarkup(
      createElement(
        'table',
        null,
        createElement(
          'tbody',
          null,
          createElement(
            'tr',
            null,
            createElement(UsageCell, {
              usage: { inputTokens: 1234, outputTokens: 56, costUsd: 0.00036, estimated: true },
            }),
          ),
        ),
      ),
    );
    expect(review).toContain('data-estimated="true"');
    expect(review).toContain('≈ 1,234 in · 56 out');
    expect(review).toContain('>≈ $0.00036</span>');
  });
});
