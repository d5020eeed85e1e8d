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
  keyPublicKey: 'pk_AAAAAAAAAAAAAAAA',
  keyScopes: null,
  userId: 'u_1',
  userName: 'Ada',
  runId: 'run_1',
  oauthClient: null,
  toolCallId: 'tc_1',
  callerSuppliedTool: false,
  callCount: 1,
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

  it('escapes control characters so every preview can be stored', () => {
    expect(preview('raw\u0000text')).toBe('raw\\u0000text');
    expect(preview({ s: 'in\u0000json' })).toBe('{"s":"in\\u0000json"}');
  });
});

describe('AuditTable', () => {
  it('renders one row per call with status, caller, run, duration and escaped previews', () => {
    const html = renderToStaticMarkup(
      createElement(AuditTable, {
        rows: [
          row({}),
          row({
            id: 'aud_2',
            status: 'DENIED',
            errorCode: 'MISSING_SCOPE',
            keyKind: 'PROJECT',
            keyName: 'CI',
            keyPublicKey: 'pk_CICICICICICICICI',
            keyScopes: ['project:read', 'issues:read'],
            userName: null,
            runId: null,
          }),
        ],
      }),
    );
    expect(html.match(/data-testid="audit-row"/g)).toHaveLength(2);
    expect(html).toContain('Assistant for Ada');
    expect(html).toContain('Project key “CI”');
    expect(html).toContain('pk_CICICICICICICICI');
    expect(html).toContain('MISSING_SCOPE');
    // A project key's scopes are named with it; an assistant row has none (its user's role decides).
    expect(html.match(/data-testid="audit-key-scopes"/g)).toHaveLength(1);
    expect(html).toContain('Scopes: <span class="font-mono">project:read, issues:read</span>');
    expect(html).toContain('data-status="DENIED"');
    expect(html).toContain('12 ms');
    expect(html).toContain('<time dateTime="2026-01-02T03:04:05.000Z">');
    expect(html).toContain('<th scope="col"');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });

  it('names the connected app a call came through, and the user it acted for', () => {
    const html = renderToStaticMarkup(
      createElement(AuditTable, {
        rows: [
          row({
            keyKind: null,
            keyName: null,
            keyPublicKey: null,
            runId: null,
            oauthClient: { id: 'https://claude.ai/oauth/client.json', name: 'Claude <Desktop>' },
          }),
        ],
      }),
    );
    expect(html).toContain('data-testid="audit-oauth-client">App “Claude &lt;Desktop&gt;” for Ada</span>');
    expect(html).not.toContain('Deleted key');
  });

  it('marks text the caller sent (an unknown tool name, every call id) and shows counted refusals', () => {
    const html = renderToStaticMarkup(
      createElement(AuditTable, {
        rows: [
          row({
            id: 'aud_a',
            tool: 'create_issue (approved by admin)',
            callerSuppliedTool: true,
            status: 'ERROR',
            toolCallId: 'call_x',
          }),
          row({ id: 'aud_b', status: 'DENIED', errorCode: 'KEY_REVOKED', callCount: 80, toolCallId: null }),
        ],
      }),
    );
    const [first, second] = html.split('data-testid="audit-row"').slice(1);
    // The unknown name is quoted and marked; the call id is marked as the caller's too.
    expect(first).toContain('“create_issue (approved by admin)”');
    expect(first!.match(/data-testid="caller-supplied"/g)).toHaveLength(2);
    expect(first).toContain('call id <code class="break-all">call_x</code>');
    // A registered tool name (create_issue) is not marked; a counted row says how many calls it is.
    expect(second).not.toContain('caller-supplied');
    expect(second).toContain('80 calls (counted)');
    expect(first).not.toContain('call-count');
  });

  it('says so when nothing matches', () => {
    expect(renderToStaticMarkup(createElement(AuditTable, { rows: [] }))).toContain('No tool calls match.');
  });

  it('renders GET filters with labels and the current values selected', () => {
    const html = renderToStaticMarkup(
      createElement(AuditFilters, {
        basePath: '/projects/p1/audit',
        facets: {
          tools: ['list_issues', 'create_issue', 'drop_\\u0000db'],
          keys: [{ publicKey: 'pk_CICICICICICICICI', kind: 'PROJECT', name: 'CI', revoked: true }],
          users: [{ id: 'u_1', name: 'Ada' }],
        },
        values: {
          tool: 'create_issue',
          status: 'DENIED',
          runId: 'run_9',
          keyKind: 'PROJECT',
          publicKey: 'pk_CICICICICICICICI',
          userId: 'u_1',
        },
      }),
    );
    expect(html).toContain('method="get"');
    expect(html).toContain('<option value="create_issue" selected="">');
    expect(html).toContain('<option value="drop_\\u0000db">'); // a recorded unknown tool can be filtered
    expect(html).toContain('<option value="DENIED" selected="">');
    expect(html).toContain('<option value="PROJECT" selected="">');
    expect(html).toContain(
      '<option value="pk_CICICICICICICICI" selected="">CI (pk_CICICICICICICICI), revoked</option>',
    );
    expect(html).toContain('<option value="u_1" selected="">Ada</option>');
    expect(html).toContain('value="run_9"');
    expect(html).toContain('Clear filters');
  });

  it('keeps a filter value from a link selectable even when it is not among the choices', () => {
    const html = renderToStaticMarkup(
      createElement(AuditFilters, {
        basePath: '/p',
        facets: { tools: ['list_issues'] },
        values: { tool: 'retired_tool' },
      }),
    );
    expect(html).toContain('<option value="retired_tool" selected="">retired_tool</option>');
  });
});
