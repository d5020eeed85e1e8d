// What the MCP authorization server and the protected MCP endpoint refuse, over real HTTP, with
// the error codes of the RFCs: wrong audience, wrong or unregistered redirect URIs, missing or
// `plain` PKCE, a wrong verifier, a reused code (which revokes what it issued), scopes beyond the
// role (at consent, at the token and at refresh), a demoted or removed user, a consent decision
// posted from another origin, client metadata documents that name another client_id or sit on a
// private host, replayed refresh tokens after the grace, client authentication, and the token and
// registration endpoints' malformed requests.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { s256 } from '@/features/mcp/oauth/pkce';
import { getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { rawPost } from './mcp-client';
import {
  consent,
  handOverTarget,
  openAuthorization,
  postDecision,
  startDocumentServer,
  tokenRequest,
} from './oauth-client';

let server: TestServer;
let docs: Awaited<ReturnType<typeof startDocumentServer>>;
let project: TestProject;
const REDIRECT = 'http://127.0.0.1/callback';
const VERIFIER = `${'v'.repeat(20)}erifier-0123456789-abcdefghij`;

beforeAll(async () => {
  server = await startTestServer();
  docs = await startDocumentServer();
  project = await createProject('OAuth refusals');
});
beforeEach(() => {
  process.env.NEXTAUTH_URL = server.url;
  process.env.MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS = '1';
  // This file registers many clients; the limit itself is tested on its own below.
  process.env.MCP_OAUTH_REGISTRATIONS_PER_MINUTE = '10000';
  resetEnvCache();
});
afterAll(async () => {
  delete process.env.NEXTAUTH_URL;
  delete process.env.MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS;
  delete process.env.MCP_OAUTH_REGISTRATIONS_PER_MINUTE;
  delete process.env.TRUST_PROXY;
  resetEnvCache();
  await docs?.close();
  await server?.close();
});

async function register(body: Record<string, unknown>) {
  const res = await fetch(`${server.url}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

async function publicClient(redirects: string[] = [REDIRECT]): Promise<string> {
  const r = await register({
    client_name: 'Refusal client',
    redirect_uris: redirects,
    token_endpoint_auth_method: 'none',
  });
  expect(r.status).toBe(201);
  return r.json.client_id as string;
}

function authorizeUrl(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  const all: Record<string, string | undefined> = {
    response_type: 'code',
    redirect_uri: REDIRECT,
    code_challenge: s256(VERIFIER),
    code_challenge_method: 'S256',
    state: 'st-1',
    resource: `${server.url}/api/public/mcp`,
    ...params,
  };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) q.set(k, v);
  return `${server.url}/oauth/authorize?${q}`;
}

/** A code for `clientId` granted by the user of `role` (default OWNER) with `access`. */
async function codeFor(
  clientId: string,
  opts: {
    role?: keyof TestProject['users'];
    access?: 'read-only' | 'full' | 'custom';
    scopes?: string[];
    redirect?: string;
  } = {},
): Promise<string> {
  const user = project.users[opts.role ?? 'OWNER'];
  const callback = await consent(
    server.url,
    authorizeUrl({ client_id: clientId, redirect_uri: opts.redirect ?? REDIRECT }),
    user.cookie,
    {
      projectId: project.id,
      access: opts.access ?? 'full',
      ...(opts.scopes ? { scopes: opts.scopes } : {}),
    },
  );
  return callback.searchParams.get('code')!;
}

async function exchange(clientId: string, code: string, extra: Record<string, string> = {}) {
  return tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: VERIFIER,
    client_id: clientId,
    ...extra,
  });
}

async function mcp(token: string, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) {
  return rawPost(server.url, JSON.stringify(body), { authorization: `Bearer ${token}` });
}

const toolNames = (res: Awaited<ReturnType<typeof mcp>>) =>
  ((res.json.result as { tools: Array<{ name: string }> }).tools ?? []).map((t) => t.name);

describe('the authorization endpoint', () => {
  it('shows (never redirects) an unknown client, a missing or unregistered redirect URI', async () => {
    const clientId = await publicClient();
    for (const url of [
      authorizeUrl({ client_id: 'mcpc_nosuchclient0000000000000' }),
      authorizeUrl({ client_id: clientId, redirect_uri: 'http://127.0.0.1/other' }),
      authorizeUrl({ client_id: clientId, redirect_uri: 'http://localhost/callback' }),
      authorizeUrl({ client_id: clientId, redirect_uri: 'https://evil.example/callback' }),
      authorizeUrl({ client_id: clientId, redirect_uri: undefined }),
      `${authorizeUrl({ client_id: clientId })}&redirect_uri=${encodeURIComponent(REDIRECT)}`,
    ]) {
      const r = await openAuthorization(url);
      expect([url, r.status, r.location]).toEqual([url, 400, null]);
      expect(r.text).toContain('<h1>');
    }
    // A loopback redirect on another port is the same registration (RFC 8252 §7.3).
    const other = await openAuthorization(
      authorizeUrl({ client_id: clientId, redirect_uri: 'http://127.0.0.1:61234/callback' }),
    );
    expect(other.status).toBe(303);
  });

  it.each([
    ['no PKCE', { code_challenge: undefined, code_challenge_method: undefined }, 'invalid_request'],
    ['plain PKCE', { code_challenge: VERIFIER, code_challenge_method: 'plain' }, 'invalid_request'],
    ['a challenge without method', { code_challenge_method: undefined }, 'invalid_request'],
    ['another response type', { response_type: 'token' }, 'unsupported_response_type'],
    ['another resource (audience)', { resource: 'https://other.example/mcp' }, 'invalid_target'],
  ])('sends %s back to the client with error, state and iss', async (_label, params, error) => {
    const clientId = await publicClient();
    const r = await openAuthorization(authorizeUrl({ client_id: clientId, ...params }));
    expect(r.status).toBe(303);
    const back = new URL(r.location!);
    expect(back.origin + back.pathname).toBe(REDIRECT);
    expect(back.searchParams.get('error')).toBe(error);
    expect(back.searchParams.get('state')).toBe('st-1');
    expect(back.searchParams.get('iss')).toBe(server.url);
    expect(back.searchParams.get('code')).toBeNull();
  });
});

describe('the consent decision', () => {
  it('refuses a decision posted from another origin (or with no origin at all), and issues no code', async () => {
    const prisma = await getPrisma();
    const clientId = await publicClient();
    const { sealed } = await openAuthorization(authorizeUrl({ client_id: clientId }));
    const before = await prisma.mcpOAuthCode.count({ where: { clientId } });
    const owner = project.users.OWNER.cookie;
    const variants: Array<Record<string, string>> = [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      {},
    ];
    for (const headers of variants) {
      const res = await postDecision(server.url, sealed!, owner, { projectId: project.id, access: 'full' }, headers);
      expect([JSON.stringify(headers), res.status]).toEqual([JSON.stringify(headers), 403]);
      expect(res.headers.get('refresh')).toBeNull();
    }
    expect(await prisma.mcpOAuthCode.count({ where: { clientId } })).toBe(before);
    // The same form from the site itself works.
    const ok = await postDecision(server.url, sealed!, owner, { projectId: project.id, access: 'full' });
    expect((await handOverTarget(ok)).searchParams.get('code')).toMatch(/^mcp_ac_/);
  });

  it('sends a signed-out user to the login page and back; refuses tampered and foreign projects', async () => {
    const clientId = await publicClient();
    const { sealed } = await openAuthorization(authorizeUrl({ client_id: clientId }));
    const signedOut = await postDecision(server.url, sealed!, null, { projectId: project.id, access: 'full' });
    expect(signedOut.status).toBe(303);
    const login = new URL(signedOut.headers.get('location')!);
    expect(login.pathname).toBe('/login');
    expect(login.searchParams.get('callbackUrl')).toBe(`/oauth/consent?request=${encodeURIComponent(sealed!)}`);

    // One character changed inside the sealed request (not its last, whose spare bits may not count).
    const at = Math.floor(sealed!.length / 2);
    const flipped = `${sealed!.slice(0, at)}${sealed![at] === 'A' ? 'B' : 'A'}${sealed!.slice(at + 1)}`;
    const tampered = await postDecision(server.url, flipped, project.users.OWNER.cookie, {
      projectId: project.id,
      access: 'full',
    });
    expect(tampered.status).toBe(400);
    const elsewhere = await createProject('Not yours');
    const foreign = await postDecision(server.url, sealed!, project.users.OWNER.cookie, {
      projectId: elsewhere.id,
      access: 'read-only',
    });
    expect(foreign.status).toBe(400);
    expect(await foreign.text()).toContain('member of');
  });

  it('refuses scopes beyond the role (a MEMBER cannot grant issues:delete), and "Deny" answers access_denied', async () => {
    const prisma = await getPrisma();
    const clientId = await publicClient();
    const { sealed } = await openAuthorization(authorizeUrl({ client_id: clientId }));
    const member = project.users.MEMBER.cookie;
    const beyond = await postDecision(server.url, sealed!, member, {
      projectId: project.id,
      access: 'custom',
      scopes: ['issues:read', 'issues:delete'],
    });
    expect(beyond.status).toBe(400);
    expect(await beyond.text()).toContain('cannot grant issues:delete');
    expect(await prisma.mcpOAuthCode.count({ where: { clientId } })).toBe(0);

    const denied = await handOverTarget(await postDecision(server.url, sealed!, member, { decision: 'deny' }));
    expect(Object.fromEntries(denied.searchParams)).toMatchObject({
      error: 'access_denied',
      state: 'st-1',
      iss: server.url,
    });
    expect(denied.searchParams.get('code')).toBeNull();
  });
});

describe('the token endpoint', () => {
  it('exchanges a code once; a reused code is refused and revokes what it issued', async () => {
    const clientId = await publicClient();
    const code = await codeFor(clientId);
    const first = await exchange(clientId, code);
    expect(first.status).toBe(200);
    expect(first.headers.get('cache-control')).toBe('no-store');
    const access = first.json.access_token as string;
    expect((await mcp(access)).status).toBe(200);

    const second = await exchange(clientId, code);
    expect(second).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    const after = await mcp(access);
    expect(after.status).toBe(401);
    expect(after.json.error?.data?.code).toBe('TOKEN_REVOKED');
    const refresh = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      refresh_token: first.json.refresh_token as string,
      client_id: clientId,
    });
    expect(refresh).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
  });

  it.each([
    ['a wrong verifier', { code_verifier: `${VERIFIER}x` }, 400, 'invalid_grant'],
    ['no verifier', { code_verifier: '' }, 400, 'invalid_request'],
    ['the plain challenge as verifier', { code_verifier: s256(VERIFIER) }, 400, 'invalid_grant'],
    ['another redirect URI', { redirect_uri: 'http://127.0.0.1:9/callback' }, 400, 'invalid_grant'],
    ['another resource', { resource: 'https://other.example/mcp' }, 400, 'invalid_target'],
    ['a scope beyond the grant', { scope: 'issues:read issues:delete' }, 400, 'invalid_scope'],
    ['another client', { client_id: 'mcpc_nosuchclient0000000000000' }, 401, 'invalid_client'],
  ])('refuses %s (and the code is used up)', async (_label, extra, status, error) => {
    const clientId = await publicClient();
    const code = await codeFor(clientId, { access: 'read-only' });
    const r = await exchange(clientId, code, extra);
    expect(r).toMatchObject({ status, json: { error } });
    expect(typeof r.json.error_description).toBe('string');
    if (status === 400 && error !== 'invalid_request') {
      // Burnt: the right request no longer works either.
      expect((await exchange(clientId, code)).json.error).toBe('invalid_grant');
    }
  });

  it('refuses an expired code', async () => {
    const prisma = await getPrisma();
    const clientId = await publicClient();
    const code = await codeFor(clientId);
    await prisma.mcpOAuthCode.updateMany({ where: { clientId }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await exchange(clientId, code)).json.error).toBe('invalid_grant');
  });

  it('narrows the scope to the role when the user was demoted between consent and token, and refuses when none is left', async () => {
    const prisma = await getPrisma();
    const p = await createProject('Demoted before token');
    const clientId = await publicClient();
    const callback = await consent(server.url, authorizeUrl({ client_id: clientId }), p.users.MEMBER.cookie, {
      projectId: p.id,
      access: 'full',
    });
    const code = callback.searchParams.get('code')!;
    await prisma.projectMembership.update({
      where: { projectId_userId: { projectId: p.id, userId: p.users.MEMBER.id } },
      data: { role: 'VIEWER' },
    });
    const r = await exchange(clientId, code);
    expect(r.status).toBe(200);
    expect(r.json.scope).toBe('project:read issues:read members:read');

    const writeOnly = await consent(server.url, authorizeUrl({ client_id: clientId }), p.users.OWNER.cookie, {
      projectId: p.id,
      access: 'custom',
      scopes: ['issues:write'],
    });
    await prisma.projectMembership.update({
      where: { projectId_userId: { projectId: p.id, userId: p.users.OWNER.id } },
      data: { role: 'VIEWER' },
    });
    expect((await exchange(clientId, writeOnly.searchParams.get('code')!)).json.error).toBe('invalid_scope');
  });

  it('refresh: a narrower scope is fine, a wider one is invalid_scope, another resource invalid_target', async () => {
    const clientId = await publicClient();
    const tokens = (await exchange(clientId, await codeFor(clientId, { access: 'read-only' }))).json;
    const refresh = (rt: string, extra: Record<string, string> = {}) =>
      tokenRequest(server.url, { grant_type: 'refresh_token', refresh_token: rt, client_id: clientId, ...extra });
    expect((await refresh(tokens.refresh_token as string, { scope: 'issues:write' })).json.error).toBe('invalid_scope');
    expect((await refresh(tokens.refresh_token as string, { resource: 'https://other.example/mcp' })).json.error).toBe(
      'invalid_target',
    );
    const narrow = await refresh(tokens.refresh_token as string, { scope: 'issues:read' });
    expect(narrow).toMatchObject({ status: 200, json: { scope: 'issues:read' } });
    expect(toolNames(await mcp(narrow.json.access_token as string))).not.toContain('list_members');
  });

  it('a refresh token replayed after the grace revokes the whole grant', async () => {
    const prisma = await getPrisma();
    const clientId = await publicClient();
    const tokens = (await exchange(clientId, await codeFor(clientId))).json;
    const rotated = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: clientId,
    });
    expect(rotated.status).toBe(200);
    // The grace has passed (the rotation is moved back in time rather than waited for).
    await prisma.mcpOAuthToken.updateMany({
      where: { rotatedAt: { not: null }, grant: { clientId } },
      data: { rotatedAt: new Date(Date.now() - 60_000) },
    });
    const replay = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: clientId,
    });
    expect(replay.json.error).toBe('invalid_grant');
    expect((await mcp(rotated.json.access_token as string)).status).toBe(401);
    const grant = await prisma.mcpOAuthGrant.findFirstOrThrow({ where: { clientId } });
    expect(grant.revokedAt).not.toBeNull();
  });

  it('answers malformed requests with the RFC error codes, never a 500', async () => {
    const clientId = await publicClient();
    expect((await tokenRequest(server.url, { client_id: clientId })).json.error).toBe('invalid_request');
    expect((await tokenRequest(server.url, { grant_type: 'password', client_id: clientId })).json.error).toBe(
      'unsupported_grant_type',
    );
    expect((await tokenRequest(server.url, { grant_type: 'authorization_code', client_id: clientId })).json.error).toBe(
      'invalid_request',
    );
    const json = await fetch(`${server.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code' }),
    });
    expect(json.status).toBe(400);
    const twice = await fetch(`${server.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=refresh_token&grant_type=authorization_code&client_id=${clientId}`,
    });
    expect(((await twice.json()) as { error: string }).error).toBe('invalid_request');
    const garbage = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      refresh_token: '\u0000not-a-token',
      client_id: clientId,
    });
    expect(garbage.json.error).toBe('invalid_grant');
  });

  it('authenticates confidential clients by their secret (Basic or form), refusing a wrong one with 401', async () => {
    const reg = await register({ client_name: 'Confidential', redirect_uris: [REDIRECT] });
    expect(reg.status).toBe(201);
    expect(reg.json.token_endpoint_auth_method).toBe('client_secret_basic');
    const id = reg.json.client_id as string;
    const secret = reg.json.client_secret as string;
    expect(secret).toMatch(/^mcp_cs_/);
    const basic = (s: string) => `Basic ${Buffer.from(`${id}:${s}`).toString('base64')}`;
    const code = await codeFor(id);
    const params = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: VERIFIER };
    const wrong = await tokenRequest(server.url, params, { authorization: basic(`${secret}x`) });
    expect(wrong.status).toBe(401);
    expect(wrong.json.error).toBe('invalid_client');
    expect(wrong.headers.get('www-authenticate')).toContain('Basic');
    const none = await tokenRequest(server.url, { ...params, client_id: id });
    expect(none.json.error).toBe('invalid_client');
    // A request whose client is not authenticated does not reach the code: it is still usable.
    const ok = await tokenRequest(server.url, params, { authorization: basic(secret) });
    expect(ok.status).toBe(200);
    const fresh = await tokenRequest(server.url, {
      ...params,
      code: await codeFor(id),
      client_id: id,
      client_secret: secret,
    });
    expect(fresh.status).toBe(200);
  });
});

describe('revocation', () => {
  it('accepts unknown tokens (RFC 7009 §2.2), refuses another client’s token, revokes an access token alone', async () => {
    const a = await publicClient();
    const b = await publicClient();
    const tokens = (await exchange(a, await codeFor(a))).json;
    const revoke = (clientId: string, token: string) =>
      fetch(`${server.url}/api/oauth/revoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token, client_id: clientId }),
      });
    expect((await revoke(a, 'no-such-token')).status).toBe(200);
    const foreign = await revoke(b, tokens.access_token as string);
    expect(foreign.status).toBe(400);
    expect((await mcp(tokens.access_token as string)).status).toBe(200);
    expect((await revoke(a, tokens.access_token as string)).status).toBe(200);
    expect((await mcp(tokens.access_token as string)).status).toBe(401);
    // The refresh token still works: revoking an access token ends only that token.
    const refreshed = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      refresh_token: tokens.refresh_token as string,
      client_id: a,
    });
    expect(refreshed.status).toBe(200);
  });
});

describe('the MCP endpoint with an access token', () => {
  it('follows a demotion and a removal at once: fewer tools, 403 insufficient_scope, audited with the client', async () => {
    const prisma = await getPrisma();
    const p = await createProject('Demoted later');
    const clientId = await publicClient();
    const code = (
      await consent(server.url, authorizeUrl({ client_id: clientId }), p.users.ADMIN.cookie, {
        projectId: p.id,
        access: 'full',
      })
    ).searchParams.get('code')!;
    const access = (await exchange(clientId, code)).json.access_token as string;
    expect(toolNames(await mcp(access))).toContain('delete_issue');

    const where = { projectId_userId: { projectId: p.id, userId: p.users.ADMIN.id } };
    await prisma.projectMembership.update({ where, data: { role: 'VIEWER' } });
    const listed = toolNames(await mcp(access));
    expect(listed).toContain('list_issues');
    expect(listed).not.toContain('create_issue');
    const call = await mcp(access, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'create_issue', arguments: { title: 'Should not exist' } },
    });
    expect(call.status).toBe(403);
    expect(call.json.error?.data?.code).toBe('MISSING_SCOPE');
    const challenge = call.headers.get('www-authenticate') ?? '';
    expect(challenge).toContain('error="insufficient_scope"');
    expect(challenge).toContain('scope="project:read issues:read issues:write members:read"');
    expect(challenge).toContain(
      `resource_metadata="${server.url}/.well-known/oauth-protected-resource/api/public/mcp"`,
    );
    expect(await prisma.issue.count({ where: { projectId: p.id, title: 'Should not exist' } })).toBe(0);
    expect(
      await prisma.toolCallAudit.findFirstOrThrow({ where: { projectId: p.id, tool: 'create_issue' } }),
    ).toMatchObject({
      status: 'DENIED',
      errorCode: 'MISSING_SCOPE',
      oauthClientId: clientId,
      userId: p.users.ADMIN.id,
    });

    await prisma.projectMembership.delete({ where });
    expect(toolNames(await mcp(access))).toEqual([]);
    const read = await mcp(access, {
      jsonrpc: '2.0',
      id: 8,
      method: 'tools/call',
      params: { name: 'list_issues', arguments: {} },
    });
    expect(read.status).toBe(403);
  });

  it('refuses a token issued for another resource (the public URL changed)', async () => {
    const clientId = await publicClient();
    const access = (await exchange(clientId, await codeFor(clientId))).json.access_token as string;
    expect((await mcp(access)).status).toBe(200);
    process.env.NEXTAUTH_URL = 'https://tracker.example';
    resetEnvCache();
    const r = await mcp(access);
    expect(r.status).toBe(401);
    expect(r.json.error?.data?.code).toBe('WRONG_AUDIENCE');
    expect(r.headers.get('www-authenticate')).toContain(
      'resource_metadata="https://tracker.example/.well-known/oauth-protected-resource/api/public/mcp"',
    );
  });

  it('refuses expired and malformed tokens with 401 invalid_token', async () => {
    const prisma = await getPrisma();
    const clientId = await publicClient();
    const access = (await exchange(clientId, await codeFor(clientId))).json.access_token as string;
    await prisma.mcpOAuthToken.updateMany({
      where: { kind: 'ACCESS', grant: { clientId } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await mcp(access)).json.error?.data?.code).toBe('TOKEN_EXPIRED');
    for (const token of [`mcp_at_${'x'.repeat(43)}`, 'mcp_at_short', `mcp_at_${'a'.repeat(42)}!`]) {
      const r = await mcp(token);
      expect([token, r.status, r.json.error?.data?.code]).toEqual([token, 401, 'INVALID_TOKEN']);
    }
  });
});

describe('client registration', () => {
  it('refuses unsafe redirect URIs and unsupported metadata with the RFC 7591 codes', async () => {
    for (const [body, error] of [
      [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri'],
      [{ redirect_uris: [] }, 'invalid_redirect_uri'],
      [{}, 'invalid_redirect_uri'],
      [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'private_key_jwt' }, 'invalid_client_metadata'],
      [{ redirect_uris: [REDIRECT], response_types: ['token'] }, 'invalid_client_metadata'],
    ] as const) {
      const r = await register(body);
      expect([JSON.stringify(body), r.status, r.json.error]).toEqual([JSON.stringify(body), 400, error]);
    }
    const notJson = await fetch(`${server.url}/api/oauth/register`, { method: 'POST', body: 'redirect_uris=x' });
    expect(notJson.status).toBe(400);
  });

  it('limits registrations per client address and minute (429 with Retry-After)', async () => {
    process.env.MCP_OAUTH_REGISTRATIONS_PER_MINUTE = '2';
    process.env.TRUST_PROXY = '1';
    resetEnvCache();
    const from = (address: string) =>
      fetch(`${server.url}/api/oauth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
        body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
      });
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await from('203.0.113.7')).status);
    expect(statuses).toEqual([201, 201, 429]);
    const limited = await from('203.0.113.7');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await limited.json()) as { error: string }).error).toBe('slow_down');
    // Another address is not held up.
    expect((await from('198.51.100.9')).status).toBe(201);
    delete process.env.TRUST_PROXY;
  });
});

describe('client metadata documents', () => {
  it('refuses a document whose client_id differs from its URL', async () => {
    const id = `${docs.origin}/impostor.json`;
    docs.documents.set('/impostor.json', {
      client_id: 'https://claude.ai/oauth/client.json',
      client_name: 'Claude',
      redirect_uris: [REDIRECT],
    });
    const r = await openAuthorization(authorizeUrl({ client_id: id }));
    expect(r.status).toBe(400);
    expect(r.location).toBeNull();
    expect(r.text).toContain('names another client_id than its URL');
    expect(await (await getPrisma()).mcpOAuthClient.findUnique({ where: { id } })).toBeNull();
  });

  it('never fetches from a private, link-local or metadata host, and needs https without the test setting', async () => {
    const before = docs.requests.length;
    for (const id of [
      'http://10.0.0.5/client.json',
      'https://192.168.1.20/client.json',
      'https://169.254.169.254/latest/meta-data/client.json',
      'https://metadata.google.internal/client.json',
      'https://[fd00::1]/client.json',
    ]) {
      const r = await openAuthorization(authorizeUrl({ client_id: id }));
      expect([id, r.status, r.location]).toEqual([id, 400, null]);
    }
    expect(docs.requests.length).toBe(before);
    // Without the test-only allowance, plain http on loopback is refused too.
    delete process.env.MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS;
    resetEnvCache();
    docs.documents.set('/ok.json', { client_id: `${docs.origin}/ok.json`, redirect_uris: [REDIRECT] });
    const r = await openAuthorization(authorizeUrl({ client_id: `${docs.origin}/ok.json` }));
    expect(r.status).toBe(400);
    expect(docs.requests.length).toBe(before);
  });
});
