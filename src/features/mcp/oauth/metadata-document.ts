/**
 * Client ID Metadata Documents: a client whose `client_id` is an https URL publishes its metadata
 * (name, redirect URIs) as JSON at that very URL. The document is fetched when an authorization
 * starts and cached on the client row by clients.ts (its Cache-Control max-age, kept between 5
 * minutes and a day). The fetch is guarded like the webhook's (destination.ts): only public addresses, checked at
 * connect time; no redirects; 5 s; at most 5 KiB.
 *
 * Production accepts only https URLs on public addresses. Tests serve documents from a local
 * plain-http server: MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS=1 (refused unless NODE_ENV=test) then lets an
 * `http://` client id on a loopback address through, and nothing else that is private.
 */
import 'server-only';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { z } from 'zod';
import { env } from '@/server/env';
import { bareHost, classifyAddress, guardedLookup, isMetadataHost, isRefusedDestination } from '../destination';
import { clientDisplayName } from './client-name';
import { checkRedirectUri, MAX_REDIRECT_URI_CHARS } from './redirect-uri';

const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
const FETCH_TIMEOUT_MS = 5_000;
const CACHE_MIN_MS = 5 * 60_000;
const CACHE_MAX_MS = 24 * 3_600_000;
const CACHE_DEFAULT_MS = 3_600_000;
/** Longest client id URL accepted. */
const MAX_CLIENT_ID_URL_CHARS = 500;

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '::1']);

function isLoopbackAddress(ip: string): boolean {
  const x = ip.toLowerCase();
  return x === '::1' || /^(::ffff:)?127\.\d+\.\d+\.\d+$/.test(x);
}

/** Whether the (test-only) allowance for plain http documents on loopback addresses is on. */
function loopbackAllowed(): boolean {
  return env().MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS;
}

/** Whether `clientId` is meant as a metadata document URL (as opposed to a registered client id). */
export function looksLikeMetadataDocumentUrl(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

type DocumentResult =
  | { ok: true }
  | {
      ok: false;
      code:
        | 'CLIENT_ID_URL_INVALID'
        | 'CLIENT_ID_URL_REFUSED'
        | 'CLIENT_METADATA_INVALID'
        | 'CLIENT_METADATA_UNAVAILABLE';
      description: string;
    };

/** The URL a client id names, when it is an acceptable metadata document URL. */
export function checkClientIdUrl(clientId: string): { ok: true; url: URL } | Extract<DocumentResult, { ok: false }> {
  const invalid = (why: string) => ({
    ok: false as const,
    code: 'CLIENT_ID_URL_INVALID' as const,
    description: `The client_id URL ${why}.`,
  });
  if (clientId.length > MAX_CLIENT_ID_URL_CHARS) return invalid(`is longer than ${MAX_CLIENT_ID_URL_CHARS} characters`);
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return invalid('is not a URL');
  }
  // The id is compared as a string everywhere: it must already be in its normal form.
  if (url.href !== clientId) return invalid('is not in normal form');
  if (url.hash || clientId.includes('#')) return invalid('must not contain a fragment');
  if (url.username || url.password) return invalid('must not contain user information');
  if (url.pathname === '/' || url.pathname === '') return invalid('must have a path');
  if (/(^|\/)\.\.?(\/|$)/.test(clientId.slice(url.origin.length))) return invalid('must not contain dot segments');
  const host = bareHost(url.hostname);
  const refused = {
    ok: false as const,
    code: 'CLIENT_ID_URL_REFUSED' as const,
    description: 'The client_id URL points to an address the product does not fetch from (use a public https URL).',
  };
  if (url.protocol === 'http:') {
    if (!(loopbackAllowed() && LOOPBACK_NAMES.has(host))) return invalid('must use https');
  } else if (url.protocol !== 'https:') return invalid('must use https');
  if (isMetadataHost(host)) return refused;
  if (net.isIP(host) && !addressAllowed(host)) return refused;
  return { ok: true, url };
}

function addressAllowed(ip: string): boolean {
  if (classifyAddress(ip) === 'public') return true;
  return loopbackAllowed() && isLoopbackAddress(ip);
}

/** What a document must say (RFC 7591 names); other members are ignored. */
const MetadataDocumentSchema = z.looseObject({
  client_id: z.string(),
  client_name: z.string().max(500).optional(),
  client_uri: z.string().max(MAX_REDIRECT_URI_CHARS).optional(),
  redirect_uris: z.array(z.string().max(MAX_REDIRECT_URI_CHARS)).min(1).max(20),
  token_endpoint_auth_method: z.string().max(100).optional(),
  grant_types: z.array(z.string().max(100)).max(10).optional(),
  response_types: z.array(z.string().max(100)).max(10).optional(),
});

/** Checks a fetched document against its URL; the fields the client row keeps, or why not. */
export function validateMetadataDocument(
  clientId: string,
  raw: unknown,
): { ok: true; name: string; clientUri: string | null; redirectUris: string[] } | { ok: false; description: string } {
  const r = MetadataDocumentSchema.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    return {
      ok: false,
      description: `The client metadata document is invalid (${first?.path.join('.') || 'document'}: ${first?.message ?? 'invalid'}).`,
    };
  }
  const doc = r.data;
  if (doc.client_id !== clientId)
    return { ok: false, description: 'The client metadata document names another client_id than its URL.' };
  if ('client_secret' in doc || 'client_secret_expires_at' in doc)
    return { ok: false, description: 'A client metadata document must not carry a client secret.' };
  if (doc.token_endpoint_auth_method !== undefined && doc.token_endpoint_auth_method !== 'none')
    return {
      ok: false,
      description: 'Only token_endpoint_auth_method "none" is supported for metadata document clients.',
    };
  if (doc.grant_types?.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))
    return { ok: false, description: 'Only the authorization_code and refresh_token grant types are supported.' };
  if (doc.response_types?.some((t) => t !== 'code'))
    return { ok: false, description: 'Only the code response type is supported.' };
  for (const uri of doc.redirect_uris) {
    const check = checkRedirectUri(uri);
    if (!check.ok) return { ok: false, description: `A redirect URI of the document ${check.reason}.` };
  }
  const clientUri = doc.client_uri && /^https:\/\//.test(doc.client_uri) ? doc.client_uri : null;
  return {
    ok: true,
    name: clientDisplayName(doc.client_name, clientId),
    clientUri,
    redirectUris: [...new Set(doc.redirect_uris)],
  };
}

function cacheLifetime(cacheControl: string | undefined): number {
  const m = /(?:^|,)\s*max-age\s*=\s*(\d{1,10})\s*(?:,|$)/i.exec(cacheControl ?? '');
  const ms = m ? Number(m[1]) * 1000 : CACHE_DEFAULT_MS;
  return Math.min(CACHE_MAX_MS, Math.max(CACHE_MIN_MS, ms));
}

const REFUSED_MESSAGE = 'The client metadata document is on an address the product does not fetch from.';

interface Fetched {
  status: number;
  cacheControl: string | undefined;
  contentType: string;
  body: string;
  tooLarge: boolean;
}

/** One GET without redirects, reading at most METADATA_DOCUMENT_MAX_BYTES. */
function get(url: URL): Promise<Fetched> {
  const lookup = guardedLookup(addressAllowed, REFUSED_MESSAGE);
  return new Promise<Fetched>((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'tracker-oauth/1.0' },
      agent: false,
      lookup,
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let tooLarge = false;
      const done = () =>
        resolve({
          status: res.statusCode ?? 0,
          cacheControl: res.headers['cache-control'],
          contentType: String(res.headers['content-type'] ?? ''),
          body: Buffer.concat(chunks).toString('utf8'),
          tooLarge,
        });
      res.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > METADATA_DOCUMENT_MAX_BYTES) {
          tooLarge = true;
          res.destroy();
          done();
          return;
        }
        chunks.push(chunk);
      });
      res.on('end', done);
      res.on('error', reject);
    });
    req.end();
  });
}

export type FetchedDocument =
  | { ok: true; name: string; clientUri: string | null; redirectUris: string[]; cacheMs: number }
  | Extract<DocumentResult, { ok: false }>;

/**
 * Fetches and checks the document a client id URL names (the caller caches it for `cacheMs`).
 * Never throws for what the document or its server does wrong.
 */
export async function fetchMetadataDocument(clientId: string): Promise<FetchedDocument> {
  const checked = checkClientIdUrl(clientId);
  if (!checked.ok) return checked;
  let fetched: Fetched;
  try {
    fetched = await get(checked.url);
  } catch (err) {
    if (isRefusedDestination(err)) return { ok: false, code: 'CLIENT_ID_URL_REFUSED', description: REFUSED_MESSAGE };
    return {
      ok: false,
      code: 'CLIENT_METADATA_UNAVAILABLE',
      description: 'The client metadata document could not be fetched.',
    };
  }
  if (fetched.status !== 200)
    return {
      ok: false,
      code: 'CLIENT_METADATA_UNAVAILABLE',
      description: `The client metadata document answered HTTP ${fetched.status}.`,
    };
  if (fetched.tooLarge)
    return {
      ok: false,
      code: 'CLIENT_METADATA_INVALID',
      description: `The client metadata document is larger than ${METADATA_DOCUMENT_MAX_BYTES} bytes.`,
    };
  let json: unknown;
  try {
    json = JSON.parse(fetched.body);
  } catch {
    return { ok: false, code: 'CLIENT_METADATA_INVALID', description: 'The client metadata document is not JSON.' };
  }
  const doc = validateMetadataDocument(clientId, json);
  if (!doc.ok) return { ok: false, code: 'CLIENT_METADATA_INVALID', description: doc.description };
  return { ...doc, cacheMs: cacheLifetime(fetched.cacheControl) };
}
