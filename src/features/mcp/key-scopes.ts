/**
 * Scopes of project API keys: the one contract shared by key creation (server), the MCP endpoint's
 * checks and the settings form (browser). A key scope is a scope some MCP tool needs, so the list is
 * derived from the tool registry: a new tool scope becomes choosable without another list to keep
 * in step. Free of server code, like the registry.
 */
import { z } from 'zod';
import { SCOPES, type Scope } from '@/server/rbac';
import { MCP_TOOL_METADATA, type McpToolName } from './registry';

/** Every scope a project key can hold, in the order of the product's scope list. */
export const KEY_SCOPES: readonly Scope[] = Object.freeze(
  SCOPES.filter((s) => MCP_TOOL_METADATA.some((t) => t.scope === s)),
);

/** The scopes whose tools only read (every tool needing them is annotated read-only). */
export const READ_ONLY_KEY_SCOPES: readonly Scope[] = Object.freeze(
  KEY_SCOPES.filter((s) => MCP_TOOL_METADATA.filter((t) => t.scope === s).every((t) => t.annotations.readOnlyHint)),
);

export const KEY_SCOPE_PRESETS = {
  /** Reads only: issues, labels, members, the project summary. */
  'read-only': READ_ONLY_KEY_SCOPES,
  /** Every tool, `delete_issue` and `notify_webhook` included. */
  full: KEY_SCOPES,
} as const satisfies Record<string, readonly Scope[]>;
export type KeyScopePreset = keyof typeof KEY_SCOPE_PRESETS;

function isKeyScope(value: string): value is Scope {
  return (KEY_SCOPES as readonly string[]).includes(value);
}

/** One requested key scope; anything else is refused with the list of valid ones. */
const KeyScopeSchema = z.enum(KEY_SCOPES, {
  error: `Unknown key scope. Valid scopes: ${KEY_SCOPES.join(', ')}.`,
});

/** The scopes asked for at key creation: at least one, each once. */
export const KeyScopesInput = z
  .array(KeyScopeSchema)
  .min(1, 'Choose at least one scope.')
  .max(KEY_SCOPES.length)
  .refine((list) => new Set(list).size === list.length, 'Each scope may be listed once.');

/** A key's scopes in the product's order, without duplicates (stable for display and storage). */
export function normalizeKeyScopes(scopes: Iterable<Scope>): Scope[] {
  const wanted = new Set(scopes);
  return KEY_SCOPES.filter((s) => wanted.has(s));
}

/**
 * The scopes stored on a key row, as far as this build knows them. A value that is not a key scope
 * (written by another release, or by hand) grants nothing: unknown means no access, never more.
 */
export function storedKeyScopes(stored: readonly string[]): Scope[] {
  return normalizeKeyScopes(stored.filter(isKeyScope));
}

/** The tools a scope unlocks, in registry order (shown next to each scope in the settings form). */
export function toolsOfScope(scope: Scope): McpToolName[] {
  return MCP_TOOL_METADATA.filter((t) => t.scope === scope).map((t) => t.name);
}

/** The preset a set of scopes equals, if any (the settings list says "Read-only" or "Full"). */
export function presetOf(scopes: readonly Scope[]): KeyScopePreset | null {
  const list = normalizeKeyScopes(scopes);
  for (const [name, preset] of Object.entries(KEY_SCOPE_PRESETS) as Array<[KeyScopePreset, readonly Scope[]]>) {
    if (preset.length === list.length && preset.every((s, i) => s === list[i])) return name;
  }
  return null;
}
