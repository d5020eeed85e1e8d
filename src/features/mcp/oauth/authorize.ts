/**
 * The authorization endpoint (GET /oauth/authorize), the consent page's data and the consent
 * decision (POST /oauth/consent/decision).
 *
 * The endpoint checks the request in the order RFC 6749 §4.1.2.1 asks: the client and the redirect
 * URI first (a failure is shown to the user, never sent to an unchecked URI), then everything else
 * (a failure goes back to the client's redirect URI with `error`, `state` and `iss`). A sound
 * request is sealed (pending.ts) and the browser goes to the consent page, through the login page
 * when nobody is signed in.
 *
 * The decision must come from the product's own origin (a form on another site cannot submit it),
 * from the signed-in user, for a project they are a member of, with scopes their role there holds:
 * presets "Read-only" and "Full" (every key scope the role holds) or scopes ticked one by one.
 */
import 'server-only';
import type { McpOAuthClient, PrismaClient } from '@/generated/prisma/client';
import { getSessionUser, type SessionUser } from '@/server/auth';
import { getPrisma } from '@/server/db';
import { readBodyCapped } from '@/server/request-body';
import type { Role, Scope } from '@/server/rbac';
import { KEY_SCOPES, READ_ONLY_KEY_SCOPES } from '../key-scopes';
import { listProjectsForUser } from '@/features/tracker/services/projects';
import { getMemberRole } from '@/server/access';
import { isIdentifier } from '@/server/text';
import { findClient, resolveClient } from './clients';
import { CONSENT_PATH, oauthSite, type OAuthSite } from './config';
import { errorPage, handOverPage } from './html';
import { MAX_OAUTH_BODY_BYTES } from './http';
import { openPending, sealPending, MAX_STATE_CHARS, type PendingAuthorization } from './pending';
import { isS256Challenge } from './pkce';
import { redirectHost, redirectUriMatches } from './redirect-uri';
import { MAX_SCOPE_PARAM_CHARS, parseScopeParam, roleKeyScopes } from './scopes';
import { issueCode } from './tokens';

const AUTHORIZE_PARAMS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'code_challenge',
  'code_challenge_method',
  'scope',
  'state',
  'resource',
] as const;

function notConfigured(): Response {
  return errorPage(503, 'Sign-in for apps is not available', 'The server has no public URL configured (NEXTAUTH_URL).');
}

/** The client's redirect URI with the response parameters, `iss` always (RFC 9207). */
function clientRedirect(site: OAuthSite, redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.set(name, value);
  url.searchParams.set('iss', site.issuer);
  return url.href;
}

/** GET /oauth/authorize. Never throws for bad input. */
export async function handleAuthorize(req: Request, opts: { prisma?: PrismaClient } = {}): Promise<Response> {
  const site = oauthSite();
  if (!site) return notConfigured();
  const query = new URL(req.url).searchParams;
  for (const name of AUTHORIZE_PARAMS) {
    if (query.getAll(name).length > 1)
      return errorPage(400, 'Invalid authorization request', `The parameter ${name} is given more than once.`);
  }
  const clientId = query.get('client_id');
  if (!clientId) return errorPage(400, 'Invalid authorization request', 'The request names no client (client_id).');
  const prisma = opts.prisma ?? (await getPrisma());
  const found = await resolveClient(prisma, clientId);
  if (!found.ok) return errorPage(400, 'This app cannot sign in', found.description);
  const client = found.client;
  const redirectUri = query.get('redirect_uri');
  if (!redirectUri)
    return errorPage(400, 'Invalid authorization request', 'The request names no redirect URI (redirect_uri).');
  if (!redirectUriMatches(client.redirectUris, redirectUri))
    return errorPage(400, 'This app cannot sign in', 'The redirect URI is not one this app registered.');

  // From here on, failures go back to the app.
  const state = query.get('state');
  const back = (error: string, description: string) =>
    Response.redirect(clientRedirect(site, redirectUri, { error, error_description: description, state }), 303);
  if (state !== null && state.length > MAX_STATE_CHARS)
    return back('invalid_request', `state is longer than ${MAX_STATE_CHARS} characters.`);
  if (query.get('response_type') !== 'code')
    return back('unsupported_response_type', 'Only response_type=code is supported.');
  const challenge = query.get('code_challenge');
  if (!challenge)
    return back('invalid_request', 'PKCE is required: send code_challenge with code_challenge_method=S256.');
  if (query.get('code_challenge_method') !== 'S256')
    return back('invalid_request', 'Only code_challenge_method=S256 is supported.');
  if (!isS256Challenge(challenge)) return back('invalid_request', 'code_challenge is not a base64url SHA-256 value.');
  const resource = query.get('resource');
  if (resource !== null && resource !== site.resource)
    return back('invalid_target', `This server issues tokens only for ${site.resource}.`);
  const scope = query.get('scope') ?? '';
  if (scope.length > MAX_SCOPE_PARAM_CHARS) return back('invalid_scope', 'The scope parameter is too long.');
  const sealed = sealPending({
    clientId: client.id,
    redirectUri,
    codeChallenge: challenge,
    scopes: parseScopeParam(scope).known,
    state,
  });
  return Response.redirect(`${site.issuer}${CONSENT_PATH}?request=${encodeURIComponent(sealed)}`, 303);
}

interface ConsentProject {
  id: string;
  name: string;
  role: Role;
  /** The key scopes the role holds there: the most a grant in that project may hold. */
  scopes: Scope[];
}

interface ConsentView {
  sealed: string;
  client: {
    name: string;
    /** A metadata document client: the host its id URL is on (vouched for by that host). */
    documentHost: string | null;
    clientUri: string | null;
  };
  redirectHost: string;
  /** The known scopes the app asked for. */
  requestedScopes: Scope[];
  projects: ConsentProject[];
}

export type ConsentLoad = { ok: true; view: ConsentView } | { ok: false; title: string; message: string };

const EXPIRED = {
  ok: false as const,
  title: 'This sign-in request has expired',
  message: 'Start connecting again from the app.',
};
const INVALID = {
  ok: false as const,
  title: 'Invalid sign-in request',
  message: 'This link is not a sign-in request of this server. Start connecting again from the app.',
};

/** The pending request's client, still registered with the same redirect URI. */
async function pendingClient(prisma: PrismaClient, pending: PendingAuthorization): Promise<McpOAuthClient | null> {
  const client = await findClient(prisma, pending.clientId);
  return client && redirectUriMatches(client.redirectUris, pending.redirectUri) ? client : null;
}

/** The projects the user may grant access to, with the most their role allows in each. */
async function consentProjects(prisma: PrismaClient, userId: string): Promise<ConsentProject[]> {
  const rows = await listProjectsForUser(prisma, userId);
  return rows
    .map((p) => ({ id: p.id, name: p.name, role: p.role, scopes: roleKeyScopes(p.role) }))
    .filter((p) => p.scopes.length > 0);
}

/** What the consent page shows for a sealed request and the signed-in user. */
export async function loadConsent(prisma: PrismaClient, sealed: unknown, user: SessionUser): Promise<ConsentLoad> {
  const opened = openPending(sealed);
  if (!opened.ok) return opened.reason === 'expired' ? EXPIRED : INVALID;
  const pending = opened.pending;
  const client = await pendingClient(prisma, pending);
  if (!client) return INVALID;
  let documentHost: string | null = null;
  if (client.kind === 'METADATA_DOCUMENT') documentHost = new URL(client.id).host;
  return {
    ok: true,
    view: {
      sealed: sealed as string,
      client: { name: client.name, documentHost, clientUri: client.clientUri },
      redirectHost: redirectHost(pending.redirectUri),
      requestedScopes: pending.scopes,
      projects: await consentProjects(prisma, user.id),
    },
  };
}

/** Whether a consent decision comes from the product's own pages (see the file comment). */
function fromOwnOrigin(req: Request, site: OAuthSite): boolean {
  const origin = req.headers.get('origin');
  if (origin !== null) {
    if (origin === site.issuer) return true;
    const host = req.headers.get('host');
    try {
      return host !== null && new URL(origin).host === host && new URL(origin).origin === origin;
    } catch {
      return false;
    }
  }
  return req.headers.get('sec-fetch-site') === 'same-origin';
}

/** The access a consent form asked for, as scopes; null when it names scopes the role does not hold. */
export function chosenScopes(
  access: string | null,
  ticked: readonly string[],
  role: Role,
): { ok: true; scopes: Scope[] } | { ok: false; message: string } {
  const held = roleKeyScopes(role);
  let scopes: Scope[];
  if (access === 'read-only') scopes = READ_ONLY_KEY_SCOPES.filter((s) => held.includes(s));
  else if (access === 'full') scopes = held;
  else if (access === 'custom') {
    const { known, unknown } = parseScopeParam(ticked.join(' '));
    if (unknown.length > 0 || ticked.some((s) => s.includes(' ')))
      return { ok: false, message: `Unknown scope. Valid scopes: ${KEY_SCOPES.join(', ')}.` };
    const beyond = known.filter((s) => !held.includes(s));
    if (beyond.length > 0)
      return { ok: false, message: `Your role in this project cannot grant ${beyond.join(', ')}.` };
    scopes = known;
  } else return { ok: false, message: 'Choose the access to grant.' };
  if (scopes.length === 0) return { ok: false, message: 'Choose at least one scope.' };
  return { ok: true, scopes };
}

/** POST /oauth/consent/decision: "Allow" or "Deny" on the consent page. Never throws for bad input. */
export async function handleConsentDecision(req: Request, opts: { prisma?: PrismaClient } = {}): Promise<Response> {
  const site = oauthSite();
  if (!site) return notConfigured();
  if (!fromOwnOrigin(req, site))
    return errorPage(403, 'Request refused', 'A consent decision can only be made on this site’s own consent page.');
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const body = type === 'application/x-www-form-urlencoded' ? await readBodyCapped(req, MAX_OAUTH_BODY_BYTES) : null;
  if (!body?.ok) return errorPage(400, 'Invalid consent form', 'The consent form could not be read.');
  const form = new URLSearchParams(body.text);
  const sealed = form.get('request');
  const user = await getSessionUser(req);
  if (!user) {
    const back = `${CONSENT_PATH}?request=${encodeURIComponent(sealed ?? '')}`;
    return Response.redirect(`${site.issuer}/login?callbackUrl=${encodeURIComponent(back)}`, 303);
  }
  const opened = openPending(sealed);
  if (!opened.ok) {
    const e = opened.reason === 'expired' ? EXPIRED : INVALID;
    return errorPage(400, e.title, e.message);
  }
  const pending = opened.pending;
  const prisma = opts.prisma ?? (await getPrisma());
  const client = await pendingClient(prisma, pending);
  if (!client) return errorPage(400, INVALID.title, INVALID.message);
  const decision = form.get('decision');
  if (decision === 'deny') {
    const target = clientRedirect(site, pending.redirectUri, {
      error: 'access_denied',
      error_description: 'The user denied access.',
      state: pending.state,
    });
    return handOverPage(target, client.name);
  }
  if (decision !== 'allow') return errorPage(400, 'Invalid consent form', 'Choose Allow or Deny.');
  const projectId = form.get('projectId') ?? '';
  const role = isIdentifier(projectId) ? await getMemberRole(prisma, projectId, user.id) : null;
  if (!role)
    return errorPage(400, 'Choose one of your projects', 'You can only grant access to a project you are a member of.');
  const chosen = chosenScopes(form.get('access'), form.getAll('scope'), role);
  if (!chosen.ok) return errorPage(400, 'This access cannot be granted', chosen.message);
  const code = await issueCode(prisma, {
    clientId: client.id,
    userId: user.id,
    projectId,
    scopes: chosen.scopes,
    resource: site.resource,
    redirectUri: pending.redirectUri,
    codeChallenge: pending.codeChallenge,
  });
  return handOverPage(clientRedirect(site, pending.redirectUri, { code, state: pending.state }), client.name);
}
