// The module's seams: every tool of the product's MCP registry is declared (the build fails
// otherwise: the type check below fails `tsc`, which CI runs), tool results find their renderer by
// tool name with the generic card as the fallback, and interrupts are read by kind (an unknown
// kind is not answerable).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ToolCallCard } from '@/features/in-app-agent/components/ToolCallCard';
import { resultRendererFor, type ToolResultProps } from '@/features/in-app-agent/components/tool-ui/registry';
import { INTERRUPT_KINDS, interruptKindOf } from '@/features/in-app-agent/interrupt-kinds';
import {
  changedObjects,
  declarationOf,
  MCP_TOOL_DECLARATIONS,
  summarizeCall,
  type ToolDeclaration,
} from '@/features/in-app-agent/tool-declarations';
import { MCP_TOOL_METADATA, type McpToolName } from '@/features/mcp/registry';

// Build-time: a registry tool without a declaration is a type error here and at the declaration.
type Undeclared = Exclude<McpToolName, keyof typeof MCP_TOOL_DECLARATIONS>;
const everyToolDeclared: [Undeclared] extends [never] ? true : false = true;
const { delete_issue: _left, ...missingOne } = MCP_TOOL_DECLARATIONS;
// @ts-expect-error: a declaration table that leaves out one of the registry's tools does not type-check
const incomplete: Record<McpToolName, ToolDeclaration> = missingOne;

describe('one declaration per tool', () => {
  it('declares every tool of the registry', () => {
    expect(everyToolDeclared).toBe(true);
    expect(Object.keys(incomplete)).toHaveLength(MCP_TOOL_METADATA.length - 1);
    for (const t of MCP_TOOL_METADATA) expect(declarationOf(t.name), t.name).toBeDefined();
    expect(declarationOf('made_up_tool')).toBeUndefined();
  });

  it('gives held calls their summary line and changing calls the objects they changed', () => {
    expect(summarizeCall('close_issue', { number: 3 })).toBe('Close issue #3');
    expect(summarizeCall('made_up_tool', {})).toBe('Run made_up_tool');
    expect(changedObjects('create_issue', { title: 'x' }, { issue: { number: 12 }, created: true })).toEqual([
      { kind: 'issue', id: '12' },
    ]);
    expect(changedObjects('delete_issue', { number: 4 }, { number: 4, deleted: true })).toEqual([
      { kind: 'issue', id: '4' },
    ]);
    expect(changedObjects('create_issue', { title: 'x' }, { isError: true, error: 'no' })).toEqual([]);
    expect(changedObjects('list_issues', {}, { issues: [] })).toEqual([]);
  });
});

const IssueList = ({ result }: ToolResultProps) =>
  createElement('p', { 'data-testid': 'issue-list' }, String((result as { n: number }).n));

describe('tool result renderers', () => {
  it('finds the renderer by tool name through its declared kind; other tools get none', () => {
    const renderers = { 'issue-list': IssueList };
    expect(resultRendererFor('list_issues', renderers)).toBe(IssueList);
    expect(resultRendererFor('search_issues', renderers)).toBe(IssueList);
    expect(resultRendererFor('get_issue', renderers)).toBeNull();
    expect(resultRendererFor('list_labels', renderers)).toBeNull();
    expect(resultRendererFor('made_up_tool', renderers)).toBeNull();
  });

  it('a tool without a renderer shows its result in the generic card', () => {
    const html = renderToStaticMarkup(
      createElement(ToolCallCard, {
        call: { id: 'c', name: 'list_labels', args: '{}', status: 'done', result: '{"labels":["bug"]}' },
      }),
    );
    expect(html).toContain('data-testid="tool-card"');
    expect(html).not.toContain('tool-card-rendered');
    expect(html).toContain('&quot;labels&quot;');
  });
});

describe('interrupt kinds', () => {
  it('reads a known kind by its reason and refuses others', () => {
    expect(interruptKindOf('tool_approval')).toBe('tool_approval');
    expect(interruptKindOf('mystery')).toBeNull();
    expect(interruptKindOf(undefined)).toBeNull();
    const kind = INTERRUPT_KINDS.tool_approval;
    expect(kind.answer.safeParse({ approved: true }).success).toBe(true);
    expect(kind.answer.safeParse({ approved: 'yes' }).success).toBe(false);
    expect(kind.answerJsonSchema).toMatchObject({ required: ['approved'] });
  });
});
