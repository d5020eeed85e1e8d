// Where the product touches the database: only the storage and service modules listed here run
// queries. Routers, pages, route handlers, middleware and the MCP tools call named functions of
// those modules, so a reader finds every query of a table in one place and authorization is not
// mixed with data access. The assistant module (src/features/in-app-agent) keeps its own list in
// tests/unit/in-app-agent/data-access.test.ts; Prisma's generated client is not product code.
import { statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { idleStorage, offendersIn, queriesIn, relativeTo, sourceFiles } from '../helpers/data-access';

const SRC = path.resolve(__dirname, '../../src');

/** Folders not scanned here, each with why. */
const ELSEWHERE: Record<string, string> = {
  'features/in-app-agent': 'the assistant module: its own storage list and test',
  generated: "Prisma's generated client",
};

/** The modules that may run queries, each with what it stores or reads. */
const STORAGE: Record<string, string> = {
  'features/tracker/services/shared.ts': 'the issue an operation targets (requireIssue), for issues and comments',
  'features/tracker/services/projects.ts': "projects, a user's projects, issue counts and the webhook URL",
  'features/tracker/services/issues.ts': 'issues: lists, search, one issue with its comments, and every write',
  'features/tracker/services/comments.ts': 'comments on issues',
  'features/tracker/services/labels.ts': 'labels and their issue counts',
  'features/tracker/services/members.ts': 'project memberships: lists, adding, role changes, removal',
  'features/tracker/services/api-keys.ts': "a project's PROJECT keys as its settings list them",
  'features/mcp/audit.ts': 'the MCP tool-call audit trail (with the names of the keys and users it shows)',
  'features/mcp/override-store.ts': 'single-use overrides already spent',
  'features/mcp/elicitation-store.ts': "the MCP server's open questions to clients and the answers that came back",
  'features/mcp/ledger.ts': "the tool-call ledger: an assistant's changing call once, in its change's transaction",
  'features/mcp/oauth/clients.ts': 'OAuth clients: registrations, cached metadata documents, client authentication',
  'features/mcp/oauth/tokens.ts': 'OAuth codes, grants and tokens: issue, exchange, refresh, revoke, check',
  'features/mcp/oauth/grants.ts': "connected apps: a user's or a project's grants, and their revocation",
  'features/mcp/oauth/retention.ts': 'the retention purge of expired OAuth codes and tokens, old grants and clients',
  'server/access.ts': "who a user is in a project: the membership role, the project's existence",
  'server/api-keys.ts': 'API keys: minting, verification, last use and revocation',
  'server/auth.ts': 'users and their OAuth accounts at sign-in, the session user',
  'server/limits.ts': 'rate-limit counters',
  'server/seed.ts': 'the demo data',
  'server/db.ts': 'the connection itself: raw SQL sessions over pg or PGlite, the migrations at start',
  'server/pglite-prepared.ts':
    "the embedded database's prepared statements, behind the connection's statements past the ORM",
  'server/migrate.ts': 'the migration ledger and the migrations',
  'server/retention.ts': 'the retention purge of old rows',
  'server/health.ts': "the readiness probe's one query",
};

const relativeToSrc = (file: string) => relativeTo(SRC, file);

const scanned = () =>
  sourceFiles(SRC)
    .map(relativeToSrc)
    .filter((relative) => !Object.keys(ELSEWHERE).some((dir) => relative.startsWith(`${dir}/`)));

describe("the product's data access", () => {
  it('runs queries only in its storage and service modules', () => {
    expect(offendersIn(SRC, STORAGE, scanned())).toEqual({});
  });

  it('lists storage modules that exist and do run queries', () => {
    expect(idleStorage(SRC, STORAGE)).toEqual([]);
  });

  it('leaves out only folders that exist', () => {
    for (const dir of Object.keys(ELSEWHERE)) expect(statSync(path.join(SRC, dir)).isDirectory(), dir).toBe(true);
  });

  it('recognises the shapes of a query', () => {
    expect(queriesIn('const rows = await ctx.prisma.projectMembership.findMany({')).toHaveLength(1);
    expect(queriesIn('await tx.issue.update({ where })')).toHaveLength(1);
    expect(queriesIn('const issue = await db.issue.findUnique({')).toHaveLength(1);
    expect(queriesIn('const rows = await prisma.$queryRaw<Row[]>`SELECT 1`')).toHaveLength(1);
    expect(queriesIn('await prisma.$transaction(async (tx) => {')).toHaveLength(1);
    expect(queriesIn('const { rows } = await session.query<{ n: number }>(sql, params);')).toHaveLength(1);
    expect(queriesIn('return db.withSession(async (s) => {')).toHaveLength(1);
    expect(queriesIn('const rows = await db.queryRows<Row>(Prisma.sql`SELECT 1`);')).toHaveLength(1);
    expect(queriesIn('const members = await listMembers(ctx.prisma, projectId);')).toHaveLength(0);
    // A tRPC procedure's `.query(` and a Map's `.delete(` are not database calls.
    expect(queriesIn("list: projectProcedure('issues:read').query(({ ctx }) => ...)")).toHaveLength(0);
    expect(queriesIn('this.handles.delete(name);')).toHaveLength(0);
    // A mention without a call is not a query.
    expect(queriesIn('// prisma.issue.findMany lives in services/issues.ts')).toHaveLength(0);
  });
});
