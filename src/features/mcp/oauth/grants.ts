/**
 * "Connected apps": the grants a user gave (their own settings) and the grants in a project (its
 * admins' settings), with the last use, and revocation. A grant is listed while it is not revoked
 * and still has a refresh token that has not expired (so it can still be used); revoking it ends
 * every token of it at once.
 */
import 'server-only';
import { z } from 'zod';
import type { PrismaClient } from '@/generated/prisma/client';
import { log } from '@/server/log';
import type { Scope } from '@/server/rbac';
import { Identifier } from '@/server/text';
import { storedKeyScopes } from '../key-scopes';
import { revokeGrantTokens } from './tokens';

export const GrantIdInput = z.object({ grantId: Identifier }).strict();

export interface ConnectedApp {
  id: string;
  client: { id: string; name: string; kind: 'REGISTERED' | 'METADATA_DOCUMENT'; documentHost: string | null };
  project: { id: string; name: string };
  user: { id: string; name: string; email: string };
  scopes: Scope[];
  createdAt: Date;
  lastUsedAt: Date | null;
}

const MAX_LISTED = 200;

async function list(prisma: PrismaClient, where: { userId: string } | { projectId: string }): Promise<ConnectedApp[]> {
  const now = new Date();
  const rows = await prisma.mcpOAuthGrant.findMany({
    where: {
      ...where,
      revokedAt: null,
      tokens: { some: { kind: 'REFRESH', revokedAt: null, rotatedAt: null, expiresAt: { gt: now } } },
    },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: MAX_LISTED,
    select: {
      id: true,
      scopes: true,
      createdAt: true,
      lastUsedAt: true,
      client: { select: { id: true, name: true, kind: true } },
      project: { select: { id: true, name: true } },
      user: { select: { id: true, name: true, email: true } },
    },
  });
  return rows.map((g) => ({
    id: g.id,
    client: {
      id: g.client.id,
      name: g.client.name,
      kind: g.client.kind,
      documentHost: g.client.kind === 'METADATA_DOCUMENT' ? new URL(g.client.id).host : null,
    },
    project: g.project,
    user: g.user,
    scopes: storedKeyScopes(g.scopes),
    createdAt: g.createdAt,
    lastUsedAt: g.lastUsedAt,
  }));
}

/** The apps a user connected, in every project, newest first. */
export function listUserGrants(prisma: PrismaClient, userId: string): Promise<ConnectedApp[]> {
  return list(prisma, { userId });
}

/** Every app connected to a project, by any member, newest first. */
export function listProjectGrants(prisma: PrismaClient, projectId: string): Promise<ConnectedApp[]> {
  return list(prisma, { projectId });
}

/** Revokes a grant the caller may revoke (theirs, or one in their project); false when there is none. */
export async function revokeGrant(
  prisma: PrismaClient,
  grantId: string,
  owner: { userId: string } | { projectId: string },
): Promise<boolean> {
  const grant = await prisma.mcpOAuthGrant.findFirst({ where: { id: grantId, ...owner }, select: { id: true } });
  if (!grant) return false;
  await revokeGrantTokens(prisma, grant.id);
  log().info(
    { event: 'mcp.oauth.disconnected', grantId: grant.id, by: 'userId' in owner ? 'user' : 'project' },
    'A connected app was disconnected',
  );
  return true;
}
