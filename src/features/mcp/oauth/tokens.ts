/**
 * Codes and tokens of the authorization server, all opaque and stored only as hashes (secrets.ts):
 *
 * - `issueCode`: the consent page's "Allow" stores a single-use code bound to the client, the
 *   redirect URI, the PKCE challenge, the user, the project, the chosen scopes and the resource.
 * - `exchangeCode`: the code (claimed once by a conditional update; a second use revokes the grant
 *   it produced) and the PKCE verifier give a new grant with an access and a refresh token.
 * - `refreshTokens`: a refresh token is rotated on use; presenting it again after
 *   MCP_OAUTH_REFRESH_REUSE_GRACE_SECONDS revokes the grant (the whole family), within it the replay
 *   is only refused (two requests racing).
 * - `revokeToken` (RFC 7009): a refresh token revokes its grant, an access token itself.
 * - `checkAccessToken`: what the MCP endpoint asks for each request.
 *
 * Scopes: a token carries the grant's scopes (or fewer, when the client asked fewer) as far as the
 * user's role allowed when it was issued; a call gets them intersected with the role at the call.
 * A user who is no longer a member gets no token.
 */
import 'server-only';
import type { McpOAuthClient, PrismaClient } from '@/generated/prisma/client';
import { getMemberRole } from '@/server/access';
import { newId } from '@/server/ids';
import { log } from '@/server/log';
import type { Role, Scope } from '@/server/rbac';
import { storedKeyScopes } from '../key-scopes';
import { oauthLifetimes, type OAuthSite } from './config';
import { OAuthError } from './errors';
import { verifierMatches } from './pkce';
import { formatScopes, parseScopeParam, withinRole } from './scopes';
import { hashSecret, isSecretOf, newSecret } from './secrets';

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** Stores a new authorization code and returns its value (shown once: in the redirect). */
export async function issueCode(
  prisma: PrismaClient,
  input: {
    clientId: string;
    userId: string;
    projectId: string;
    scopes: readonly Scope[];
    resource: string;
    redirectUri: string;
    codeChallenge: string;
  },
): Promise<string> {
  const code = newSecret('code');
  await prisma.mcpOAuthCode.create({
    data: {
      codeHash: hashSecret(code),
      clientId: input.clientId,
      userId: input.userId,
      projectId: input.projectId,
      scopes: [...input.scopes],
      resource: input.resource,
      redirectUri: input.redirectUri,
      codeChallenge: input.codeChallenge,
      expiresAt: new Date(Date.now() + oauthLifetimes().codeMs),
    },
  });
  return code;
}

/** Revokes a grant and every token of it (one family). */
export async function revokeGrantTokens(prisma: PrismaClient, grantId: string, at = new Date()): Promise<void> {
  await prisma.$transaction([
    prisma.mcpOAuthGrant.updateMany({ where: { id: grantId, revokedAt: null }, data: { revokedAt: at } }),
    prisma.mcpOAuthToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: at } }),
  ]);
}

/**
 * The scopes a new token gets: those asked for (`scope` parameter; all of `allowed` when absent),
 * which must be among `allowed`, narrowed to the user's current role.
 */
function tokenScopes(requested: string | undefined, allowed: readonly Scope[], role: Role | null): Scope[] {
  let wanted: readonly Scope[] = allowed;
  if (requested !== undefined) {
    const { known, unknown } = parseScopeParam(requested);
    const held = new Set(allowed);
    if (unknown.length > 0 || known.some((s) => !held.has(s)))
      throw new OAuthError('invalid_scope', 'The requested scope is not part of what was granted.');
    wanted = known;
  }
  const scopes = withinRole(wanted, role);
  if (scopes.length === 0)
    throw new OAuthError(
      'invalid_scope',
      "The user's role in the project no longer allows any of the requested scopes.",
    );
  return scopes;
}

/** Creates an access and a refresh token of a grant (inside the caller's transaction). */
async function mintPair(
  tx: Pick<PrismaClient, 'mcpOAuthToken'>,
  grantId: string,
  scopes: readonly Scope[],
): Promise<TokenResponse> {
  const life = oauthLifetimes();
  const now = Date.now();
  const access = newSecret('accessToken');
  const refresh = newSecret('refreshToken');
  await tx.mcpOAuthToken.createMany({
    data: [
      {
        tokenHash: hashSecret(access),
        kind: 'ACCESS',
        grantId,
        scopes: [...scopes],
        expiresAt: new Date(now + life.accessTokenMs),
      },
      {
        tokenHash: hashSecret(refresh),
        kind: 'REFRESH',
        grantId,
        scopes: [...scopes],
        expiresAt: new Date(now + life.refreshTokenMs),
      },
    ],
  });
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: Math.floor(life.accessTokenMs / 1000),
    refresh_token: refresh,
    scope: formatScopes(scopes),
  };
}

function checkResource(given: string | undefined, expected: string): void {
  if (given !== undefined && given !== expected)
    throw new OAuthError('invalid_target', 'The resource differs from the one this authorization was made for.');
}

/** The authorization_code grant (RFC 6749 §4.1.3 with PKCE, RFC 7636 §4.6). */
export async function exchangeCode(
  prisma: PrismaClient,
  site: OAuthSite,
  client: McpOAuthClient,
  params: { code: string; redirectUri: string; codeVerifier: string; resource?: string; scope?: string },
): Promise<TokenResponse> {
  const invalid = () => new OAuthError('invalid_grant', 'The authorization code is invalid, expired or already used.');
  if (!isSecretOf('code', params.code)) throw invalid();
  const codeHash = hashSecret(params.code);
  const row = await prisma.mcpOAuthCode.findUnique({ where: { codeHash } });
  if (!row) throw invalid();
  // Claimed once, on every instance: a second presentation of the code is a replay.
  const claimed = await prisma.mcpOAuthCode.updateMany({
    where: { codeHash, usedAt: null },
    data: { usedAt: new Date() },
  });
  if (claimed.count === 0) {
    const used = await prisma.mcpOAuthCode.findUnique({ where: { codeHash }, select: { grantId: true } });
    if (used?.grantId) {
      await revokeGrantTokens(prisma, used.grantId);
      log().warn(
        { event: 'mcp.oauth.code_replayed', grantId: used.grantId, clientId: row.clientId },
        'An authorization code was used twice: its grant is revoked',
      );
    }
    throw invalid();
  }
  if (row.clientId !== client.id) throw invalid();
  if (row.expiresAt.getTime() <= Date.now()) throw invalid();
  if (row.redirectUri !== params.redirectUri)
    throw new OAuthError('invalid_grant', 'The redirect_uri differs from the one of the authorization request.');
  if (!verifierMatches(params.codeVerifier, row.codeChallenge))
    throw new OAuthError('invalid_grant', 'The code_verifier does not match the code_challenge.');
  checkResource(params.resource, row.resource);
  if (row.resource !== site.resource)
    throw new OAuthError('invalid_target', 'This code was issued for another resource.');
  const role = await getMemberRole(prisma, row.projectId, row.userId);
  if (!role) throw new OAuthError('invalid_grant', 'The user is no longer a member of the project.');
  const granted = storedKeyScopes(row.scopes);
  const scopes = tokenScopes(params.scope, granted, role);
  return prisma.$transaction(async (tx) => {
    const grant = await tx.mcpOAuthGrant.create({
      data: {
        id: newId('gr_'),
        clientId: row.clientId,
        userId: row.userId,
        projectId: row.projectId,
        scopes: granted,
        resource: row.resource,
      },
    });
    await tx.mcpOAuthCode.update({ where: { codeHash }, data: { grantId: grant.id } });
    const pair = await mintPair(tx, grant.id, scopes);
    log().info(
      {
        event: 'mcp.oauth.granted',
        grantId: grant.id,
        clientId: row.clientId,
        projectId: row.projectId,
        scopes: scopes.length,
      },
      'A connected app got its first tokens',
    );
    return pair;
  });
}

/** The refresh_token grant (RFC 6749 §6) with rotation. */
export async function refreshTokens(
  prisma: PrismaClient,
  site: OAuthSite,
  client: McpOAuthClient,
  params: { refreshToken: string; resource?: string; scope?: string },
): Promise<TokenResponse> {
  const invalid = (why = 'The refresh token is invalid, expired or revoked.') => new OAuthError('invalid_grant', why);
  if (!isSecretOf('refreshToken', params.refreshToken)) throw invalid();
  const tokenHash = hashSecret(params.refreshToken);
  const row = await prisma.mcpOAuthToken.findUnique({ where: { tokenHash }, include: { grant: true } });
  if (row?.kind !== 'REFRESH' || row.grant.clientId !== client.id) throw invalid();
  if (row.rotatedAt) {
    await replayed(prisma, row.grantId, row.rotatedAt, client.id);
    throw invalid('The refresh token was already used.');
  }
  if (row.revokedAt || row.grant.revokedAt || row.expiresAt.getTime() <= Date.now()) throw invalid();
  checkResource(params.resource, row.grant.resource);
  if (row.grant.resource !== site.resource)
    throw new OAuthError('invalid_target', 'This grant is for another resource.');
  const role = await getMemberRole(prisma, row.grant.projectId, row.grant.userId);
  if (!role) throw invalid('The user is no longer a member of the project.');
  const scopes = tokenScopes(params.scope, storedKeyScopes(row.grant.scopes), role);
  const rotatedAt = new Date();
  const pair = await prisma.$transaction(async (tx) => {
    const claimed = await tx.mcpOAuthToken.updateMany({
      where: { tokenHash, rotatedAt: null, revokedAt: null },
      data: { rotatedAt },
    });
    if (claimed.count === 0) return null;
    return mintPair(tx, row.grantId, scopes);
  });
  if (!pair) {
    // Another request rotated it between the read and the claim: a race, within the grace.
    throw invalid('The refresh token was already used.');
  }
  return pair;
}

/** A rotated refresh token presented again: refused; after the grace, its grant is revoked. */
async function replayed(prisma: PrismaClient, grantId: string, rotatedAt: Date, clientId: string): Promise<void> {
  if (Date.now() - rotatedAt.getTime() <= oauthLifetimes().refreshReuseGraceMs) return;
  await revokeGrantTokens(prisma, grantId);
  log().warn(
    { event: 'mcp.oauth.refresh_replayed', grantId, clientId },
    'A rotated refresh token was used again: its grant is revoked',
  );
}

/**
 * Revocation (RFC 7009): a refresh token revokes its grant and every token of it, an access token
 * only itself. An unknown token is not an error (§2.2). A token of another client is refused.
 */
export async function revokeToken(prisma: PrismaClient, client: McpOAuthClient, token: string): Promise<void> {
  const kind = isSecretOf('refreshToken', token) ? 'REFRESH' : isSecretOf('accessToken', token) ? 'ACCESS' : null;
  if (!kind) return;
  const row = await prisma.mcpOAuthToken.findUnique({
    where: { tokenHash: hashSecret(token) },
    select: { tokenHash: true, kind: true, grantId: true, grant: { select: { clientId: true } } },
  });
  if (!row) return;
  if (row.grant.clientId !== client.id)
    throw new OAuthError('unauthorized_client', 'This token was not issued to this client.');
  if (row.kind === 'REFRESH') await revokeGrantTokens(prisma, row.grantId);
  else
    await prisma.mcpOAuthToken.updateMany({
      where: { tokenHash: row.tokenHash, revokedAt: null },
      data: { revokedAt: new Date() },
    });
}

interface AccessGrant {
  grantId: string;
  clientId: string;
  clientName: string;
  userId: string;
  userName: string;
  projectId: string;
  role: Role | null;
  isAdmin: boolean;
  /** The token's scopes within the user's current role: what this call may do. */
  scopes: ReadonlySet<Scope>;
}

export type AccessCheck =
  | { ok: true; grant: AccessGrant }
  | { ok: false; code: 'INVALID_TOKEN' | 'TOKEN_EXPIRED' | 'TOKEN_REVOKED' | 'WRONG_AUDIENCE'; message: string };

const LAST_USED_RESOLUTION_MS = 60_000;

/**
 * An access token presented to the MCP endpoint (`resource`): known, unexpired, unrevoked, of an
 * unrevoked grant, issued for this very resource; with the user's current role read now.
 */
export async function checkAccessToken(prisma: PrismaClient, token: string, resource: string): Promise<AccessCheck> {
  if (!isSecretOf('accessToken', token)) return { ok: false, code: 'INVALID_TOKEN', message: 'Invalid access token.' };
  const row = await prisma.mcpOAuthToken.findUnique({
    where: { tokenHash: hashSecret(token) },
    include: {
      grant: {
        include: { client: { select: { name: true } }, user: { select: { name: true, isAdmin: true } } },
      },
    },
  });
  if (row?.kind !== 'ACCESS') return { ok: false, code: 'INVALID_TOKEN', message: 'Invalid access token.' };
  if (row.revokedAt || row.grant.revokedAt)
    return { ok: false, code: 'TOKEN_REVOKED', message: 'This access token has been revoked.' };
  if (row.expiresAt.getTime() <= Date.now())
    return { ok: false, code: 'TOKEN_EXPIRED', message: 'This access token has expired.' };
  if (row.grant.resource !== resource)
    return { ok: false, code: 'WRONG_AUDIENCE', message: 'This access token was issued for another resource.' };
  const g = row.grant;
  const role = await getMemberRole(prisma, g.projectId, g.userId);
  const scopes = new Set(
    withinRole(
      storedKeyScopes(row.scopes).filter((s) => g.scopes.includes(s)),
      role,
    ),
  );
  if (!g.lastUsedAt || Date.now() - g.lastUsedAt.getTime() > LAST_USED_RESOLUTION_MS) {
    await prisma.mcpOAuthGrant.update({ where: { id: g.id }, data: { lastUsedAt: new Date() } });
  }
  return {
    ok: true,
    grant: {
      grantId: g.id,
      clientId: g.clientId,
      clientName: g.client.name,
      userId: g.userId,
      userName: g.user.name,
      projectId: g.projectId,
      role,
      isAdmin: g.user.isAdmin,
      scopes,
    },
  };
}
