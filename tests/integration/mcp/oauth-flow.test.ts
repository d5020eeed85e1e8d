// MCP authorization end to end over real HTTP with the official MCP client's OAuth support: the
// 401 names the resource metadata, the client discovers the authorization server, registers (by
// Dynamic Client Registration, or by its metadata document URL), sends the user to authorize
// (the test signs in through next-auth and answers the consent form), exchanges the code with
// PKCE, lists and calls the tools its grant allows, refreshes (rotation), and revokes; then the
// MCP endpoint answers 401 again.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { READ_ONLY_KEY_SCOPES } from '@/features/mcp/key-scopes';
import { MCP_TOOL_METADATA } from '@/features/mcp/registry';
import { getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import { hashPassword } from '@/server/password';
import { createIssue, createProject, createUser, type TestProject, type TestUser } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';
import { rawPost } from './mcp-client';
import {
  consent,
  MemoryProvider,
  nativeClientMetadata,
  signIn,
  startDocumentServer,
  tokenRequest,
} from './oauth-client';

let server: TestServer;
let docs: Awaited<ReturnType<typeof startDocumentServer>>;
let project: TestProject;
let member: TestUser;
let cookie: string;
const PASSWORD = 'correct horse battery staple';
const REDIRECT = 'http://127.0.0.1:53682/callback';

beforeAll(async () => {
  server = await startTestServer();
  docs = await startDocumentServer();
  process.env.NEXTAUTH_URL = server.url;
  process.env.MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS = '1';
  resetEnvCache();
  project = await createProject('OAuth flow');
  member = await createUser('Connecting Member', { passwordHash: await hashPassword(PASSWORD) });
  const prisma = await getPrisma();
  await prisma.projectMembership.create({
    data: { id: `m_${member.id}`, projectId: project.id, userId: member.id, role: 'MEMBER' },
  });
  await createIssue(project.id, { title: 'An issue to read', reporterId: project.users.OWNER.id });
  cookie = await signIn(server.url, member.email, PASSWORD);
});
afterAll(async () => {
  delete process.env.NEXTAUTH_URL;
  delete process.env.MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS;
  resetEnvCache();
  await docs?.close();
  await server?.close();
});

const mcpUrl = () => new URL('/api/public/mcp', server.url);

async function connectWith(provider: MemoryProvider): Promise<Client> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
  return client;
}

/** 401 → discovery → registration → authorization URL, as the official client does it. */
async function startFlow(provider: MemoryProvider): Promise<URL> {
  const client = new Client({ name: 'oauth-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl).not.toBeNull();
  return provider.authorizationUrl!;
}

async function finish(provider: MemoryProvider, callback: URL): Promise<void> {
  expect(callback.searchParams.get('state')).toBe(provider.stateValue);
  expect(callback.searchParams.get('iss')).toBe(server.url);
  const code = callback.searchParams.get('code');
  expect(code).toMatch(/^mcp_ac_/);
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  await transport.finishAuth(code!);
}

describe('discovery', () => {
  it('a 401 names the resource metadata, which names the authorization server, built from NEXTAUTH_URL', async () => {
    const res = await rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    expect(res.status).toBe(401);
    const challenge = res.headers.get('www-authenticate') ?? '';
    const metadataUrl = `${server.url}/.well-known/oauth-protected-resource/api/public/mcp`;
    expect(challenge).toBe(`Bearer realm="mcp", resource_metadata="${metadataUrl}"`);
    expect(res.headers.get('access-control-expose-headers')).toContain('www-authenticate');

    // Another Host header changes nothing: the documents come from the configured public URL.
    const prm = await fetch(metadataUrl, { headers: { host: 'evil.example' } });
    const resource = (await prm.json()) as Record<string, unknown>;
    expect(resource).toMatchObject({
      resource: `${server.url}/api/public/mcp`,
      authorization_servers: [server.url],
      bearer_methods_supported: ['header'],
    });
    expect(await (await fetch(`${server.url}/.well-known/oauth-protected-resource`)).json()).toEqual(resource);
    expect((await fetch(`${server.url}/.well-known/oauth-protected-resource/api/other`)).status).toBe(404);

    const as = (await (await fetch(`${server.url}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(as).toMatchObject({
      issuer: server.url,
      authorization_endpoint: `${server.url}/oauth/authorize`,
      token_endpoint: `${server.url}/api/oauth/token`,
      registration_endpoint: `${server.url}/api/oauth/register`,
      revocation_endpoint: `${server.url}/api/oauth/revoke`,
      code_challenge_methods_supported: ['S256'],
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
    expect(as.token_endpoint_auth_methods_supported).toContain('none');
  });

  it('answers CORS preflights without credentials, never with 401', async () => {
    for (const path of [
      '/api/public/mcp',
      '/api/oauth/token',
      '/api/oauth/register',
      '/api/oauth/revoke',
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource/api/public/mcp',
    ]) {
      const res = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://inspector.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type, mcp-protocol-version',
        },
      });
      expect([path, res.status]).toEqual([path, 204]);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-headers')).toContain('authorization');
      expect(res.headers.get('access-control-expose-headers')).toContain('www-authenticate');
    }
  });

  it('ignores a token in the query string', async () => {
    const url = `/api/public/mcp?access_token=mcp_at_${'a'.repeat(43)}`;
    const res = await fetch(new URL(url, server.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
  });
});

describe('the official MCP client, registered by Dynamic Client Registration', () => {
  it('401 → register → authorize → consent → code → token (PKCE) → tools → refresh (rotation) → revoke → 401', async () => {
    const prisma = await getPrisma();
    const provider = new MemoryProvider(REDIRECT, nativeClientMetadata(REDIRECT, 'Flow Test Client'));

    const authorizationUrl = await startFlow(provider);
    const clientId = provider.info?.client_id ?? '';
    expect(clientId).toMatch(/^mcpc_/);
    expect(await prisma.mcpOAuthClient.findUnique({ where: { id: clientId } })).toMatchObject({
      kind: 'REGISTERED',
      name: 'Flow Test Client',
      redirectUris: [REDIRECT],
      tokenEndpointAuthMethod: 'none',
    });
    expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorizationUrl.searchParams.get('resource')).toBe(`${server.url}/api/public/mcp`);

    // The member grants read-only access to the project.
    const callback = await consent(server.url, authorizationUrl, cookie, {
      projectId: project.id,
      access: 'read-only',
    });
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    await finish(provider, callback);
    const first = provider.saved!;
    expect(first).toMatchObject({ token_type: 'Bearer', scope: READ_ONLY_KEY_SCOPES.join(' ') });
    expect(first.access_token).toMatch(/^mcp_at_/);
    expect(first.refresh_token).toMatch(/^mcp_rt_/);
    // Only hashes are stored.
    const stored = await prisma.mcpOAuthToken.findMany({ select: { tokenHash: true } });
    expect(stored.some((t) => t.tokenHash.includes(first.access_token))).toBe(false);

    // tools/list shows the read-only tools; a call works and is audited with the client.
    const client = await connectWith(provider);
    const names = (await client.listTools()).tools.map((t) => t.name).sort();
    const readOnly = MCP_TOOL_METADATA.filter((t) => t.annotations.readOnlyHint)
      .map((t) => t.name)
      .sort();
    expect(names).toEqual(readOnly);
    const summary = await client.callTool({ name: 'get_project_summary', arguments: {} });
    expect(summary.isError).toBeFalsy();
    await client.close();
    const audit = await prisma.toolCallAudit.findFirstOrThrow({
      where: { projectId: project.id, tool: 'get_project_summary' },
    });
    expect(audit).toMatchObject({
      status: 'OK',
      apiKeyId: null,
      userId: member.id,
      oauthClientId: clientId,
      oauthClientName: 'Flow Test Client',
    });
    expect(audit.oauthGrantId).toMatch(/^gr_/);
    // The project's audit trail names the app and the member it acted for.
    const trail = await trpcClient(server.url, project.users.OWNER.cookie).mcp.audit.list.query({
      projectId: project.id,
    });
    expect(trail.items.find((r) => r.id === audit.id)).toMatchObject({
      oauthClient: { id: clientId, name: 'Flow Test Client' },
      userName: 'Connecting Member',
      keyKind: null,
    });

    // Refresh: a new pair; the old refresh token is used up.
    expect(await auth(provider, { serverUrl: mcpUrl() })).toBe('AUTHORIZED');
    const second = provider.saved!;
    expect(second.access_token).not.toBe(first.access_token);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const replay = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      refresh_token: first.refresh_token!,
      client_id: clientId,
    });
    expect(replay).toMatchObject({ status: 400, json: { error: 'invalid_grant' } });
    // Within the grace a replay does not end the connection: the new tokens still work.
    const again = await connectWith(provider);
    expect((await again.listTools()).tools.length).toBe(readOnly.length);
    await again.close();

    // Revocation (RFC 7009) of the refresh token ends the whole grant: the access token is refused.
    const revoke = await fetch(`${server.url}/api/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: second.refresh_token!, client_id: clientId }),
    });
    expect(revoke.status).toBe(200);
    const refused = await rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), {
      authorization: `Bearer ${second.access_token}`,
    });
    expect(refused.status).toBe(401);
    expect(refused.json.error?.data?.code).toBe('TOKEN_REVOKED');
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(refused.headers.get('www-authenticate')).toContain('resource_metadata=');
    // The official client finds itself signed out: it asks for a new authorization.
    provider.authorizationUrl = null;
    await expect(connectWith(provider)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl).not.toBeNull();
  });
});

describe('the official MCP client, known by its client metadata document', () => {
  it('uses the document URL as client_id, with full access of a member', async () => {
    const prisma = await getPrisma();
    const clientId = `${docs.origin}/oauth/client-metadata.json`;
    docs.documents.set('/oauth/client-metadata.json', {
      client_id: clientId,
      client_name: 'Document Client',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
    // The client presents its document URL as its id, as the SDK does when the server supports it.
    const provider = new MemoryProvider(REDIRECT, nativeClientMetadata(REDIRECT), { client_id: clientId });
    const authorizationUrl = await startFlow(provider);
    expect(authorizationUrl.searchParams.get('client_id')).toBe(clientId);

    const callback = await consent(server.url, authorizationUrl, cookie, { projectId: project.id, access: 'full' });
    expect(docs.requests).toContain('/oauth/client-metadata.json');
    expect(await prisma.mcpOAuthClient.findUnique({ where: { id: clientId } })).toMatchObject({
      kind: 'METADATA_DOCUMENT',
      name: 'Document Client',
    });
    await finish(provider, callback);
    // "Full" is everything a MEMBER's role holds: no delete_issue.
    const client = await connectWith(provider);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain('create_issue');
    expect(names).not.toContain('delete_issue');
    const created = await client.callTool({ name: 'create_issue', arguments: { title: 'Written by an app' } });
    expect(created.isError).toBeFalsy();
    await client.close();
    // Text an outside app writes is the app's, marked external, even though a member connected it.
    const issue = await prisma.issue.findFirstOrThrow({ where: { projectId: project.id, title: 'Written by an app' } });
    expect(issue.titleSource).toBe('EXTERNAL');
  });
});
