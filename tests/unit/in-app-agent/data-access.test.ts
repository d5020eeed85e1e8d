// Where the assistant module touches the database: only its storage modules run queries. The
// router, the route handler, the run's life and the agent call named functions, so a reader finds
// every query of a table in one place and a route reads top to bottom.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { idleStorage, offendersIn, queriesIn, relativeTo, sourceFiles } from '../../helpers/data-access';

const MODULE = path.resolve(__dirname, '../../../src/features/in-app-agent');

/** The modules that may run queries, each with what it stores. */
const STORAGE: Record<string, string> = {
  'server/persistence.ts': 'runs, events, versions, replay, heartbeats and the stale sweep',
  'server/queries.ts': "conversations, feedback, review and usage (the router's reads and writes)",
  'server/human-in-the-loop.ts': 'pending approvals and their decisions',
  'server/feedback-export.ts': 'the JSONL export, streamed a page of ratings at a time',
  'server/tools.ts': "the navigate tool's check that an issue number exists in the host's issues",
  'server/references.ts': "the check of the issues and members a run's messages name, in the host's tables",
  'server/fan-out.ts': "LISTEN/NOTIFY on the fan-out's own connection (runs on other instances)",
  'server/retention.ts': "the retention purge of the module's old rows",
  'server/attachment-store.ts':
    'attachments: uploads, their bytes (chunks or objects), binding to a conversation, retention',
  'server/settings-store.ts': "the project's tool permissions and instructions (versions), always-allow grants",
  'server/budgets.ts': 'budgets and the spend per window (the settings, the usage page)',
  'server/data-policy.ts': "a project's retention and masking settings, a new conversation's masked title",
  'server/member-data.ts': "one member's assistant data: who has some, its export and its deletion",
  'server/waiting.ts': 'the approvals and questions waiting for a user, and their expiry',
  'server/takeover.ts': 'the claim of runs whose instance stopped (lease, generation, what is kept, a new key)',
  'server/eval-store.ts': 'evaluation datasets, cases, experiments and results, and the key an experiment reads with',
};

describe("the assistant module's data access", () => {
  it('runs queries only in its storage modules', () => {
    const files = sourceFiles(MODULE).map((file) => relativeTo(MODULE, file));
    expect(offendersIn(MODULE, STORAGE, files)).toEqual({});
  });

  it('lists storage modules that exist and do run queries', () => {
    expect(idleStorage(MODULE, STORAGE)).toEqual([]);
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
