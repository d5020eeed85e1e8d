// The key-scope contract derived from the tool registry: which scopes a key can hold, what the
// presets contain, and how stored values are read.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  KEY_SCOPE_PRESETS,
  KEY_SCOPES,
  KeyScopesInput,
  presetOf,
  READ_ONLY_KEY_SCOPES,
  storedKeyScopes,
  toolsOfScope,
} from '@/features/mcp/key-scopes';
import { MCP_TOOL_METADATA } from '@/features/mcp/registry';
import { KeyScopeList } from '@/features/tracker/components/SettingsForms';

describe('key scopes', () => {
  it('are exactly the scopes some tool needs, in the product order', () => {
    expect(KEY_SCOPES).toEqual([
      'project:read',
      'issues:read',
      'issues:write',
      'issues:delete',
      'comments:write',
      'members:read',
      'webhook:send',
    ]);
    expect(new Set(KEY_SCOPES)).toEqual(new Set(MCP_TOOL_METADATA.map((t) => t.scope)));
  });

  it('the read-only preset unlocks only read-only tools, and every one of them', () => {
    expect(READ_ONLY_KEY_SCOPES).toEqual(['project:read', 'issues:read', 'members:read']);
    const unlocked = MCP_TOOL_METADATA.filter((t) => READ_ONLY_KEY_SCOPES.includes(t.scope));
    expect(unlocked.every((t) => t.annotations.readOnlyHint)).toBe(true);
    expect(unlocked.map((t) => t.name)).toEqual(
      MCP_TOOL_METADATA.filter((t) => t.annotations.readOnlyHint).map((t) => t.name),
    );
    expect(KEY_SCOPE_PRESETS.full).toEqual(KEY_SCOPES);
  });

  it('names the preset a set of scopes equals, in any order', () => {
    expect(presetOf(['members:read', 'project:read', 'issues:read'])).toBe('read-only');
    expect(presetOf([...KEY_SCOPES].reverse())).toBe('full');
    expect(presetOf(['issues:read'])).toBeNull();
  });

  it('reads stored values as no more than this build knows: unknown values grant nothing', () => {
    expect(storedKeyScopes(['issues:write', 'repos:admin', 'members:manage', 'issues:read'])).toEqual([
      'issues:read',
      'issues:write',
    ]);
    expect(storedKeyScopes([])).toEqual([]);
  });

  it('validates requested scopes with messages a person can act on', () => {
    expect(KeyScopesInput.safeParse(['issues:read']).success).toBe(true);
    expect(KeyScopesInput.safeParse([]).error?.issues[0]?.message).toBe('Choose at least one scope.');
    expect(KeyScopesInput.safeParse(['nope']).error?.issues[0]?.message).toBe(
      `Unknown key scope. Valid scopes: ${KEY_SCOPES.join(', ')}.`,
    );
    expect(KeyScopesInput.safeParse(['issues:read', 'issues:read']).error?.issues[0]?.message).toBe(
      'Each scope may be listed once.',
    );
  });

  it('lists the tools of a scope', () => {
    expect(toolsOfScope('issues:write')).toEqual(['create_issue', 'update_issue', 'assign_issue', 'close_issue']);
  });

  it('renders a key’s scopes as text, with the preset name when they equal one', () => {
    expect(renderToStaticMarkup(createElement(KeyScopeList, { scopes: READ_ONLY_KEY_SCOPES }))).toContain('Read-only');
    const custom = renderToStaticMarkup(createElement(KeyScopeList, { scopes: ['issues:read', 'comments:write'] }));
    expect(custom).toContain('issues:read, comments:write');
    expect(custom).not.toMatch(/Read-only|Full/);
  });
});
