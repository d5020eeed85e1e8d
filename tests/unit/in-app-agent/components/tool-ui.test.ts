// Tool results as product UI, rendered to HTML: issue lists and cards linking to the issue page,
// members as a list, the generic card for a result that does not match (the raw result always
// behind "Result"), and the approval card's current-versus-proposed values.
import { createElement, type ReactElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ApprovalChanges } from '@/features/in-app-agent/components/ApprovalChanges';
import { ToolCallCard } from '@/features/in-app-agent/components/ToolCallCard';
import { ProductLinksProvider } from '@/features/in-app-agent/components/tool-ui/product-links';
import type { ViewToolCall } from '@/features/in-app-agent/schema';

const html = (el: ReactElement, projectId: string | null = 'p1') =>
  renderToStaticMarkup(projectId ? createElement(ProductLinksProvider, { projectId }, el) : el);

const call = (name: string, result: unknown): ViewToolCall => ({
  id: 'c1',
  name,
  args: '{}',
  status: 'done',
  result: JSON.stringify(result),
});

const row = (number: number, title: string, extra: Record<string, unknown> = {}) => ({
  number,
  title,
  status: 'OPEN',
  priority: 'HIGH',
  assignee: { id: 'u1', name: 'Maya Member' },
  labels: ['bug'],
  untrusted: false,
  updatedAt: '2026-01-01T00:00:00.000Z',
  ...extra,
});

describe('tool result renderers', () => {
  it('shows a list of issues as rows linking to each issue, and how many there are', () => {
    const out = html(
      createElement(ToolCallCard, {
        call: call('list_issues', {
          issues: [row(3, 'Checkout broken'), row(4, 'Slow <dashboard>', { assignee: null, status: 'IN_PROGRESS' })],
          total: 9,
          hasMore: true,
        }),
      }),
    );
    expect(out).toContain('data-testid="issue-list"');
    expect(out).toContain('href="/projects/p1/issues/3"');
    expect(out).toContain('href="/projects/p1/issues/4"');
    expect(out).toContain('Slow &lt;dashboard&gt;');
    expect(out).toContain('In progress');
    expect(out).toContain('High priority');
    expect(out).toContain('Maya Member');
    expect(out).toContain('Unassigned');
    expect(out).toContain('Showing 2 of 9.');
    // The raw result stays behind the disclosure.
    expect(out).toContain('<summary');
    expect(out).toContain('&quot;hasMore&quot;: true');
  });

  it('marks text written outside the team', () => {
    const out = html(
      createElement(ToolCallCard, {
        call: call('search_issues', {
          query: 'x',
          issues: [row(5, 'Ext', { untrusted: true, untrustedFields: ['title'] })],
        }),
      }),
    );
    expect(out).toContain('Written outside the team: title');
  });

  it('shows a changed issue as a card with what happened and a link', () => {
    const out = html(
      createElement(ToolCallCard, {
        call: call('update_issue', { issue: row(7, 'Renamed'), updated: ['title', 'status'] }),
      }),
    );
    expect(out).toContain('data-testid="issue-card"');
    expect(out).toContain('Updated: title, status');
    expect(out).toContain('href="/projects/p1/issues/7"');
    const created = html(
      createElement(ToolCallCard, { call: call('create_issue', { issue: row(8, 'New'), created: true }) }),
    );
    expect(created).toContain('Created');
  });

  it('shows members as a list', () => {
    const out = html(
      createElement(ToolCallCard, {
        call: call('list_members', {
          members: [{ userId: 'u1', name: 'Olivia Owner', email: 'o@x.test', role: 'OWNER' }],
          total: 1,
          hasMore: false,
        }),
      }),
    );
    expect(out).toContain('data-testid="member-list"');
    expect(out).toContain('Olivia Owner');
    expect(out).toContain('Owner');
  });

  it('falls back to the generic card for a result that does not match, and for unknown tools', () => {
    const cut = html(
      createElement(ToolCallCard, { call: call('list_issues', { truncated: true, preview: '{"issues":[' }) }),
    );
    expect(cut).not.toContain('data-testid="issue-list"');
    expect(cut).toContain('Result');
    const unknown = html(createElement(ToolCallCard, { call: call('weather', { sunny: true }) }));
    expect(unknown).not.toContain('tool-card-rendered');
    expect(unknown).toContain('&quot;sunny&quot;: true');
  });

  it('shows the same content without links outside a project', () => {
    const out = html(
      createElement(ToolCallCard, {
        call: call('get_issue', { issue: row(3, 'Checkout'), comments: [], commentCount: 2 }),
      }),
      null,
    );
    expect(out).toContain('Checkout');
    expect(out).toContain('2 comments');
    expect(out).not.toContain('href=');
  });
});

describe('approval changes', () => {
  const preview = {
    kind: 'issue' as const,
    issue: {
      number: 3,
      title: 'Checkout broken',
      status: 'OPEN',
      priority: 'HIGH',
      assignee: { id: 'u1', name: 'Maya Member' },
      labels: ['bug'],
    },
  };

  it('puts the current values beside the proposed ones', () => {
    const out = html(
      createElement(ApprovalChanges, {
        toolName: 'update_issue',
        args: { number: 3, status: 'CLOSED', labels: [] },
        preview,
      }),
    );
    expect(out).toContain('data-field="Status"');
    expect(out).toMatch(/data-field="Status".*?Open.*?Closed/);
    expect(out).toMatch(/data-field="Labels".*?bug.*?None/);
    const closing = html(createElement(ApprovalChanges, { toolName: 'close_issue', args: { number: 3 }, preview }));
    expect(closing).toMatch(/Open.*Closed/);
  });

  it('names the member an assignment goes to, or says the reference is no member', () => {
    const to = html(
      createElement(ApprovalChanges, {
        toolName: 'assign_issue',
        args: { number: 3, assignee: 'u2' },
        preview: { ...preview, proposedAssignee: { id: 'u2', name: 'Adam Admin' } },
      }),
    );
    expect(to).toMatch(/Maya Member.*Adam Admin/);
    const stranger = html(
      createElement(ApprovalChanges, {
        toolName: 'assign_issue',
        args: { number: 3, assignee: 'who@x.test' },
        preview,
      }),
    );
    expect(stranger).toContain('who@x.test (not a member of this project)');
  });

  it('shows the issue a delete removes, a missing issue, and an edit naming another issue', () => {
    expect(html(createElement(ApprovalChanges, { toolName: 'delete_issue', args: { number: 3 }, preview }))).toContain(
      'will be deleted',
    );
    expect(
      html(
        createElement(ApprovalChanges, {
          toolName: 'delete_issue',
          args: { number: 9 },
          preview: { kind: 'issue-missing', number: 9 },
        }),
      ),
    ).toContain('does not exist');
    expect(html(createElement(ApprovalChanges, { toolName: 'close_issue', args: { number: 4 }, preview }))).toContain(
      'name issue #4',
    );
  });

  it('shows the exact text a webhook call sends', () => {
    const out = html(
      createElement(ApprovalChanges, { toolName: 'notify_webhook', args: { message: 'Deploy <now>\n  indented' } }),
    );
    expect(out).toContain('data-testid="approval-message"');
    expect(out).toContain('Deploy &lt;now&gt;\n  indented');
  });
});
