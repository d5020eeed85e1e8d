// The provenance migration on a database with data: issues created before it keep their meaning.
// An issue without a reporter (created through a project key, the old "untrusted" rule) gets
// EXTERNAL text; an issue a member reported gets MEMBER text.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { applyMigrations, readMigrations } from '@/server/migrate';
import { openEmptyDatabase, type EmptyDatabase } from './empty-database';

const MIGRATION = '20261125100001_issue_text_provenance';
let db: EmptyDatabase;

beforeAll(async () => {
  db = await openEmptyDatabase();
});
afterAll(async () => {
  await db?.close();
});

it('marks the text of issues without a reporter EXTERNAL and keeps the others MEMBER', async () => {
  const all = await readMigrations();
  const before = all.filter((m) => m.name < MIGRATION);
  expect(before.length).toBeLessThan(all.length);
  await applyMigrations(db.session, before);
  await db.session.exec(`
    INSERT INTO "User" (id, email, name, "updatedAt") VALUES ('u_1', 'a@example.com', 'A', now());
    INSERT INTO "Project" (id, slug, name, "updatedAt") VALUES ('p_1', 'p', 'P', now());
    INSERT INTO "Issue" (id, "projectId", number, title, "reporterId", "updatedAt") VALUES
      ('i_1', 'p_1', 1, 'reported by a member', 'u_1', now()),
      ('i_2', 'p_1', 2, 'created through a project key', NULL, now());
  `);
  await applyMigrations(db.session, all);
  const { rows } = await db.session.query<{
    id: string;
    titleSource: string;
    bodySource: string;
    labelsSource: string;
  }>('SELECT id, "titleSource", "bodySource", "labelsSource" FROM "Issue" ORDER BY id');
  expect(rows).toEqual([
    { id: 'i_1', titleSource: 'MEMBER', bodySource: 'MEMBER', labelsSource: 'MEMBER' },
    { id: 'i_2', titleSource: 'EXTERNAL', bodySource: 'EXTERNAL', labelsSource: 'EXTERNAL' },
  ]);
});
