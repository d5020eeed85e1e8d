/**
 * Who is calling the MCP endpoint: one of three principals.
 *
 * - A project key acts for its project with the tools its scopes grant (chosen when it was created;
 *   see key-scopes.ts).
 * - The assistant's run key acts for its bound user in its project: the user's CURRENT role decides
 *   which tools exist for it (RBAC), and it may run only read-only tools unless a call carries a
 *   valid single-use override (see override.ts and server.ts).
 * - An OAuth access token (oauth/) acts for the user who connected an app, in the project they
 *   chose: the grant's scopes intersected with the user's CURRENT role, read at every request.
 */
import 'server-only';
import type { ApiKey, PrismaClient } from '@/generated/prisma/client';
import { loadAccessSubject } from '@/server/access';
import { findKeyRef, parseAuthorization, verifyKey } from '@/server/api-keys';
import { hasProjectAccess, type AccessSubject, type Scope } from '@/server/rbac';
import type { McpErrorCode } from './errors';
import { storedKeyScopes } from './key-scopes';
import { SECRET_PREFIX } from './oauth/secrets';
import { checkAccessToken } from './oauth/tokens';

type KeyRef = Pick<ApiKey, 'id' | 'kind' | 'name' | 'projectId' | 'userId' | 'runId'>;

/** A project API key: the scopes it was created with. */
interface ProjectKeyPrincipal {
  kind: 'project-key';
  key: KeyRef;
  projectId: string;
  userId: null;
  runId: null;
  subject: null;
  requiresOverride: false;
  keyScopes: ReadonlySet<Scope>;
}

/** The assistant's key of one run: the bound user's current role; writes need an override. */
interface RunKeyPrincipal {
  kind: 'run-key';
  key: KeyRef;
  projectId: string;
  userId: string;
  runId: string | null;
  subject: AccessSubject;
  requiresOverride: true;
}

/** A connected app (OAuth access token): grant scopes within the user's current role. */
interface OAuthPrincipal {
  kind: 'oauth';
  key: null;
  projectId: string;
  userId: string;
  runId: null;
  subject: AccessSubject;
  requiresOverride: false;
  oauth: { grantId: string; clientId: string; clientName: string; userName: string };
  /** Effective scopes of this request: the token's, within the user's role now. */
  scopes: ReadonlySet<Scope>;
}

export type McpPrincipal = ProjectKeyPrincipal | RunKeyPrincipal | OAuthPrincipal;

export type AuthFailureCode = Extract<
  McpErrorCode,
  | 'MISSING_CREDENTIALS'
  | 'INVALID_KEY'
  | 'KEY_REVOKED'
  | 'KEY_EXPIRED'
  | 'INVALID_TOKEN'
  | 'TOKEN_EXPIRED'
  | 'TOKEN_REVOKED'
  | 'WRONG_AUDIENCE'
>;

export type AuthResult =
  | { ok: true; principal: McpPrincipal }
  | {
      ok: false;
      code: AuthFailureCode;
      message: string;
      /** Set when the key itself is known (revoked or expired), so a refused call can be audited. */
      key?: Pick<ApiKey, 'id' | 'projectId' | 'userId' | 'runId'>;
    };

/** Whether an Authorization header carries an OAuth access token (as opposed to an API key). */
function bearerAccessToken(authorization: string): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization.trim());
  return m && m[1]!.startsWith(SECRET_PREFIX.accessToken) ? m[1]! : null;
}

/**
 * The caller of a request. `resource` is the MCP endpoint's public URL (the audience an OAuth token
 * must have been issued for); null when MCP authorization is not configured, which refuses tokens.
 */
export async function authenticate(
  prisma: PrismaClient,
  authorization: string | null,
  resource: string | null = null,
): Promise<AuthResult> {
  if (!authorization) {
    return {
      ok: false,
      code: 'MISSING_CREDENTIALS',
      message: 'Send an API key or an access token: Authorization: Bearer <secret>.',
    };
  }
  const token = bearerAccessToken(authorization);
  if (token !== null) {
    if (resource === null) return { ok: false, code: 'INVALID_TOKEN', message: 'Invalid access token.' };
    const check = await checkAccessToken(prisma, token, resource);
    if (!check.ok) return { ok: false, code: check.code, message: check.message };
    const g = check.grant;
    return {
      ok: true,
      principal: {
        kind: 'oauth',
        key: null,
        projectId: g.projectId,
        userId: g.userId,
        runId: null,
        subject: { role: g.role, isAdmin: g.isAdmin },
        requiresOverride: false,
        oauth: { grantId: g.grantId, clientId: g.clientId, clientName: g.clientName, userName: g.userName },
        scopes: g.scopes,
      },
    };
  }
  const creds = parseAuthorization(authorization);
  if (!creds) {
    return {
      ok: false,
      code: 'INVALID_KEY',
      message: 'Malformed Authorization header. Use Bearer <secret key> or Basic base64(public:secret).',
    };
  }
  const check = await verifyKey(prisma, creds);
  if (!check.ok) {
    if (check.code === 'INVALID_KEY') return { ok: false, code: check.code, message: check.message };
    // The secret matched (verifyKey checks it first), so the key is known: keep it for the audit.
    const key = await findKeyRef(prisma, creds.publicKey);
    return { ok: false, code: check.code, message: check.message, ...(key ? { key } : {}) };
  }
  const key = check.key;
  if (key.kind === 'PROJECT') {
    return {
      ok: true,
      principal: {
        kind: 'project-key',
        key,
        projectId: key.projectId,
        userId: null,
        runId: null,
        subject: null,
        requiresOverride: false,
        keyScopes: new Set(storedKeyScopes(key.scopes)),
      },
    };
  }
  // IN_APP_AGENT: the bound user's role now, not when the key was minted.
  if (!key.userId) return { ok: false, code: 'INVALID_KEY', message: 'Invalid API key.' };
  const subject = await loadAccessSubject(prisma, key.projectId, key.userId);
  return {
    ok: true,
    principal: {
      kind: 'run-key',
      key,
      projectId: key.projectId,
      userId: key.userId,
      runId: key.runId,
      subject,
      requiresOverride: true,
    },
  };
}

/**
 * Whether the principal holds `scope` in its project: a project key when it was created with it, a
 * run key when its user's current role grants it, an OAuth token when its grant holds it and the
 * user's current role still grants it.
 */
export function principalHasScope(p: McpPrincipal, scope: Scope): boolean {
  switch (p.kind) {
    case 'project-key':
      return p.keyScopes.has(scope);
    case 'run-key':
      return hasProjectAccess(p.subject, scope);
    case 'oauth':
      return p.scopes.has(scope);
  }
}
