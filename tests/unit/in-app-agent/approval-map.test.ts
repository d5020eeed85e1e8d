import { describe, expect, it } from 'vitest';
import { runToolPolicy } from '@/features/in-app-agent/server/policy';
import { approvalFor, effectiveToolInfo, toolInfo, type ToolInfo } from '@/features/in-app-agent/server/tools';
import { LOCAL_TOOL_DECLARATIONS, MCP_TOOL_DECLARATIONS } from '@/features/in-app-agent/tool-declarations';
import { MCP_TOOL_METADATA } from '@/features/mcp/registry';

describe('tool declarations and the approval gate', () => {
  it('declares exactly the tools of the MCP registry, no more, no fewer', () => {
    expect(Object.keys(MCP_TOOL_DECLARATIONS).sort()).toEqual(MCP_TOOL_METADATA.map((t) => t.name).sort());
    expect(Object.keys(LOCAL_TOOL_DECLARATIONS).sort()).toEqual(['ask_user', 'navigate', 'search_docs']);
  });

  it('lets read-only tools run on their own and holds everything else for approval', () => {
    for (const t of MCP_TOOL_METADATA) {
      const expected = t.annotations.readOnlyHint === true ? 'auto' : 'approval';
      expect([t.name, toolInfo(t.name)?.policy]).toEqual([t.name, expected]);
    }
  });

  it('always needs approval for deletion and outward messages', () => {
    const always = Object.entries(MCP_TOOL_DECLARATIONS).filter(([, d]) => d.approval === 'always');
    expect(always.map(([name]) => name).sort()).toEqual(['delete_issue', 'notify_webhook']);
    // Every destructive or open-world tool of the registry is among them.
    for (const t of MCP_TOOL_METADATA)
      if (t.annotations.destructiveHint || t.annotations.openWorldHint) expect(toolInfo(t.name)?.alwaysAsk).toBe(true);
    const clean = { privateData: false, untrustedContent: false };
    expect(approvalFor(toolInfo('delete_issue'), clean)).toMatchObject({ required: true, reason: 'destructive' });
    expect(approvalFor(toolInfo('notify_webhook'), clean)).toMatchObject({ required: true, reason: 'outward' });
    expect(approvalFor(toolInfo('list_issues'), clean)).toMatchObject({ required: false });
    expect(approvalFor(toolInfo('create_issue'), clean)).toMatchObject({ required: true, reason: 'mutating' });
  });

  it('switches outward calls to the data-flow reason once private data and untrusted content were read', () => {
    expect(toolInfo('get_issue')?.tags).toMatchObject({ readsPrivateData: true, readsUntrustedContent: true });
    expect(toolInfo('notify_webhook')?.tags.communicatesOutside).toBe(true);
    const tainted = { privateData: true, untrustedContent: true };
    expect(approvalFor(toolInfo('notify_webhook'), tainted)).toMatchObject({ required: true, reason: 'data_flow' });
    expect(approvalFor(toolInfo('notify_webhook'), { privateData: true, untrustedContent: false })).toMatchObject({
      reason: 'outward',
    });
    // Unknown tools are never auto.
    expect(approvalFor(toolInfo('made_up_tool'), { privateData: false, untrustedContent: false })).toMatchObject({
      required: true,
    });
  });

  it('holds an auto tool tagged "communicates outside" once the run read private data and untrusted content', () => {
    // A synthetic tool: read-only, classified auto, but it sends data outside the product.
    const outward: ToolInfo = {
      name: 'share_link',
      readOnly: true,
      destructive: false,
      policy: 'auto',
      tags: { readsPrivateData: false, readsUntrustedContent: false, communicatesOutside: true },
    };
    const clean = { privateData: false, untrustedContent: false };
    expect(approvalFor(outward, clean)).toMatchObject({ required: false });
    expect(approvalFor(outward, { privateData: true, untrustedContent: false })).toMatchObject({ required: false });
    expect(approvalFor(outward, { privateData: false, untrustedContent: true })).toMatchObject({ required: false });
    const held = approvalFor(outward, { privateData: true, untrustedContent: true });
    expect(held).toMatchObject({ required: true, reason: 'data_flow' });
    expect(held.why).toMatch(/private project data/);
    // The same tool without the tag stays auto whatever the run read.
    expect(
      approvalFor(
        { ...outward, tags: { ...outward.tags, communicatesOutside: false } },
        { privateData: true, untrustedContent: true },
      ),
    ).toMatchObject({ required: false });
  });

  it('computes the policy per run from the role: RBAC first, approval second', () => {
    const viewer = runToolPolicy({ role: 'VIEWER', isAdmin: false });
    const member = runToolPolicy({ role: 'MEMBER', isAdmin: false });
    expect([...viewer.mcpTools].every((name) => toolInfo(name)?.readOnly)).toBe(true);
    expect(viewer.mcpTools.has('create_issue')).toBe(false);
    expect(member.mcpTools.has('create_issue')).toBe(true);
    expect(viewer.grantKey).not.toBe(member.grantKey);
    expect(viewer.mayRun('create_issue')).toBe(false);
    expect(member.mayRun('create_issue')).toBe(true);
    expect(viewer.mayRun('navigate')).toBe(true);
    expect(member.mayRun('made_up_tool')).toBe(false);
    const clean = { privateData: false, untrustedContent: false };
    expect(member.approval('list_issues', clean)).toMatchObject({ required: false });
    expect(member.approval('create_issue', clean)).toMatchObject({ required: true, reason: 'mutating' });
    const strict = runToolPolicy({ role: 'MEMBER', isAdmin: false }, { requireApproval: new Set(['list_issues']) });
    expect(strict.approval('list_issues', clean)).toMatchObject({ required: true });
  });

  it('lets an embedder require approval for more tools, never fewer', () => {
    expect(approvalFor(effectiveToolInfo('navigate'), { privateData: false, untrustedContent: false })).toMatchObject({
      required: false,
    });
    expect(
      approvalFor(effectiveToolInfo('navigate', new Set(['navigate'])), {
        privateData: false,
        untrustedContent: false,
      }),
    ).toMatchObject({ required: true });
    expect(effectiveToolInfo('delete_issue', new Set(['delete_issue']))?.policy).toBe('approval');
    expect(effectiveToolInfo('list_issues', new Set(['create_issue']))?.policy).toBe('auto');
  });
});
