import { describe, expect, it } from 'vitest';
import { LOCAL_TOOL_NAMES } from '@/features/in-app-agent/constants';
import { ALWAYS_APPROVE, approvalFor, LOCAL_APPROVAL_MAP, MCP_APPROVAL_MAP, toolInfo } from '@/features/in-app-agent/server/tools';
import { MCP_TOOL_METADATA } from '@/features/mcp/registry';

describe('approval map', () => {
  it('classifies exactly the tools of the MCP registry, no more, no fewer', () => {
    expect(Object.keys(MCP_APPROVAL_MAP).sort()).toEqual(MCP_TOOL_METADATA.map((t) => t.name).sort());
    expect(Object.keys(LOCAL_APPROVAL_MAP).sort()).toEqual([...LOCAL_TOOL_NAMES].sort());
  });

  it('lets read-only tools run on their own and holds everything else for approval', () => {
    for (const t of MCP_TOOL_METADATA) {
      const expected = t.annotations.readOnlyHint === true ? 'auto' : 'approval';
      expect([t.name, MCP_APPROVAL_MAP[t.name as keyof typeof MCP_APPROVAL_MAP]]).toEqual([t.name, expected]);
    }
  });

  it('always needs approval for deletion and outward messages', () => {
    expect([...ALWAYS_APPROVE].sort()).toEqual(['delete_issue', 'notify_webhook']);
    const clean = { privateData: false, untrustedContent: false };
    expect(approvalFor('delete_issue', clean)).toMatchObject({ required: true, reason: 'destructive' });
    expect(approvalFor('notify_webhook', clean)).toMatchObject({ required: true, reason: 'outward' });
    expect(approvalFor('list_issues', clean)).toMatchObject({ required: false });
    expect(approvalFor('create_issue', clean)).toMatchObject({ required: true, reason: 'mutating' });
  });

  it('switches outward calls to the data-flow reason once private data and untrusted content were read', () => {
    expect(toolInfo('get_issue')?.tags).toMatchObject({ readsPrivateData: true, readsUntrustedContent: true });
    expect(toolInfo('notify_webhook')?.tags.communicatesOutside).toBe(true);
    const tainted = { privateData: true, untrustedContent: true };
    expect(approvalFor('notify_webhook', tainted)).toMatchObject({ required: true, reason: 'data_flow' });
    expect(approvalFor('notify_webhook', { privateData: true, untrustedContent: false })).toMatchObject({ reason: 'outward' });
    // Unknown tools are never auto.
    expect(approvalFor('made_up_tool', { privateData: false, untrustedContent: false })).toMatchObject({ required: true });
  });
});
