/**
 * OAuth clients of the MCP endpoint: Dynamic Client Registration (RFC 7591) for clients that
 * register themselves, the lookup of a client by its id (a registered `mcpc_…` id, or a metadata
 * document URL: metadata-document.ts), and client authentication at the token and revocation
 * endpoints (public clients: `none`, PKCE only; confidential registered clients: their secret, in
 * the Basic header or the form).
 */
import 'server-only';
import { timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { McpOAuthClient, PrismaClient } from '@/generated/prisma/client';
import { newId } from '@/server/ids';
import { clientDisplayName } from './client-name';
import { OAuthError } from './errors';
import { fetchMetadataDocument, looksLikeMetadataDocumentUrl } from './metadata-document';
import { checkRedirectUri, MAX_REDIRECT_URI_CHARS } from './redirect-uri';
import { hashSecret, isSecretOf, newSecret } from './secrets';

export const TOKEN_AUTH_METHODS = ['none', 'client_secret_basic', 'client_secret_post'] as const;
type TokenAuthMethod = (typeof TOKEN_AUTH_METHODS)[number];
const GRANT_TYPES = ['authorization_code', 'refresh_token'] as const;

const REGISTERED_ID = /^mcpc_[0-9a-z]{24}$/;

/** A registration request (RFC 7591 §2); members this server does not use are ignored. */
const RegistrationRequest = z.looseObject({
  redirect_uris: z
    .array(z.string().max(MAX_REDIRECT_URI_CHARS), { error: 'redirect_uris must be a list of URIs.' })
    .min(1, 'Register at least one redirect URI.')
    .max(20, 'Register at most 20 redirect URIs.'),
  token_endpoint_auth_method: z
    .enum(TOKEN_AUTH_METHODS, { error: `token_endpoint_auth_method must be one of ${TOKEN_AUTH_METHODS.join(', ')}.` })
    .default('client_secret_basic'),
  grant_types: z
    .array(z.enum(GRANT_TYPES, { error: 'Only the authorization_code and refresh_token grant types are supported.' }))
    .min(1)
    .max(2)
    .default(['authorization_code']),
  response_types: z
    .array(z.literal('code', { error: 'Only the code response type is supported.' }))
    .min(1)
    .max(1)
    .default(['code']),
  client_name: z.string().max(500).optional(),
  client_uri: z.string().max(MAX_REDIRECT_URI_CHARS).optional(),
});

export interface RegistrationResponse {
  client_id: string;
  client_id_issued_at: number;
  client_secret?: string;
  client_secret_expires_at?: number;
  client_name: string;
  client_uri?: string;
  redirect_uris: string[];
  token_endpoint_auth_method: TokenAuthMethod;
  grant_types: string[];
  response_types: string[];
}

/** Registers a client (RFC 7591). Throws OAuthError (invalid_redirect_uri, invalid_client_metadata). */
export async function registerClient(prisma: PrismaClient, raw: unknown): Promise<RegistrationResponse> {
  const r = RegistrationRequest.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    const where = first?.path.length ? `${first.path.join('.')}: ` : '';
    const error = first?.path[0] === 'redirect_uris' ? 'invalid_redirect_uri' : 'invalid_client_metadata';
    throw new OAuthError(error, `${where}${first?.message ?? 'invalid metadata'}`.slice(0, 300));
  }
  const req = r.data;
  for (const uri of req.redirect_uris) {
    const check = checkRedirectUri(uri);
    if (!check.ok) throw new OAuthError('invalid_redirect_uri', `The redirect URI ${check.reason}.`);
  }
  const clientUri = req.client_uri && /^https:\/\//.test(req.client_uri) ? req.client_uri : undefined;
  const id = newId('mcpc_');
  const secret = req.token_endpoint_auth_method === 'none' ? null : newSecret('clientSecret');
  const name = clientDisplayName(req.client_name, req.redirect_uris[0]!);
  const redirectUris = [...new Set(req.redirect_uris)];
  const client = await prisma.mcpOAuthClient.create({
    data: {
      id,
      kind: 'REGISTERED',
      name,
      clientUri: clientUri ?? null,
      redirectUris,
      tokenEndpointAuthMethod: req.token_endpoint_auth_method,
      secretHash: secret ? hashSecret(secret) : null,
    },
  });
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt.getTime() / 1000),
    ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
    client_name: name,
    ...(clientUri ? { client_uri: clientUri } : {}),
    redirect_uris: redirectUris,
    token_endpoint_auth_method: req.token_endpoint_auth_method,
    grant_types: [...new Set(req.grant_types)],
    response_types: ['code'],
  };
}

export type ClientLookup = { ok: true; client: McpOAuthClient } | { ok: false; code: string; description: string };

/** A client by its id, as stored (no fetch). */
export function findClient(prisma: PrismaClient, clientId: string): Promise<McpOAuthClient | null> {
  return prisma.mcpOAuthClient.findUnique({ where: { id: clientId } });
}

/**
 * The client a metadata document URL names: the cached row while it is fresh, else the document
 * fetched, checked and stored (metadata-document.ts).
 */
async function metadataDocumentClient(prisma: PrismaClient, clientId: string): Promise<ClientLookup> {
  const cached = await findClient(prisma, clientId);
  if (cached?.kind === 'METADATA_DOCUMENT' && cached.metadataExpiresAt && cached.metadataExpiresAt > new Date())
    return { ok: true, client: cached };
  const doc = await fetchMetadataDocument(clientId);
  if (!doc.ok) return doc;
  const fields = {
    kind: 'METADATA_DOCUMENT' as const,
    name: doc.name,
    clientUri: doc.clientUri,
    redirectUris: doc.redirectUris,
    tokenEndpointAuthMethod: 'none',
    secretHash: null,
    metadataExpiresAt: new Date(Date.now() + doc.cacheMs),
  };
  const client = await prisma.mcpOAuthClient.upsert({
    where: { id: clientId },
    create: { id: clientId, ...fields },
    update: fields,
  });
  return { ok: true, client };
}

/**
 * The client an authorization request names: a registered client, or the client of a metadata
 * document URL (fetched when not cached). Unknown or unusable ids come back as a reason, never thrown.
 */
export async function resolveClient(prisma: PrismaClient, clientId: string): Promise<ClientLookup> {
  if (looksLikeMetadataDocumentUrl(clientId)) return metadataDocumentClient(prisma, clientId);
  const client = REGISTERED_ID.test(clientId) ? await findClient(prisma, clientId) : null;
  if (client?.kind !== 'REGISTERED')
    return { ok: false, code: 'UNKNOWN_CLIENT', description: 'This client is not registered with this server.' };
  return { ok: true, client };
}

function secretMatches(secret: string, hash: string | null): boolean {
  if (!hash || !isSecretOf('clientSecret', secret)) return false;
  return timingSafeEqual(Buffer.from(hashSecret(secret), 'hex'), Buffer.from(hash, 'hex'));
}

/** Client id and secret of an `Authorization: Basic` header (RFC 6749 §2.3.1: form-encoded parts). */
function basicCredentials(header: string | null): { id: string; secret: string } | null | 'malformed' {
  if (!header) return null;
  const m = /^Basic\s+([A-Za-z0-9+/]+={0,2})$/i.exec(header.trim());
  if (!m) return /^Basic\b/i.test(header.trim()) ? 'malformed' : null;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return 'malformed';
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    return 'malformed';
  }
}

/**
 * The client a token or revocation request comes from (RFC 6749 §2.3): known already (a metadata
 * document client was fetched when its authorization started), and authenticated the way it
 * registered. Throws OAuthError invalid_client (401) otherwise.
 */
export async function authenticateClient(
  prisma: PrismaClient,
  authorization: string | null,
  form: ReadonlyMap<string, string>,
): Promise<McpOAuthClient> {
  const basic = basicCredentials(authorization);
  const fail = (description: string) => new OAuthError('invalid_client', description, 401);
  if (basic === 'malformed') throw fail('Malformed Basic credentials.');
  const formId = form.get('client_id');
  const formSecret = form.get('client_secret');
  if (basic && formSecret !== undefined) throw fail('Send the client secret one way only.');
  if (basic && formId !== undefined && formId !== basic.id)
    throw fail('The client_id differs from the Basic credentials.');
  const clientId = basic?.id ?? formId;
  if (!clientId) throw new OAuthError('invalid_request', 'client_id is required.');
  if (clientId.length > 500) throw fail('Unknown client.');
  const client = await findClient(prisma, clientId);
  if (!client) throw fail('Unknown client.');
  const secret = basic?.secret ?? formSecret;
  if (client.tokenEndpointAuthMethod === 'none') {
    if (secret !== undefined && secret !== '') throw fail('This client is public: it has no secret.');
    return client;
  }
  if (secret === undefined || !secretMatches(secret, client.secretHash)) throw fail('Invalid client credentials.');
  return client;
}
