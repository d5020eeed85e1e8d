import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKey, PrismaClient } from '@/generated/prisma/client';
import { newId } from './ids';

/**
 * Project API keys and temporary in-app-agent keys. A key is a public part (`pk_<id>`) and a secret
 * (`sk_<id>_<random>`); only a SHA-256 hash of the secret is stored (secrets are 192-bit random, so a
 * fast hash is enough). The secret embeds the public id, so `Authorization: Bearer <secret>` alone
 * identifies the key; `Basic base64(pk:sk)` works too.
 */
export interface IssuedKey {
  key: ApiKey;
  publicKey: string;
  /** Shown once to the user (project keys) or kept in server memory (agent keys). */
  secret: string;
}

function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

function keyMaterial(): { publicKey: string; secret: string } {
  const id = randomBytes(12).toString('base64url');
  return { publicKey: `pk_${id}`, secret: `sk_${id}_${randomBytes(24).toString('base64url')}` };
}

export async function createProjectKey(
  prisma: PrismaClient,
  input: { projectId: string; name: string; createdById: string; expiresAt?: Date | null },
): Promise<IssuedKey> {
  const { publicKey, secret } = keyMaterial();
  const key = await prisma.apiKey.create({
    data: {
      id: newId('k_'),
      kind: 'PROJECT',
      name: input.name,
      publicKey,
      secretHash: hashSecret(secret),
      projectId: input.projectId,
      createdById: input.createdById,
      expiresAt: input.expiresAt ?? null,
    },
  });
  return { key, publicKey, secret };
}

/** A short-lived key bound to one user, project and agent run. Revoke it when the run ends. */
export async function mintAgentKey(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; runId: string; ttlSeconds: number },
): Promise<IssuedKey> {
  const { publicKey, secret } = keyMaterial();
  const key = await prisma.apiKey.create({
    data: {
      id: newId('k_'),
      kind: 'IN_APP_AGENT',
      name: `in-app agent run ${input.runId}`,
      publicKey,
      secretHash: hashSecret(secret),
      projectId: input.projectId,
      userId: input.userId,
      runId: input.runId,
      expiresAt: new Date(Date.now() + input.ttlSeconds * 1000),
    },
  });
  return { key, publicKey, secret };
}

export async function revokeKey(prisma: PrismaClient, keyId: string): Promise<void> {
  await prisma.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: new Date() } });
}

export async function revokeRunKeys(prisma: PrismaClient, runId: string): Promise<void> {
  await prisma.apiKey.updateMany({ where: { runId, revokedAt: null }, data: { revokedAt: new Date() } });
}

/** Parses `Authorization` into public key + secret; null when absent or malformed. */
export function parseAuthorization(header: string | null): { publicKey: string; secret: string } | null {
  if (!header) return null;
  const [scheme, value] = header.trim().split(/\s+/, 2);
  if (!scheme || !value || value.length > 512) return null;
  if (scheme.toLowerCase() === 'basic') {
    let decoded: string;
    try {
      decoded = Buffer.from(value, 'base64').toString('utf8');
    } catch {
      return null;
    }
    const idx = decoded.indexOf(':');
    if (idx <= 0) return null;
    return { publicKey: decoded.slice(0, idx), secret: decoded.slice(idx + 1) };
  }
  if (scheme.toLowerCase() === 'bearer') {
    const m = /^sk_([A-Za-z0-9_-]{16})_[A-Za-z0-9_-]+$/.exec(value);
    if (!m) return null;
    return { publicKey: `pk_${m[1]}`, secret: value };
  }
  return null;
}

export type KeyCheck =
  | { ok: true; key: ApiKey }
  | { ok: false; code: 'INVALID_KEY' | 'KEY_REVOKED' | 'KEY_EXPIRED'; message: string };

const LAST_USED_RESOLUTION_MS = 60_000;

/** Verifies a key (timing-safe) and records its use at most once a minute. */
export async function verifyKey(prisma: PrismaClient, creds: { publicKey: string; secret: string }): Promise<KeyCheck> {
  const key = await prisma.apiKey.findUnique({ where: { publicKey: creds.publicKey } });
  const expected = Buffer.from(key?.secretHash ?? hashSecret('no-such-key'), 'hex');
  const actual = Buffer.from(hashSecret(creds.secret), 'hex');
  if (!key || !timingSafeEqual(expected, actual)) return { ok: false, code: 'INVALID_KEY', message: 'Invalid API key.' };
  if (key.revokedAt) return { ok: false, code: 'KEY_REVOKED', message: 'This API key has been revoked.' };
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now()) return { ok: false, code: 'KEY_EXPIRED', message: 'This API key has expired.' };
  // Per-run agent keys live for one run: their use is in the audit trail, not worth a write per run.
  if (key.kind === 'PROJECT' && (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS)) {
    await prisma.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date() } });
  }
  return { ok: true, key };
}
