// The retention purge of MCP authorization rows on the real database: codes and tokens a day after
// they expired, grants revoked or unused for AUDIT_RETENTION_DAYS, and clients left without grants
// and codes that long; everything still usable stays, and audit rows keep naming the client.
import { describe, expect, it } from 'vitest';
import { getDb, getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { purgeExpired } from '@/server/retention';
import { createProject } from '../../helpers/fixtures';

const DAY = 86_400_000;
const daysAgo = (n: number) => new Date(Date.now() - n * DAY);

describe('the retention purge of MCP authorization', () => {
  it('deletes what is past retention and keeps what can still be used', async () => {
    const prisma = await getPrisma();
    const p = await createProject('OAuth retention');
    const userId = p.users.MEMBER.id;
    const client = async (updatedDaysAgo: number) => {
      const id = newId('mcpc_');
      await prisma.mcpOAuthClient.create({
        data: { id, kind: 'REGISTERED', name: 'c', redirectUris: ['http://127.0.0.1/cb'] },
      });
      await prisma.$executeRaw`UPDATE "McpOAuthClient" SET "updatedAt" = ${daysAgo(updatedDaysAgo)} WHERE "id" = ${id}`;
      return id;
    };
    const grant = async (
      clientId: string,
      opts: { createdDaysAgo: number; revokedDaysAgo?: number; refreshExpiresInDays?: number },
    ) => {
      const id = newId('gr_');
      await prisma.mcpOAuthGrant.create({
        data: {
          id,
          clientId,
          userId,
          projectId: p.id,
          scopes: ['issues:read'],
          resource: 'https://tracker.example/api/public/mcp',
          createdAt: daysAgo(opts.createdDaysAgo),
          revokedAt: opts.revokedDaysAgo === undefined ? null : daysAgo(opts.revokedDaysAgo),
        },
      });
      if (opts.refreshExpiresInDays !== undefined)
        await prisma.mcpOAuthToken.create({
          data: {
            tokenHash: newId('h_'),
            kind: 'REFRESH',
            grantId: id,
            scopes: ['issues:read'],
            expiresAt: new Date(Date.now() + opts.refreshExpiresInDays * DAY),
          },
        });
      return id;
    };

    const abandoned = await client(100);
    const recentClient = await client(10);
    const used = await client(100);
    const liveGrant = await grant(used, { createdDaysAgo: 200, refreshExpiresInDays: 5 });
    const revokedLongAgo = await grant(used, { createdDaysAgo: 200, revokedDaysAgo: 91 });
    const revokedRecently = await grant(used, { createdDaysAgo: 200, revokedDaysAgo: 5 });
    const idle = await grant(used, { createdDaysAgo: 120, refreshExpiresInDays: -40 });
    await prisma.toolCallAudit.create({
      data: {
        id: newId('au_'),
        projectId: p.id,
        tool: 'list_issues',
        status: 'OK',
        oauthGrantId: revokedLongAgo,
        oauthClientId: used,
        oauthClientName: 'c',
      },
    });
    const token = (grantId: string, kind: 'ACCESS' | 'REFRESH', expiresDaysAgo: number) =>
      prisma.mcpOAuthToken.create({
        data: { tokenHash: newId('h_'), kind, grantId, scopes: [], expiresAt: daysAgo(expiresDaysAgo) },
      });
    const oldAccess = await token(liveGrant, 'ACCESS', 2);
    const freshAccess = await token(liveGrant, 'ACCESS', -1);
    const code = (expiresDaysAgo: number) =>
      prisma.mcpOAuthCode.create({
        data: {
          codeHash: newId('c_'),
          clientId: recentClient,
          userId,
          projectId: p.id,
          scopes: [],
          resource: 'r',
          redirectUri: 'http://127.0.0.1/cb',
          codeChallenge: 'x'.repeat(43),
          expiresAt: daysAgo(expiresDaysAgo),
        },
      });
    const oldCode = await code(2);
    const recentCode = await code(0.5);

    const result = await purgeExpired(await getDb(), { agentRetentionDays: 30, auditRetentionDays: 90, batchSize: 10 });
    expect(result.ran).toBe(true);
    expect(result.oauthRows).toBeGreaterThanOrEqual(6);

    const ids = async () => ({
      clients: (await prisma.mcpOAuthClient.findMany({ where: { id: { in: [abandoned, recentClient, used] } } })).map(
        (c) => c.id,
      ),
      grants: (await prisma.mcpOAuthGrant.findMany({ where: { clientId: used } })).map((g) => g.id),
      tokens: (await prisma.mcpOAuthToken.findMany({ where: { grantId: liveGrant, kind: 'ACCESS' } })).map(
        (t) => t.tokenHash,
      ),
      codes: (await prisma.mcpOAuthCode.findMany({ where: { clientId: recentClient } })).map((c) => c.codeHash),
    });
    const left = await ids();
    expect(left.clients.sort()).toEqual([recentClient, used].sort());
    expect(left.grants.sort()).toEqual([liveGrant, revokedRecently].sort());
    expect(left.tokens).toEqual([freshAccess.tokenHash]);
    expect(left.codes).toEqual([recentCode.codeHash]);
    expect(left.tokens).not.toContain(oldAccess.tokenHash);
    expect(left.codes).not.toContain(oldCode.codeHash);
    expect(left.grants).not.toContain(idle);
    // The audit row outlives its grant and still names the client.
    const row = await prisma.toolCallAudit.findFirstOrThrow({ where: { projectId: p.id, oauthClientId: used } });
    expect(row).toMatchObject({ oauthGrantId: null, oauthClientName: 'c' });
  });
});
