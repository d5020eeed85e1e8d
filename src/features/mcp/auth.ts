/**
 * Who is calling the MCP endpoint. A project key acts for its project with the tools its scopes
 * grant (chosen when it was created; see key-scopes.ts). An in-app-agent key acts for its bound
 * user in its project: the user's CURRENT role decides which tools exist for it (RBAC), and it may
 * run only read-only tools unless a call carries a valid single-use override (see override.ts and
 * server.ts).
 */
import 'server-only';
import type { ApiKey, PrismaClient } from '@/generated/prisma/client';
import { loadAccessSubject } from '@/server/access';
import { findKeyRef, parseAuthorization, verifyKey } from '@/server/api-keys';
import { hasProjectAccess, type AccessSubject, type Scope } from '@/server/rbac';
import type { McpErrorCode } from './errors';
import { storedKeyScopes } from './key-scopes';

export interface McpPrincipal {
  key: Pick<ApiKey, 'id' | 'kind' | 'name' | 'projectId' | 'userId' | 'runId'>;
  projectId: string;
  /** Agent keys: the bound user. */
  userId: string | null;
  /** Agent keys: the agent run the key was minted for. */
  runId: string | null;
  /** Agent keys: the bound user's current access to the project. */
  subject: AccessSubject | null;
  /** True for in-app-agent keys: non-read-only tools need an override. */
  requiresOverride: boolean;
  /** Project keys: the scopes the key was created with. Null for agent keys (`subject` decides). */
  keyScopes: ReadonlySet<Scope> | null;
}

export type AuthResult =
  | { ok: true; principal: McpPrincipal }
  | {
      ok: false;
      code: Extract<McpErrorCode, 'MISSING_CREDENTIALS' | 'INVALID_KEY' | 'KEY_REVOKED' | 'KEY_EXPIRED'>;
      message: string;
      /** Set when the key itself is known (revoked or expired), so a refused call can be audited. */
      key?: Pick<ApiKey, 'id' | 'projectId' | 'userId' | 'runId'>;
    };

export async function authenticate(prisma: PrismaClient, authorization: string | null): Promise<AuthResult> {
  if (!authorization) {
    return { ok: false, code: 'MISSING_CREDENTIALS', message: 'Send an API key: Authorization: Bearer <secret key>.' };
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
      key,
      projectId: key.projectId,
      userId: key.userId,
      runId: key.runId,
      subject,
      requiresOverride: true,
      keyScopes: null,
    },
  };
}

/**
 * Whether the principal holds `scope` in its project: a project key when it was created with it, an
 * agent key when its user's current role grants it.
 */
export function principalHasScope(p: McpPrincipal, scope: Scope): boolean {
  if (p.key.kind === 'PROJECT') return p.keyScopes?.has(scope) === true;
  return p.subject !== null && hasProjectAccess(p.subject, scope);
}
