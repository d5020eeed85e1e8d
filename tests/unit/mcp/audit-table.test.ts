import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { preview } from '@/features/mcp/audit';
import { AuditFilters, AuditTable } from '@/features/mcp/components/AuditTable';
import type { AuditRow } from '@/features/mcp/audit';

const row = (over: Partial<AuditRow>): AuditRow => ({
  id: 'aud_1',
  tool: 'create_issue',
  status: 'OK',
  errorCode: null,
  keyKind: 'IN_APP_AGENT',
  keyName: 'in-app agent run r1',
  userId: 'u_1',
  userName: 'Ada',
  runId: 'run_1',
  toolCallId: 'tc_1',
  argsPreview: '{"title":"<script>alert(1)</script>"}',
  resultPreview: '{"issue":{"number":3}}',
  durationMs: 12,
  startedAt: new Date('2026-01-02T03:04:05Z'),
  ...over,
});

describe('preview', () => {
  it('serializes compactly and caps at 500 characters', () => {
    expect(preview({ a: 1 })).toBe('{"a":1}');
    const long = preview({ s: 'x'.repeat(2000) });
    expect(long).toHaveLength(500);
    expect(long.endsWith('…')).toBe(true);
  });
});

describe('AuditTable', () => {
  it('renders one row per call with status, caller, run, duration and escaped previews', () => {
    const html = renderToStaticMarkup(
      createElement(AuditTable, {
        rows: [row({}), row({ id: 'aud_2', status: 'DENIED', errorCode: 'OVERRIDE_REQUIRED', keyKind: 'PROJECT', keyName: 'CI', userName: null, runId: null })],
      }),
    );
    expect(html.match(/data-testid="audit-row"/g)).toHaveLength(2);
    expect(html).toContain('Assistant for Ada');
    expect(html).toContain('Project key “CI”');
    expect(html).toContain('OVERRIDE_REQUIRED');
    expect(html).toContain('data-status="DENIED"');
    expect(html).toContain('12 ms');
    expect(html).toContain('<time dateTime="2026-01-02T03:04:05.000Z">');
    expect(html).toContain('<th scope="col"');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });

  it('says so when nothing matches', () => {
    expect(renderToStaticMarkup(createElement(AuditTable, { rows: [] }))).toContain('No tool calls match.');
  });

  it('renders GET filters with labels and the current values selected', () => {
    const html = renderToStaticMarkup(
      createElement(AuditFilters, { basePath: '/projects/p1/audit', tools: ['list_issues', 'create_issue'], values: { tool: 'create_issue', status: 'DENIED', runId: 'run_9' } }),
    );
    expect(html).toContain('method="get"');
    expect(html).toContain('<option value="create_issue" selected="">');
    expect(html).toContain('<option value="DENIED" selected="">');
    expect(html).toContain('value="run_9"');
    expect(html).toContain('Clear filters');
  });
});
