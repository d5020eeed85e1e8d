/**
 * Project API keys: listing and finding a key of the project. Creation and revocation live in
 * src/server/api-keys.ts, with the key material and its verification.
 */
import { z } from 'zod';
import { KeyScopesInput, storedKeyScopes } from '@/features/mcp/key-scopes';
import type { PrismaClient } from '@/generated/prisma/client';
import type { Scope } from '@/server/rbac';
import { Identifier, SafeText } from '@/server/text';
import { appError } from '@/server/trpc';

export interface ProjectKeyInfo {
  id: string;
  name: string;
  publicKey: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  status: 'active' | 'revoked' | 'expired';
  createdBy: { id: string; name: string } | null;
  /** The tools the key may list and call (fixed at creation). */
  scopes: Scope[];
}

/** PROJECT keys of a project, newest first. Never includes secrets or hashes. */
export async function listProjectKeys(prisma: PrismaClient, projectId: string): Promise<ProjectKeyInfo[]> {
  const rows = await prisma.apiKey.findMany({
    where: { projectId, kind: 'PROJECT' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: {
      id: true,
      name: true,
      publicKey: true,
      createdAt: true,
      lastUsedAt: true,
      expiresAt: true,
      revokedAt: true,
      scopes: true,
      createdBy: { select: { id: true, name: true } },
    },
  });
  const now = Date.now();
  return rows.map((k) => ({
    ...k,
    scopes: storedKeyScopes(k.scopes),
    status: k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt.getTime() <= now ? 'expired' : 'active',
  }));
}

export const CreateKeyInput = z
  .object({
    name: SafeText.trim().min(1, 'Name is required.').max(100),
    /** Days until the key expires; omitted for no expiry. */
    expiresInDays: z.number().int().min(1).max(3650).optional(),
    /** What the key may do (a preset's list or individual scopes); never more than the creator's role. */
    scopes: KeyScopesInput,
  })
  .strict();
export type CreateKeyInput = z.input<typeof CreateKeyInput>;

export const KeyIdInput = z.object({ keyId: Identifier }).strict();

/** Finds a PROJECT key of this project; KEY_NOT_FOUND otherwise (also for other projects' keys). */
export async function requireProjectKey(
  prisma: PrismaClient,
  projectId: string,
  keyId: string,
): Promise<{ id: string }> {
  const k = await prisma.apiKey.findFirst({ where: { id: keyId, projectId, kind: 'PROJECT' }, select: { id: true } });
  if (!k) throw appError('NOT_FOUND', 'KEY_NOT_FOUND', 'API key not found.');
  return k;
}
