// Where the assistant module touches the database: only its storage modules run queries. The
// router, the route handler, the run's life and the agent call named functions, so a reader finds
// every query of a table in one place and a route reads top to bottom.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const MODULE = path.resolve(__dirname, '../../../src/features/in-app-agent');

/** The modules that may run queries, each with what it stores. */
const STORAGE: Record<string, string> = {
  'server/persistence.ts': 'runs, events, versions, replay, heartbeats and the stale sweep',
  'server/queries.ts': "conversations, feedback, review and usage (the router's reads and writes)",
  'server/human-in-the-loop.ts': 'pending approvals and their decisions',
  'server/feedback-export.ts': 'the JSONL export, streamed a page of ratings at a time',
  'server/tools.ts': "the navigate tool's check that an issue number exists in the host's issues",
};

/**
 * A Prisma model call (`prisma.agentRun.findMany(`, `tx.x.update(`), a raw query or transaction, or a
 * statement sent straight to the driver (`db.queryRows(`).
 */
const QUERY =
  /\.\s*queryRows\s*[(<]|\b(?:prisma|tx)\s*\.\s*(?:\$queryRaw|\$executeRaw|\$queryRawUnsafe|\$executeRawUnsafe|\$transaction|[a-z]\w*\s*\.\s*(?:findUnique|findUniqueOrThrow|findFirst|findFirstOrThrow|findMany|create|createMany|update|updateMany|upsert|delete|deleteMany|count|aggregate|groupBy)\s*[(<])/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) ? [full] : [];
  });
}

/** Every line of `source` that runs a query, as "line: text". */
function queriesIn(source: string): string[] {
  return source
    .split('\n')
    .map((line, i) => [i + 1, line] as const)
    .filter(([, line]) => QUERY.test(line))
    .map(([n, line]) => `${n}: ${line.trim()}`);
}

describe("the assistant module's data access", () => {
  it('runs queries only in its storage modules', () => {
    const offenders: Record<string, string[]> = {};
    for (const file of sourceFiles(MODULE)) {
      const relative = path.relative(MODULE, file).split(path.sep).join('/');
      if (relative in STORAGE) continue;
      const found = queriesIn(readFileSync(file, 'utf8'));
      if (found.length) offenders[relative] = found;
    }
    expect(offenders).toEqual({});
  });

  it('lists storage modules that exist and do run queries', () => {
    for (const relative of Object.keys(STORAGE)) {
      expect(queriesIn(readFileSync(path.join(MODULE, relative), 'utf8')).length, relative).toBeGreaterThan(0);
    }
  });

  it('recognises the shapes of a query', () => {
    expect(queriesIn('const c = await ctx.prisma.agentConversation.findFirst({')).toHaveLength(1);
    expect(queriesIn('await tx.agentRun.update({ where })')).toHaveLength(1);
    expect(queriesIn('const rows = await prisma.$queryRaw<Row[]>`SELECT 1`')).toHaveLength(1);
    expect(queriesIn('await prisma.$transaction(async (tx) => {')).toHaveLength(1);
    expect(queriesIn('const rows = await db.queryRows<Row>(Prisma.sql`SELECT 1`);')).toHaveLength(1);
    expect(queriesIn('const page = await replayPage(ctx.prisma, c.id, {});')).toHaveLength(0);
    // A mention without a call is not a query.
    expect(queriesIn('// prisma.agentRun.findMany lives in persistence.ts')).toHaveLength(0);
  });
});
