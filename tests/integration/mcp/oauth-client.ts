// Helpers for the MCP authorization tests: an in-memory OAuthClientProvider for the official MCP
// client, the browser's part of the flow over real HTTP (the authorization endpoint, then the
// consent decision as the consent page's form posts it), a real sign-in through next-auth, and a
// local plain-http server for client metadata documents.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';

/** An OAuth client's state kept in memory, as a desktop MCP client keeps it on disk. */
export class MemoryProvider implements OAuthClientProvider {
  info: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  /** Where the client sent the user's browser (set by redirectToAuthorization). */
  authorizationUrl: URL | null = null;
  readonly stateValue = `state-${Math.random().toString(36).slice(2)}`;

  constructor(
    readonly redirectUrl: string,
    readonly clientMetadata: OAuthClientMetadata,
    preRegistered?: OAuthClientInformationMixed,
  ) {
    this.info = preRegistered;
  }
  state(): string {
    return this.stateValue;
  }
  clientInformation() {
    return this.info;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.info = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery') {
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'client') this.info = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = '';
  }
}

/** Client metadata of a native (loopback) client, as DCR sends it. */
export function nativeClientMetadata(redirectUrl: string, name = 'Test MCP client'): OAuthClientMetadata {
  return {
    client_name: name,
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** Signs in with email and password through next-auth's credentials flow; the session cookie. */
export async function signIn(baseUrl: string, email: string, password: string): Promise<string> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const csrfCookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie, origin: baseUrl },
    body: new URLSearchParams({ csrfToken, email, password, json: 'true', callbackUrl: `${baseUrl}/projects` }),
  });
  const session = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith('next-auth.session-token='));
  if (!session) throw new Error(`sign-in failed: HTTP ${res.status}`);
  return session;
}

export interface Decision {
  decision?: 'allow' | 'deny';
  projectId?: string;
  access?: 'read-only' | 'full' | 'custom';
  scopes?: string[];
}

/** The authorization endpoint's answer: the sealed request of the consent page it sends the browser to. */
export async function openAuthorization(
  url: URL | string,
): Promise<{ status: number; location: string | null; text: string; sealed: string | null }> {
  const res = await fetch(url, { redirect: 'manual' });
  const location = res.headers.get('location');
  const sealed = location ? new URL(location).searchParams.get('request') : null;
  return { status: res.status, location, text: await res.text(), sealed };
}

/** Posts the consent form as the page does (same origin, signed in). */
export async function postDecision(
  baseUrl: string,
  sealed: string,
  cookie: string | null,
  d: Decision,
  headers: Record<string, string> = { origin: baseUrl },
): Promise<Response> {
  const form = new URLSearchParams({ request: sealed, decision: d.decision ?? 'allow' });
  if (d.projectId) form.set('projectId', d.projectId);
  if (d.access) form.set('access', d.access);
  for (const s of d.scopes ?? []) form.append('scope', s);
  return fetch(`${baseUrl}/oauth/consent/decision`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...(cookie ? { cookie } : {}), ...headers },
    body: form,
  });
}

/** Where the hand-over page sends the browser (its Refresh header; the meta tag says the same). */
export async function handOverTarget(res: Response): Promise<URL> {
  const text = await res.text();
  const header = res.headers.get('refresh');
  const meta = /<meta http-equiv="refresh" content="0; url='([^']+)'">/.exec(text)?.[1]?.replace(/&#38;/g, '&');
  if (res.status !== 200 || !header || !meta) throw new Error(`no hand-over: HTTP ${res.status} ${text.slice(0, 300)}`);
  const fromHeader = header.replace(/^0; url=/, '');
  if (fromHeader !== meta) throw new Error(`the Refresh header and the meta tag differ: ${fromHeader} / ${meta}`);
  return new URL(fromHeader);
}

/** The whole browser part: authorization endpoint, consent decision, and the redirect it hands over. */
export async function consent(baseUrl: string, url: URL | string, cookie: string, d: Decision): Promise<URL> {
  const opened = await openAuthorization(url);
  if (opened.status !== 303 || !opened.sealed)
    throw new Error(`authorize: HTTP ${opened.status} ${opened.location ?? opened.text.slice(0, 300)}`);
  return handOverTarget(await postDecision(baseUrl, opened.sealed, cookie, d));
}

/** A local plain-http server for client metadata documents; `documents` maps a path to its JSON. */
export async function startDocumentServer(): Promise<{
  origin: string;
  documents: Map<string, unknown>;
  requests: string[];
  close(): Promise<void>;
}> {
  const documents = new Map<string, unknown>();
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    const doc = documents.get(req.url ?? '');
    if (doc === undefined) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=600' }).end(JSON.stringify(doc));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    documents,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A token request, form-encoded, as a client posts it. */
export async function tokenRequest(
  baseUrl: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
) {
  const res = await fetch(`${baseUrl}/api/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as Record<string, unknown> };
}
