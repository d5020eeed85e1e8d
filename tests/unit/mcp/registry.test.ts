import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  MCP_TOOL_METADATA,
  MCP_TOOLS,
  TOOL_NAMES,
  toolInputJsonSchema,
  type McpToolName,
} from '@/features/mcp/registry';
import { SCOPES } from '@/server/rbac';

const READ_TOOLS: McpToolName[] = [
  'list_issues',
  'get_issue',
  'search_issues',
  'list_members',
  'list_labels',
  'get_project_summary',
];

describe('MCP tool registry', () => {
  it('has exactly the documented tools, in a stable order, and metadata for each', () => {
    expect(TOOL_NAMES).toEqual([
      ...READ_TOOLS,
      'create_issue',
      'update_issue',
      'add_comment',
      'assign_issue',
      'close_issue',
      'delete_issue',
      'notify_webhook',
    ]);
    expect(MCP_TOOL_METADATA.map((t) => t.name)).toEqual(TOOL_NAMES);
  });

  it('marks only the read tools read-only, only delete_issue destructive, only notify_webhook open-world', () => {
    for (const t of MCP_TOOL_METADATA) {
      expect(t.annotations.readOnlyHint, t.name).toBe(READ_TOOLS.includes(t.name));
      expect(t.annotations.destructiveHint, t.name).toBe(t.name === 'delete_issue');
      expect(t.annotations.openWorldHint, t.name).toBe(t.name === 'notify_webhook');
      expect(t.tags.communicatesOutside, t.name).toBe(t.name === 'notify_webhook');
      expect(SCOPES).toContain(t.scope);
      expect(t.description.length).toBeGreaterThan(20);
    }
  });

  it('tags data flows truthfully: which tools return private data and which return untrusted external text', () => {
    // Untrusted: tools whose results can carry issue text last written through a project key, or
    // external comments: every tool that returns existing issue rows (checked against real results
    // in tests/integration/mcp/provenance.test.ts).
    const untrusted = MCP_TOOL_METADATA.filter((t) => t.tags.readsUntrustedContent).map((t) => t.name);
    expect(untrusted).toEqual([
      'list_issues',
      'get_issue',
      'search_issues',
      'get_project_summary',
      'update_issue',
      'assign_issue',
      'close_issue',
    ]);
    const privateData = MCP_TOOL_METADATA.filter((t) => t.tags.readsPrivateData).map((t) => t.name);
    expect(privateData).toEqual([...READ_TOOLS, 'create_issue', 'update_issue', 'assign_issue', 'close_issue']);
    // Tools that return nothing of the project: the caller's own comment, a number, a delivery status.
    for (const name of ['add_comment', 'delete_issue', 'notify_webhook'] as const) {
      expect(MCP_TOOLS[name].tags, name).toMatchObject({ readsPrivateData: false, readsUntrustedContent: false });
    }
  });

  it('refuses NUL and other control characters in every string argument', () => {
    const cases: Array<[McpToolName, Record<string, unknown>]> = [
      ['list_issues', { label: 'b\u0000ug' }],
      ['list_issues', { assignee: 'a\u0000@x.test' }],
      ['search_issues', { query: 'lo\u0000gin' }],
      ['create_issue', { title: 'a\u0000b' }],
      ['create_issue', { title: 'ok', body: 'esc \u001b[31m' }],
      ['create_issue', { title: 'ok', labels: ['b\u0007'] }],
      ['create_issue', { title: 'ok', assignee: 'u\u007f' }],
      ['update_issue', { number: 1, title: 'x\u0000' }],
      ['update_issue', { number: 1, body: '\u0000' }],
      ['add_comment', { number: 1, body: 'hi\u0000' }],
      ['assign_issue', { number: 1, assignee: 'u\u0000' }],
      ['notify_webhook', { message: 'ping\u0085' }],
    ];
    for (const [name, args] of cases) {
      const r = MCP_TOOLS[name].inputSchema.safeParse(args);
      expect(r.success, `${name} ${JSON.stringify(args)}`).toBe(false);
      expect(r.error?.issues[0]?.message, name).toMatch(/control characters/);
    }
    expect(MCP_TOOLS.create_issue.inputSchema.safeParse({ title: 'ok', body: 'line 1\n\tline 2\r\n' }).success).toBe(
      true,
    );
  });

  it('pages list_members and list_labels', () => {
    for (const name of ['list_members', 'list_labels'] as const) {
      expect(MCP_TOOLS[name].inputSchema.parse({})).toEqual({ page: 1, pageSize: 50 });
      expect(MCP_TOOLS[name].inputSchema.safeParse({ pageSize: 51 }).success, name).toBe(false);
    }
  });

  it('has strict input schemas: unknown fields, oversized strings and huge pages are refused', () => {
    for (const name of TOOL_NAMES) {
      expect(MCP_TOOLS[name].inputSchema.safeParse({ unexpected: 1 }).success, name).toBe(false);
      const json = toolInputJsonSchema(name);
      expect(json.type).toBe('object');
      expect(json.additionalProperties, name).toBe(false);
    }
    expect(MCP_TOOLS.list_issues.inputSchema.safeParse({ pageSize: 51 }).success).toBe(false);
    expect(MCP_TOOLS.list_issues.inputSchema.parse({})).toEqual({ page: 1, pageSize: 20 });
    expect(MCP_TOOLS.search_issues.inputSchema.safeParse({ query: 'x'.repeat(201) }).success).toBe(false);
    expect(MCP_TOOLS.create_issue.inputSchema.safeParse({ title: 'x'.repeat(201) }).success).toBe(false);
    expect(MCP_TOOLS.notify_webhook.inputSchema.safeParse({ message: 'x'.repeat(2001) }).success).toBe(false);
    expect(MCP_TOOLS.get_issue.inputSchema.safeParse({ number: 1.5 }).success).toBe(false);
  });

  it('matches the tool table of docs/mcp.md (scope and who needs approval)', () => {
    const page = readFileSync('docs/mcp.md', 'utf8');
    const section = page.slice(page.indexOf('<!-- section:tools -->'), page.indexOf('<!-- /section:tools -->'));
    const rows = [...section.matchAll(/^\| `([a-z_]+)` \| `([a-z:A-Z]+)` \| [^|]+ \| (auto|approval) \|$/gm)];
    expect(rows.map((r) => r[1])).toEqual(TOOL_NAMES);
    for (const [, name, scope, policy] of rows) {
      const t = MCP_TOOLS[name as McpToolName];
      expect(scope, name).toBe(t.scope);
      expect(policy, name).toBe(t.annotations.readOnlyHint ? 'auto' : 'approval');
    }
  });
});
