import 'server-only';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ApiKey, PrismaClient } from '@/generated/prisma/client';
import { newId } from './ids';
import type { Scope } from './rbac';

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

/**
 * A project key for outside MCP clients. `scopes` are the tools it may list and call, fixed for the
 * key's lifetime; the caller checks them against what the creator's role holds.
 */
export async function createProjectKey(
  prisma: PrismaClient,
  input: { projectId: string; name: string; createdById: string; scopes: readonly Scope[]; expiresAt?: Date | null },
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
      scopes: [...new Set(input.scopes)],
      expiresAt: input.expiresAt ?? null,
    },
  });
  return { key, publicKey, secret };
}

/** An agent key as it is stored: the run's statement inserts it together with the run. */
export interface AgentKeyRow {
  id: string;
  name: string;
  publicKey: string;
  secretHash: string;
  ttlSeconds: number;
}

/**
 * A short-lived key bound to one user, project and agent run, before it is stored: the row (with
 * only the secret's hash) and the secret, kept in server memory. Revoke it when the run ends.
 */
export function agentKeyMaterial(runId: string, ttlSeconds: number): { row: AgentKeyRow; secret: string } {
  const { publicKey, secret } = keyMaterial();
  return {
    row: { id: newId('k_'), name: `in-app agent run ${runId}`, publicKey, secretHash: hashSecret(secret), ttlSeconds },
    secret,
  };
}

/** Mints and stores an agent key on its own (the run stores its key when it opens). */
export async function mintAgentKey(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; runId: string; ttlSeconds: number },
): Promise<IssuedKey> {
  const { row, secret } = agentKeyMaterial(input.runId, input.ttlSeconds);
  const key = await prisma.apiKey.create({
    data: {
      id: row.id,
      kind: 'IN_APP_AGENT',
      name: row.name,
      publicKey: row.publicKey,
      secretHash: row.secretHash,
      projectId: input.projectId,
      userId: input.userId,
      runId: input.runId,
      expiresAt: new Date(Date.now() + input.ttlSeconds * 1000),
    },
  });
  return { key, publicKey: row.publicKey, secret };
}

/** The ids a key is audited under, by its public part; null for an unknown key. */
export async function findKeyRef(
  prisma: PrismaClient,
  publicKey: string,
): Promise<Pick<ApiKey, 'id' | 'projectId' | 'userId' | 'runId'> | null> {
  return prisma.apiKey.findUnique({
    where: { publicKey },
    select: { id: true, projectId: true, userId: true, runId: true },
  });
}

export async function revokeKey(prisma: PrismaClient, keyId: string): Promise<void> {
  await prisma.apiKey.updateMany({ where: { id: keyId, revokedAt: null }, data: { revokedAt: new Date() } });
}

/**
 * The exact shapes keys are minted in (see keyMaterial): 12 random bytes as base64url for the id,
 * 24 for the secret part. Anything else is refused before it reaches the database, so a malformed
 * header (a NUL byte, an overlong or non-ASCII value) is an invalid key, never a database error.
 */
export const PUBLIC_KEY_PATTERN = /^pk_([A-Za-z0-9_-]{16})$/;
export const SECRET_PATTERN = /^sk_([A-Za-z0-9_-]{16})_[A-Za-z0-9_-]{32}$/;
/** Longest `Authorization` value worth decoding: Basic of the longest valid pair, with room to spare. */
const MAX_CREDENTIALS_LENGTH = 256;

/**
 * Parses `Authorization` into public key + secret; null when absent or malformed. `Bearer <secret>`
 * or `Basic base64(<public key>:<secret>)`, where the secret must belong to that public key.
 */
export function parseAuthorization(header: string | null): { publicKey: string; secret: string } | null {
  if (!header) return null;
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2) return null;
  const [scheme, value] = parts as [string, string];
  if (value.length > MAX_CREDENTIALS_LENGTH) return null;
  let secret: string;
  let publicKey: string;
  if (scheme.toLowerCase() === 'basic') {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(value)) return null;
    const decoded = Buffer.from(value, 'base64').toString('latin1');
    const idx = decoded.indexOf(':');
    if (idx <= 0) return null;
    publicKey = decoded.slice(0, idx);
    secret = decoded.slice(idx + 1);
  } else if (scheme.toLowerCase() === 'bearer') {
    secret = value;
    publicKey = '';
  } else {
    return null;
  }
  const s = SECRET_PATTERN.exec(secret);
  if (!s) return null;
  const fromSecret = `pk_${s[1]}`;
  if (publicKey === '') publicKey = fromSecret;
  if (!PUBLIC_KEY_PATTERN.test(publicKey) || publicKey !== fromSecret) return null;
  return { publicKey, secret };
}

export type KeyCheck =
  | { ok: true; key: ApiKey }
  | { ok: false; code: 'INVALID_KEY' | 'KEY_REVOKED' | 'KEY_EXPIRED'; message: string };

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * Verifies a key (timing-safe) and records its use at most once a minute. Credentials that do not
 * have the minted shape are invalid without a database query.
 */
export async function verifyKey(prisma: PrismaClient, creds: { publicKey: string; secret: string }): Promise<KeyCheck> {
  const shape = SECRET_PATTERN.exec(creds.secret);
  if (!shape || !PUBLIC_KEY_PATTERN.test(creds.publicKey) || creds.publicKey !== `pk_${shape[1]}`) {
    return { ok: false, code: 'INVALID_KEY', message: 'Invalid API key.' };
  }
  const key = await prisma.apiKey.findUnique({ where: { publicKey: creds.publicKey } });
  const expected = Buffer.from(key?.secretHash ?? hashSecret('no-such-key'), 'hex');
  const actual = Buffer.from(hashSecret(creds.secret), 'hex');
  if (!key || !timingSafeEqual(expected, actual))
    return { ok: false, code: 'INVALID_KEY', message: 'Invalid API key.' };
  if (key.revokedAt) return { ok: false, code: 'KEY_REVOKED', message: 'This API key has been revoked.' };
  if (key.expiresAt && key.expiresAt.getTime() <= Date.now())
    return { ok: false, code: 'KEY_EXPIRED', message: 'This API key has expired.' };
  // Per-run agent keys live for one run: their use is in the audit trail, not worth a write per run.
  if (key.kind === 'PROJECT' && (!key.lastUsedAt || Date.now() - key.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS)) {
    await prisma.apiKey.update({ where: { id: key.id }, data: { lastUsedAt: new Date() } });
  }
  return { ok: true, key };
}
