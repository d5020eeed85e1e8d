// The role × scope matrix written out by hand: a change to ROLE_SCOPES that is not also made here
// fails, so widening a role is always a deliberate, reviewed edit.
import { describe, expect, it } from 'vitest';
import { hasProjectAccess, ROLE_RANK, ROLES, SCOPES, scopesFor, type Role, type Scope } from '@/server/rbac';

const Y = true;
const N = false;

/** Columns: OWNER, ADMIN, MEMBER, VIEWER. */
const MATRIX: Record<Scope, [boolean, boolean, boolean, boolean]> = {
  'project:read': [Y, Y, Y, Y],
  'issues:read': [Y, Y, Y, Y],
  'issues:write': [Y, Y, Y, N],
  'issues:delete': [Y, Y, N, N],
  'comments:write': [Y, Y, Y, N],
  'members:read': [Y, Y, Y, Y],
  'members:manage': [Y, Y, N, N],
  'apiKeys:manage': [Y, Y, N, N],
  'audit:read': [Y, Y, N, N],
  'webhook:send': [Y, Y, Y, N],
  'agent:use': [Y, Y, Y, Y],
  'agent:review': [Y, Y, N, N],
  'agent:manage': [Y, Y, N, N],
};
const COLUMNS: Role[] = ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'];

/** Instance administrators without a role: read-only oversight. */
const INSTANCE_ADMIN: Record<Scope, boolean> = {
  'project:read': Y,
  'issues:read': Y,
  'issues:write': N,
  'issues:delete': N,
  'comments:write': N,
  'members:read': Y,
  'members:manage': N,
  'apiKeys:manage': N,
  'audit:read': Y,
  'webhook:send': N,
  'agent:use': N,
  'agent:review': Y,
  'agent:manage': N,
};

describe('RBAC matrix', () => {
  it('covers every scope and every role', () => {
    expect(Object.keys(MATRIX).sort()).toEqual([...SCOPES].sort());
    expect([...COLUMNS].sort()).toEqual([...ROLES].sort());
  });

  const rows = SCOPES.flatMap((scope) => COLUMNS.map((role, i) => [role, scope, MATRIX[scope][i]] as const));
  it.each(rows)('%s / %s → %s', (role, scope, expected) => {
    expect(hasProjectAccess({ role }, scope)).toBe(expected);
    // Being an instance admin as well never takes a right away from a role.
    expect(hasProjectAccess({ role, isAdmin: true }, scope)).toBe(expected || INSTANCE_ADMIN[scope]);
  });

  it.each(SCOPES.map((s) => [s, INSTANCE_ADMIN[s]] as const))(
    'instance admin without a role / %s → %s',
    (scope, expected) => {
      expect(hasProjectAccess({ role: null, isAdmin: true }, scope)).toBe(expected);
    },
  );

  it.each([...SCOPES])('a non-member who is not an instance admin has no %s', (scope) => {
    expect(hasProjectAccess({ role: null }, scope)).toBe(false);
    expect(hasProjectAccess({ role: null, isAdmin: false }, scope)).toBe(false);
  });

  it('viewers can use no mutating scope at all', () => {
    const mutating: Scope[] = [
      'issues:write',
      'issues:delete',
      'comments:write',
      'members:manage',
      'apiKeys:manage',
      'webhook:send',
    ];
    for (const s of mutating) expect(hasProjectAccess({ role: 'VIEWER' }, s)).toBe(false);
  });

  it('scopesFor lists exactly the granted scopes, in SCOPES order', () => {
    for (const [i, role] of COLUMNS.entries()) {
      expect(scopesFor({ role })).toEqual(SCOPES.filter((s) => MATRIX[s][i]));
    }
    expect(scopesFor({ role: null, isAdmin: true })).toEqual(SCOPES.filter((s) => INSTANCE_ADMIN[s]));
    expect(scopesFor({ role: null })).toEqual([]);
  });

  it('roles are ranked OWNER > ADMIN > MEMBER > VIEWER', () => {
    expect(ROLE_RANK.OWNER).toBeGreaterThan(ROLE_RANK.ADMIN);
    expect(ROLE_RANK.ADMIN).toBeGreaterThan(ROLE_RANK.MEMBER);
    expect(ROLE_RANK.MEMBER).toBeGreaterThan(ROLE_RANK.VIEWER);
  });
});
