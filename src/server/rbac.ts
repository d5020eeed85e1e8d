export const ROLES = ['OWNER', 'ADMIN', 'MEMBER', 'VIEWER'] as const;
export type Role = (typeof ROLES)[number];

export const SCOPES = [
  'project:read',
  'issues:read',
  'issues:write',
  'issues:delete',
  'comments:write',
  'members:read',
  'members:manage',
  'apiKeys:manage',
  'audit:read',
  'webhook:send',
  'agent:use',
  'agent:review',
  'agent:manage',
] as const;
export type Scope = (typeof SCOPES)[number];

const VIEWER: readonly Scope[] = ['project:read', 'issues:read', 'members:read', 'agent:use'];
const MEMBER: readonly Scope[] = [...VIEWER, 'issues:write', 'comments:write', 'webhook:send'];
const ADMIN: readonly Scope[] = [
  ...MEMBER,
  'issues:delete',
  'members:manage',
  'apiKeys:manage',
  'audit:read',
  'agent:review',
  'agent:manage',
];
const OWNER: readonly Scope[] = [...ADMIN];

/** Roles mapped to the scopes they grant. The single source for every authorization check. */
export const ROLE_SCOPES: Readonly<Record<Role, ReadonlySet<Scope>>> = {
  OWNER: new Set(OWNER),
  ADMIN: new Set(ADMIN),
  MEMBER: new Set(MEMBER),
  VIEWER: new Set(VIEWER),
};

export interface AccessSubject {
  /** The user's role in the project, or null when not a member. */
  role: Role | null;
  /** Instance administrators can read every project but never act without a role. */
  isAdmin?: boolean;
}

const ADMIN_READ_SCOPES: ReadonlySet<Scope> = new Set([
  'project:read',
  'issues:read',
  'members:read',
  'audit:read',
  'agent:review',
]);

/** The single authorization check used by pages, tRPC procedures and MCP tools. */
export function hasProjectAccess(subject: AccessSubject, scope: Scope): boolean {
  if (subject.role && ROLE_SCOPES[subject.role].has(scope)) return true;
  return subject.isAdmin === true && ADMIN_READ_SCOPES.has(scope);
}

export function scopesFor(subject: AccessSubject): Scope[] {
  return SCOPES.filter((s) => hasProjectAccess(subject, s));
}

/** Higher number, more authority. Used to stop admins from promoting beyond themselves. */
export const ROLE_RANK: Record<Role, number> = { VIEWER: 0, MEMBER: 1, ADMIN: 2, OWNER: 3 };
