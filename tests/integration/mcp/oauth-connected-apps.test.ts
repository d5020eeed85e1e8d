// "Connected apps" through the real tRPC endpoint: a user sees and disconnects the apps they
// connected; a project's admins see every app connected to the project and disconnect any of them;
// other members see none; disconnecting ends the app's access token and refresh token at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s256 } from '@/features/mcp/oauth/pkce';
import { resetEnvCache } from '@/server/env';
import { createProject, type TestProject, type TestUser } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';
import { rawPost } from './mcp-client';
import { consent, tokenRequest } from './oauth-client';

let server: TestServer;
let project: TestProject;
const REDIRECT = 'http://127.0.0.1/callback';
const VERIFIER = `connected-apps-verifier-${'x'.repeat(30)}`;

beforeAll(async () => {
  server = await startTestServer();
  process.env.NEXTAUTH_URL = server.url;
  resetEnvCache();
  project = await createProject('Connected apps');
});
afterAll(async () => {
  delete process.env.NEXTAUTH_URL;
  resetEnvCache();
  await server?.close();
});

/** Registers an app and connects it for `user` with read-only access; its tokens. */
async function connectApp(user: TestUser, name: string) {
  const reg = await fetch(`${server.url}/api/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  });
  const clientId = ((await reg.json()) as { client_id: string }).client_id;
  const q = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: s256(VERIFIER),
    code_challenge_method: 'S256',
  });
  const callback = await consent(server.url, `${server.url}/oauth/authorize?${q}`, user.cookie, {
    projectId: project.id,
    access: 'read-only',
  });
  const tokens = await tokenRequest(server.url, {
    grant_type: 'authorization_code',
    code: callback.searchParams.get('code')!,
    redirect_uri: REDIRECT,
    code_verifier: VERIFIER,
    client_id: clientId,
  });
  return { clientId, access: tokens.json.access_token as string, refresh: tokens.json.refresh_token as string };
}

const listTools = (token: string) =>
  rawPost(server.url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), {
    authorization: `Bearer ${token}`,
  });

describe('connected apps', () => {
  it('a user lists and disconnects their own apps; nobody else can disconnect them from their settings', async () => {
    const member = project.users.MEMBER;
    const app = await connectApp(member, 'Member Desktop App');
    const mine = await trpcClient(server.url, member.cookie).mcp.connectedApps.mine.query();
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      client: { id: app.clientId, name: 'Member Desktop App', kind: 'REGISTERED', documentHost: null },
      project: { id: project.id, name: 'Connected apps' },
      user: { id: member.id },
      scopes: ['project:read', 'issues:read', 'members:read'],
      lastUsedAt: null,
    });
    expect((await listTools(app.access)).status).toBe(200);
    const used = await trpcClient(server.url, member.cookie).mcp.connectedApps.mine.query();
    expect(used[0]!.lastUsedAt).not.toBeNull();

    // Another user (even the project's owner) cannot revoke it as "theirs".
    const owner = trpcClient(server.url, project.users.OWNER.cookie);
    expect(await errorCode(owner.mcp.connectedApps.revokeMine.mutate({ grantId: mine[0]!.id }))).toBe('NOT_FOUND');
    expect((await listTools(app.access)).status).toBe(200);

    await trpcClient(server.url, member.cookie).mcp.connectedApps.revokeMine.mutate({ grantId: mine[0]!.id });
    expect((await listTools(app.access)).status).toBe(401);
    const refreshed = await tokenRequest(server.url, {
      grant_type: 'refresh_token',
      refresh_token: app.refresh,
      client_id: app.clientId,
    });
    expect(refreshed.json.error).toBe('invalid_grant');
    expect(await trpcClient(server.url, member.cookie).mcp.connectedApps.mine.query()).toEqual([]);
  });

  it("a project's admins see every member's apps and disconnect them; other members may not", async () => {
    const viewerApp = await connectApp(project.users.VIEWER, 'Viewer Web App');
    const admin = trpcClient(server.url, project.users.ADMIN.cookie);
    const listed = await admin.mcp.connectedApps.project.query({ projectId: project.id });
    const row = listed.find((a) => a.client.id === viewerApp.clientId);
    expect(row).toMatchObject({ user: { id: project.users.VIEWER.id }, client: { name: 'Viewer Web App' } });

    const member = trpcClient(server.url, project.users.MEMBER.cookie);
    expect(await errorCode(member.mcp.connectedApps.project.query({ projectId: project.id }))).toBe('FORBIDDEN');
    expect(
      await errorCode(member.mcp.connectedApps.revokeInProject.mutate({ projectId: project.id, grantId: row!.id })),
    ).toBe('FORBIDDEN');
    // An admin of another project cannot reach it either.
    const other = await createProject('Elsewhere');
    const stranger = trpcClient(server.url, other.users.ADMIN.cookie);
    expect(
      await errorCode(stranger.mcp.connectedApps.revokeInProject.mutate({ projectId: other.id, grantId: row!.id })),
    ).toBe('NOT_FOUND');
    expect((await listTools(viewerApp.access)).status).toBe(200);

    await admin.mcp.connectedApps.revokeInProject.mutate({ projectId: project.id, grantId: row!.id });
    expect((await listTools(viewerApp.access)).status).toBe(401);
    const after = await admin.mcp.connectedApps.project.query({ projectId: project.id });
    expect(after.some((a) => a.id === row!.id)).toBe(false);
  });
});
