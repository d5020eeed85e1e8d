/**
 * OAuth scopes of the MCP endpoint: exactly the project key scopes (key-scopes.ts), so a connected
 * app and a project key speak of the same tools. What a grant may hold is bounded by the user's role
 * in the project, and what a call may do is the grant's scopes intersected with the role the user
 * holds at the time of the call. Free of server code: the consent form uses it too.
 */
import { hasProjectAccess, type Role, type Scope } from '@/server/rbac';
import { KEY_SCOPES, normalizeKeyScopes } from '../key-scopes';

/** Longest `scope` parameter read (every scope, with room to spare). */
export const MAX_SCOPE_PARAM_CHARS = 1000;

/**
 * The scopes named in a space-separated `scope` parameter: the known ones in the product's order,
 * and the others (which are ignored: the token response says what was granted, RFC 6749 §3.3).
 */
export function parseScopeParam(raw: string | null | undefined): { known: Scope[]; unknown: string[] } {
  const words = (raw ?? '').split(' ').filter((w) => w.length > 0);
  const known = new Set<Scope>();
  const unknown: string[] = [];
  for (const w of words) {
    if ((KEY_SCOPES as readonly string[]).includes(w)) known.add(w as Scope);
    else unknown.push(w);
  }
  return { known: normalizeKeyScopes(known), unknown };
}

/** The key scopes a role holds in a project (none for a non-member). */
export function roleKeyScopes(role: Role | null): Scope[] {
  return role ? KEY_SCOPES.filter((s) => hasProjectAccess({ role }, s)) : [];
}

/** `scopes` narrowed to what `role` holds, in the product's order. */
export function withinRole(scopes: readonly Scope[], role: Role | null): Scope[] {
  const held = new Set(roleKeyScopes(role));
  return normalizeKeyScopes(scopes.filter((s) => held.has(s)));
}

/** The `scope` parameter of a token response or a header: space-separated. */
export function formatScopes(scopes: readonly Scope[]): string {
  return normalizeKeyScopes(scopes).join(' ');
}
