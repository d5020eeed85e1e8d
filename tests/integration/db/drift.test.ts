// Drift test: the SQL migrations, applied to an empty database, must produce exactly the schema the
// Prisma schema describes (tables, columns, types, nullability, defaults, enums, primary keys,
// unique and plain indexes, foreign keys). Prisma's own engine cannot run here, so the expected
// side comes from the schema's DMMF and the actual side from the PostgreSQL catalog.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyMigrations, readMigrations, type SqlSession } from '@/server/migrate';
import { getDmmf, type Dmmf } from './dmmf';
import { openEmptyDatabase, type EmptyDatabase } from './empty-database';
import { diffShapes, shapeFromDatabase, shapeFromDmmf, type SchemaShape } from './schema-shape';

/**
 * Indexes the Prisma schema cannot express, allowed by name. Each must exist in the database with
 * this definition (so the allow-list cannot go stale).
 */
const ALLOWED_EXTRA_INDEXES: Record<string, RegExp> = {
  // At most one RUNNING run per conversation.
  AgentRun_one_running_per_conversation:
    /^CREATE UNIQUE INDEX "AgentRun_one_running_per_conversation" ON (\w+\.)?"AgentRun" USING btree \("conversationId"\) WHERE \(status = 'RUNNING'::"AgentRunStatus"\)$/,
  // At most one RUNNING experiment per evaluation dataset.
  AgentEvalExperiment_one_running_per_dataset:
    /^CREATE UNIQUE INDEX "AgentEvalExperiment_one_running_per_dataset" ON (\w+\.)?"AgentEvalExperiment" USING btree \("datasetId"\) WHERE \(status = 'RUNNING'::"AgentEvalStatus"\)$/,
};

const schemaText = readFileSync(path.join(process.cwd(), 'prisma', 'schema.prisma'), 'utf8');

/** Everything that differs between the DMMF and the database, plus allow-list violations. */
async function driftReport(session: SqlSession, dmmf: Dmmf): Promise<string[]> {
  const actual = await shapeFromDatabase(session);
  const report = diffShapes(shapeFromDmmf(dmmf), actual);
  for (const [name, { table, definition }] of Object.entries(actual.partialIndexes)) {
    const allowed = ALLOWED_EXTRA_INDEXES[name];
    if (!allowed)
      report.push(`index ${name} on ${table}: partial or expression index not in the allow-list (${definition})`);
    else if (!allowed.test(definition)) report.push(`index ${name} on ${table}: definition changed to ${definition}`);
  }
  for (const name of Object.keys(ALLOWED_EXTRA_INDEXES)) {
    if (!actual.partialIndexes[name]) report.push(`index ${name}: allowed extra index is missing from the database`);
  }
  return report;
}

/** Runs `fn` after `sql` inside a transaction that is rolled back, leaving the database as it was. */
async function withAlteredDatabase<T>(session: SqlSession, sql: string, fn: () => Promise<T>): Promise<T> {
  await session.exec('BEGIN');
  try {
    await session.exec(sql);
    return await fn();
  } finally {
    await session.exec('ROLLBACK');
  }
}

/** Applies a textual change to one model or enum block of the schema; fails if nothing changed. */
function alterSchema(block: string, from: string | RegExp, to: string): string {
  const start = schemaText.search(new RegExp(`^(model|enum) ${block} \\{`, 'm'));
  if (start < 0) throw new Error(`no block ${block} in schema.prisma`);
  const end = schemaText.indexOf('\n}', start) + 2;
  const original = schemaText.slice(start, end);
  const changed = original.replace(from, to);
  if (changed === original) throw new Error(`alteration ${String(from)} did not apply to ${block}`);
  return schemaText.slice(0, start) + changed + schemaText.slice(end);
}

let db: EmptyDatabase;
let dmmf: Dmmf;

beforeAll(async () => {
  db = await openEmptyDatabase();
  await applyMigrations(db.session, await readMigrations());
  dmmf = getDmmf(schemaText);
});
afterAll(async () => {
  await db?.close();
});

describe('Prisma schema vs. SQL migrations', () => {
  it('the migrated database is exactly what the Prisma schema describes', async () => {
    expect(await driftReport(db.session, dmmf)).toEqual([]);
  });

  it('compares every model, enum, relation and index (the comparison is not vacuous)', async () => {
    const expected = shapeFromDmmf(dmmf);
    const actual = await shapeFromDatabase(db.session);
    const models = dmmf.datamodel.models.map((m) => m.dbName ?? m.name).sort();
    expect(Object.keys(expected.tables).sort()).toEqual(models);
    expect(Object.keys(actual.tables).sort()).toEqual(models);
    expect(Object.keys(actual.enums).sort()).toEqual(dmmf.datamodel.enums.map((e) => e.name).sort());
    const count = (s: SchemaShape, k: 'columns' | 'indexes' | 'foreignKeys') =>
      Object.values(s.tables).reduce((n, t) => n + Object.keys(t[k]).length, 0);
    for (const k of ['columns', 'indexes', 'foreignKeys'] as const) {
      expect(count(actual, k), k).toBe(count(expected, k));
      expect(count(actual, k), k).toBeGreaterThan(10);
    }
    expect(expected.tables.Issue!.columns.status).toEqual({
      type: '"IssueStatus"',
      nullable: false,
      default: `'OPEN'::"IssueStatus"`,
    });
    expect(expected.tables.IssueLabel!.primaryKey).toEqual({
      name: 'IssueLabel_pkey',
      columns: ['issueId', 'labelId'],
    });
  });
});

describe('the drift test reports differences', () => {
  const schemaCases: Array<[string, string, string | RegExp, string, string[]]> = [
    [
      'a field made optional',
      'Issue',
      /title(\s+)String/,
      'title$1String?',
      ['column Issue.title: optional in the Prisma schema, NOT NULL in the database'],
    ],
    [
      'a new field',
      'Issue',
      /\n {2}closedAt/,
      '\n  severity Int @default(0)\n  closedAt',
      ['column Issue.severity: in the Prisma schema, missing in the database'],
    ],
    [
      'a changed default',
      'Project',
      `@default("")`,
      `@default("none")`,
      [`column Project.description: default 'none'::text in the Prisma schema, ''::text in the database`],
    ],
    [
      'a changed list default',
      'ApiKey',
      /scopes(\s+)String\[\](\s+)@default\(\[\]\)/,
      'scopes$1String[]$2@default(["issues:read"])',
      [
        "column ApiKey.scopes: default ARRAY['issues:read'::text] in the Prisma schema, " +
          'ARRAY[]::text[] in the database',
      ],
    ],
    [
      'a changed type',
      'AgentEvent',
      /seq(\s+)Int/,
      'seq$1BigInt',
      ['column AgentEvent.seq: type bigint in the Prisma schema, integer in the database'],
    ],
    [
      'a new unique field',
      'Project',
      /name(\s+)String/,
      'name$1String @unique',
      ['index Project_name_key on Project: unique (name) in the Prisma schema, missing in the database'],
    ],
    [
      'a removed index',
      'IssueLabel',
      /\n\s+@@index\(\[labelId\]\)/,
      '',
      ['index IssueLabel_labelId_idx on IssueLabel: index (labelId) in the database, not in the Prisma schema'],
    ],
    [
      'a new enum value',
      'IssueStatus',
      'CLOSED',
      'CLOSED\n  ARCHIVED',
      [
        'enum IssueStatus: values (OPEN, IN_PROGRESS, CLOSED, ARCHIVED) in the Prisma schema, (OPEN, IN_PROGRESS, CLOSED) in the database',
      ],
    ],
    [
      'a changed referential action',
      'Comment',
      'fields: [authorId], references: [id], onDelete: SetNull',
      'fields: [authorId], references: [id], onDelete: Cascade',
      [
        'foreign key Comment_authorId_fkey: (authorId) -> User(id) ON DELETE CASCADE ON UPDATE CASCADE in the Prisma schema, (authorId) -> User(id) ON DELETE SET NULL ON UPDATE CASCADE in the database',
      ],
    ],
  ];

  it.each(schemaCases)('in the Prisma schema: %s', async (_label, block, from, to, expected) => {
    const altered = getDmmf(alterSchema(block, from, to));
    expect(await driftReport(db.session, altered)).toEqual(expected);
  });

  it('in the Prisma schema: a new model', async () => {
    const altered = getDmmf(`${schemaText}\nmodel Extra {\n  id String @id\n}\n`);
    expect(await driftReport(db.session, altered)).toEqual([
      'table Extra: in the Prisma schema, missing in the database',
    ]);
  });

  const sqlCases: Array<[string, string, string[]]> = [
    [
      'NOT NULL dropped',
      'ALTER TABLE "Comment" ALTER COLUMN "body" DROP NOT NULL',
      ['column Comment.body: required in the Prisma schema, NULL allowed in the database'],
    ],
    [
      'a unique index dropped',
      'DROP INDEX "User_email_key"',
      ['index User_email_key on User: unique (email) in the Prisma schema, missing in the database'],
    ],
    [
      'a default changed',
      `ALTER TABLE "Issue" ALTER COLUMN "body" SET DEFAULT 'x'`,
      [`column Issue.body: default ''::text in the Prisma schema, 'x'::text in the database`],
    ],
    [
      'a default dropped',
      `ALTER TABLE "AgentRun" ALTER COLUMN "startedAt" DROP DEFAULT`,
      ['column AgentRun.startedAt: default CURRENT_TIMESTAMP in the Prisma schema, none in the database'],
    ],
    [
      'an extra column',
      'ALTER TABLE "AgentRun" ADD COLUMN "extra" TEXT',
      ['column AgentRun.extra: in the database, not in the Prisma schema'],
    ],
    [
      'a type changed',
      'ALTER TABLE "ApiKey" ALTER COLUMN "expiresAt" TYPE TIMESTAMPTZ(3)',
      [
        'column ApiKey.expiresAt: type timestamp(3) without time zone in the Prisma schema, timestamp(3) with time zone in the database',
      ],
    ],
    [
      'a foreign key action changed',
      'ALTER TABLE "Issue" DROP CONSTRAINT "Issue_assigneeId_fkey"; ALTER TABLE "Issue" ADD CONSTRAINT "Issue_assigneeId_fkey" FOREIGN KEY ("assigneeId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE',
      [
        'foreign key Issue_assigneeId_fkey: (assigneeId) -> User(id) ON DELETE SET NULL ON UPDATE CASCADE in the Prisma schema, (assigneeId) -> User(id) ON DELETE CASCADE ON UPDATE CASCADE in the database',
      ],
    ],
    [
      'an extra unique index',
      'CREATE UNIQUE INDEX "Issue_title_key" ON "Issue"("title")',
      ['index Issue_title_key on Issue: unique (title) in the database, not in the Prisma schema'],
    ],
    [
      'a partial index outside the allow-list',
      `CREATE INDEX "Issue_open_idx" ON "Issue"("projectId") WHERE "status" = 'OPEN'`,
      [
        `index Issue_open_idx on Issue: partial or expression index not in the allow-list (CREATE INDEX "Issue_open_idx" ON public."Issue" USING btree ("projectId") WHERE (status = 'OPEN'::"IssueStatus"))`,
      ],
    ],
    [
      'the allowed partial index dropped',
      'DROP INDEX "AgentRun_one_running_per_conversation"',
      ['index AgentRun_one_running_per_conversation: allowed extra index is missing from the database'],
    ],
    [
      'a table dropped',
      'DROP TABLE "AgentFeedback"',
      ['table AgentFeedback: in the Prisma schema, missing in the database'],
    ],
    [
      'an enum value renamed',
      `ALTER TYPE "ApprovalStatus" RENAME VALUE 'CONSUMED' TO 'USED'`,
      [
        'enum ApprovalStatus: values (PENDING, APPROVED, REJECTED, EXPIRED, CONSUMED) in the Prisma schema, (PENDING, APPROVED, REJECTED, EXPIRED, USED) in the database',
      ],
    ],
  ];

  it.each(sqlCases)('in the database: %s', async (_label, sql, expected) => {
    const report = await withAlteredDatabase(db.session, sql, () => driftReport(db.session, dmmf));
    expect(report).toEqual(expected);
    // The rollback restored the migrated state.
    expect(await driftReport(db.session, dmmf)).toEqual([]);
  });
});
