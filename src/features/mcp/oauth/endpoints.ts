/**
 * The JSON endpoints of the authorization server and the discovery documents, as web-standard
 * handlers the route files under src/app export: token (RFC 6749 §3.2 with PKCE and rotation),
 * registration (RFC 7591), revocation (RFC 7009), RFC 9728 and RFC 8414 metadata. Every answer
 * carries CORS headers; bad input is an OAuth error with a registered code, never a 500.
 */
import 'server-only';
import type { PrismaClient } from '@/generated/prisma/client';
import { clientAddress } from '@/server/client-address';
import { getPrisma } from '@/server/db';
import { env } from '@/server/env';
import { isInfrastructureError, describeError } from '@/server/errors';
import { hitLimit } from '@/server/limits';
import { requestLog } from '@/server/log';
import { authenticateClient, registerClient } from './clients';
import { oauthSite, type OAuthSite } from './config';
import { OAuthError, oauthErrorResponse } from './errors';
import { corsHeaders, noStoreJson, readForm, readJson } from './http';
import { authorizationServerMetadata, protectedResourceMetadata } from './metadata';
import { exchangeCode, refreshTokens, revokeToken } from './tokens';

interface Options {
  prisma?: PrismaClient;
}

function notConfigured(): Response {
  return noStoreJson(
    { error: 'temporarily_unavailable', error_description: 'MCP authorization needs the public URL (NEXTAUTH_URL).' },
    503,
  );
}

/** Runs an endpoint: OAuthError becomes its answer; the database being away is 503; anything else 500. */
async function guarded(
  req: Request,
  fn: (site: OAuthSite) => Promise<Response>,
  headers: (err: OAuthError) => Record<string, string> = () => ({}),
): Promise<Response> {
  const site = oauthSite();
  if (!site) return notConfigured();
  try {
    return await fn(site);
  } catch (err) {
    if (err instanceof OAuthError) return oauthErrorResponse(req, err, headers(err));
    if (isInfrastructureError(err))
      return oauthErrorResponse(
        req,
        new OAuthError('temporarily_unavailable', 'The service is temporarily unavailable.', 503),
        {
          'retry-after': '5',
        },
      );
    requestLog(req).error({ event: 'mcp.oauth.failed', error: describeError(err) }, 'OAuth endpoint failed');
    return oauthErrorResponse(req, new OAuthError('server_error', 'The server could not handle this request.', 500));
  }
}

function optional(form: ReadonlyMap<string, string>, name: string): string | undefined {
  return form.get(name);
}

function required(form: ReadonlyMap<string, string>, name: string): string {
  const v = form.get(name);
  if (v === undefined || v === '') throw new OAuthError('invalid_request', `${name} is required.`);
  return v;
}

/** A Basic-authenticated client that failed is asked to authenticate again (RFC 6749 §5.2). */
function basicChallenge(req: Request) {
  return (err: OAuthError): Record<string, string> =>
    err.error === 'invalid_client' && /^Basic\b/i.test(req.headers.get('authorization') ?? '')
      ? { 'www-authenticate': 'Basic realm="oauth"' }
      : {};
}

/** POST /api/oauth/token */
export function handleToken(req: Request, opts: Options = {}): Promise<Response> {
  return guarded(
    req,
    async (site) => {
      const read = await readForm(req);
      if (!read.ok) throw new OAuthError('invalid_request', read.description);
      const form = read.value;
      const grantType = form.get('grant_type');
      if (!grantType) throw new OAuthError('invalid_request', 'grant_type is required.');
      if (grantType !== 'authorization_code' && grantType !== 'refresh_token')
        throw new OAuthError('unsupported_grant_type', 'Supported grant types: authorization_code, refresh_token.');
      const prisma = opts.prisma ?? (await getPrisma());
      const client = await authenticateClient(prisma, req.headers.get('authorization'), form);
      const common = { resource: optional(form, 'resource'), scope: optional(form, 'scope') };
      if (grantType === 'authorization_code') {
        const code = required(form, 'code');
        const redirectUri = required(form, 'redirect_uri');
        const codeVerifier = form.get('code_verifier');
        if (!codeVerifier) throw new OAuthError('invalid_request', 'code_verifier is required (PKCE).');
        return noStoreJson(
          await exchangeCode(prisma, site, client, { code, redirectUri, codeVerifier, ...strip(common) }),
        );
      }
      const refreshToken = required(form, 'refresh_token');
      return noStoreJson(await refreshTokens(prisma, site, client, { refreshToken, ...strip(common) }));
    },
    basicChallenge(req),
  );
}

/** Drops absent optional parameters (exactOptionalPropertyTypes). */
function strip(o: { resource: string | undefined; scope: string | undefined }): { resource?: string; scope?: string } {
  return {
    ...(o.resource !== undefined ? { resource: o.resource } : {}),
    ...(o.scope !== undefined ? { scope: o.scope } : {}),
  };
}

/** POST /api/oauth/revoke */
export function handleRevoke(req: Request, opts: Options = {}): Promise<Response> {
  return guarded(
    req,
    async () => {
      const read = await readForm(req);
      if (!read.ok) throw new OAuthError('invalid_request', read.description);
      const form = read.value;
      const token = required(form, 'token');
      const prisma = opts.prisma ?? (await getPrisma());
      const client = await authenticateClient(prisma, req.headers.get('authorization'), form);
      await revokeToken(prisma, client, token);
      return new Response(null, { status: 200, headers: { 'cache-control': 'no-store', ...corsHeaders() } });
    },
    basicChallenge(req),
  );
}

const REGISTRATION_WINDOW_SECONDS = 60;

/** POST /api/oauth/register */
export function handleRegister(req: Request, opts: Options = {}): Promise<Response> {
  return guarded(req, async () => {
    const prisma = opts.prisma ?? (await getPrisma());
    const settings = env();
    const address = clientAddress(req.headers, settings.TRUST_PROXY);
    const hit = await hitLimit(prisma, {
      key: `oauth:register:${address ?? 'any'}`,
      limit: settings.MCP_OAUTH_REGISTRATIONS_PER_MINUTE,
      windowSeconds: REGISTRATION_WINDOW_SECONDS,
    });
    if (!hit.allowed) {
      const err = new OAuthError(
        'slow_down',
        `Too many client registrations. Try again in ${hit.retryAfterSeconds} s.`,
        429,
      );
      return oauthErrorResponse(req, err, { 'retry-after': String(hit.retryAfterSeconds) });
    }
    const read = await readJson(req);
    if (!read.ok) throw new OAuthError('invalid_client_metadata', read.description);
    return noStoreJson(await registerClient(prisma, read.value), 201);
  });
}

/** GET /.well-known/oauth-protected-resource[/api/public/mcp] */
export function protectedResourceMetadataResponse(): Response {
  const site = oauthSite();
  if (!site) return notConfigured();
  return Response.json(protectedResourceMetadata(site), {
    headers: { 'cache-control': 'public, max-age=300', ...corsHeaders() },
  });
}

/** GET /.well-known/oauth-authorization-server */
export function authorizationServerMetadataResponse(): Response {
  const site = oauthSite();
  if (!site) return notConfigured();
  return Response.json(authorizationServerMetadata(site), {
    headers: { 'cache-control': 'public, max-age=300', ...corsHeaders() },
  });
}
