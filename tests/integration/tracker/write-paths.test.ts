// The tracker's write paths answer with the issue they changed WITHOUT loading its comments (an
// issue with thousands of comments must not make every status change read them all), and the
// issue page's read caps the comments it loads. Queries are observed through Prisma's query log.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PrismaClient } from '@/generated/prisma/client';
import { MAX_ISSUE_COMMENTS } from '@/features/tracker/services/issues';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

// Prisma emits query events only when asked to when the client is created (first getPrisma()).
process.env.PRISMA_COUNT_QUERIES = '1';

let server: TestServer;
let p: TestProject;
let prisma: PrismaClient;
const queries: string[] = [];
const COMMENTS = MAX_ISSUE_COMMENTS + 100;

beforeAll(async () => {
  server = await startTestServer();
  prisma = await getPrisma();
  (prisma as unknown as { $on(ev: 'query', cb: (e: { query: string }) => void): void }).$on('query', (e) =>
    queries.push(e.query),
  );
  p = await createProject('Busy issue');
  const issue = await createIssue(p.id, { title: 'Popular', reporterId: p.users.MEMBER.id });
  const t0 = Date.now() - COMMENTS * 1000;
  await prisma.comment.createMany({
    data: Array.from({ length: COMMENTS }, (_, i) => ({
      id: newId('c_'),
      issueId: issue.id,
      authorId: p.users.MEMBER.id,
      body: `comment ${i + 1}`,
      createdAt: new Date(t0 + i * 1000),
    })),
  });
});
afterAll(async () => {
  delete process.env.PRISMA_COUNT_QUERIES;
  await server?.close();
});

/** The SQL run during `fn`, and its result. */
async function observe<T>(fn: () => Promise<T>): Promise<{ result: T; sql: string[] }> {
  queries.length = 0;
  const result = await fn();
  return { result, sql: [...queries] };
}

describe('write paths on an issue with many comments', () => {
  it('update, assign, close and reopen answer with the issue and never read its comments', async () => {
    const m = trpcClient(server.url, p.users.MEMBER.cookie);
    const ref = { projectId: p.id, number: 1 };
    const writes = {
      update: () => m.tracker.issues.update.mutate({ ...ref, title: 'Popular (renamed)', labels: ['bug'] }),
      assign: () => m.tracker.issues.assign.mutate({ ...ref, assigneeId: p.users.ADMIN.id }),
      close: () => m.tracker.issues.close.mutate(ref),
      reopen: () => m.tracker.issues.reopen.mutate(ref),
    };
    for (const [name, write] of Object.entries(writes)) {
      const { result, sql } = await observe(write);
      expect(sql.length, name).toBeGreaterThan(0);
      expect(
        sql.filter((q) => q.includes('"Comment"')),
        name,
      ).toEqual([]);
      expect(result, name).not.toHaveProperty('comments');
      expect(result, name).toMatchObject({ number: 1, body: '', reporter: { id: p.users.MEMBER.id } });
    }
  });

  it('the issue read loads the newest comments up to the cap and counts the rest', async () => {
    const m = trpcClient(server.url, p.users.MEMBER.cookie);
    const issue = await m.tracker.issues.get.query({ projectId: p.id, number: 1 });
    expect(issue.commentCount).toBe(COMMENTS);
    expect(issue.comments).toHaveLength(MAX_ISSUE_COMMENTS);
    // Oldest first, ending with the newest.
    expect(issue.comments[0]!.body).toBe(`comment ${COMMENTS - MAX_ISSUE_COMMENTS + 1}`);
    expect(issue.comments.at(-1)!.body).toBe(`comment ${COMMENTS}`);
  });
});
