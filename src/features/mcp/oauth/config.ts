/**
 * Where the product's MCP authorization lives, built from the configured public URL
 * (NEXTAUTH_URL) and never from a request's Host header: the issuer, the protected resource (the
 * MCP endpoint) and every endpoint the metadata documents name. Lifetimes come from the settings.
 */
import 'server-only';
import { env, type Env } from '@/server/env';

/** The MCP endpoint's path: the protected resource. */
export const MCP_PATH = '/api/public/mcp';
const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';
const AUTHORIZE_PATH = '/oauth/authorize';
export const CONSENT_PATH = '/oauth/consent';
export const CONSENT_DECISION_PATH = '/oauth/consent/decision';
const TOKEN_PATH = '/api/oauth/token';
const REGISTER_PATH = '/api/oauth/register';
const REVOKE_PATH = '/api/oauth/revoke';

export interface OAuthSite {
  /** The authorization server's issuer identifier: the public URL's origin. */
  issuer: string;
  /** The protected resource: the MCP endpoint's public URL (RFC 8707 audience of every token). */
  resource: string;
  /** RFC 9728 metadata of the resource, path-suffixed form (what a 401 names). */
  resourceMetadataUrl: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  registrationEndpoint: string;
  revocationEndpoint: string;
}

/** The public URLs, or null when NEXTAUTH_URL is not set (MCP authorization is then unavailable). */
export function oauthSite(settings: Env = env()): OAuthSite | null {
  if (!settings.NEXTAUTH_URL) return null;
  const issuer = new URL(settings.NEXTAUTH_URL).origin;
  return {
    issuer,
    resource: `${issuer}${MCP_PATH}`,
    resourceMetadataUrl: `${issuer}${PROTECTED_RESOURCE_METADATA_PATH}${MCP_PATH}`,
    authorizationEndpoint: `${issuer}${AUTHORIZE_PATH}`,
    tokenEndpoint: `${issuer}${TOKEN_PATH}`,
    registrationEndpoint: `${issuer}${REGISTER_PATH}`,
    revocationEndpoint: `${issuer}${REVOKE_PATH}`,
  };
}

export interface OAuthLifetimes {
  accessTokenMs: number;
  refreshTokenMs: number;
  codeMs: number;
  refreshReuseGraceMs: number;
}

export function oauthLifetimes(settings: Env = env()): OAuthLifetimes {
  return {
    accessTokenMs: settings.MCP_OAUTH_ACCESS_TOKEN_TTL_SECONDS * 1000,
    refreshTokenMs: settings.MCP_OAUTH_REFRESH_TOKEN_TTL_DAYS * 86_400_000,
    codeMs: settings.MCP_OAUTH_CODE_TTL_SECONDS * 1000,
    refreshReuseGraceMs: settings.MCP_OAUTH_REFRESH_REUSE_GRACE_SECONDS * 1000,
  };
}
