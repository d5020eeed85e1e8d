// Unexpected failures of tRPC procedures: the client gets a generic 500 without internals, the
// server log names the procedure and the error class, and never echoes the input or the cookie.
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { setLogDestination } from '@/server/log';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let p: TestProject;

beforeAll(async () => {
  server = await startTestServer();
  p = await createProject('Errors');
});
afterAll(() => server?.close());

describe('INTERNAL_SERVER_ERROR', () => {
  it('is logged server-side without input or secrets, and answered with a generic message', async () => {
    const prisma = await getPrisma();
    // The structured log, captured in-process.
    const logged: string[] = [];
    setLogDestination(
      new Writable({
        write: (chunk: Buffer, _e, done) => {
          logged.push(...chunk.toString().split('\n').filter(Boolean));
          done();
        },
      }),
    );
    // Break the database under the procedure: the issues table goes away for a moment.
    await prisma.$executeRawUnsafe('ALTER TABLE "Issue" RENAME TO "Issue_gone"');
    let res: Response;
    let lines: string[];
    try {
      const input = { json: { projectId: p.id, query: 'needle-SECRET-ECHO-4711' } };
      res = await fetch(
        `${server.url}/api/trpc/tracker.issues.search?input=${encodeURIComponent(JSON.stringify(input))}`,
        {
          headers: { cookie: p.users.MEMBER.cookie },
        },
      );
      lines = [...logged];
    } finally {
      await prisma.$executeRawUnsafe('ALTER TABLE "Issue_gone" RENAME TO "Issue"');
    }
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { json: { message: string; data: Record<string, unknown> } } };
    expect(body.error.json.message).toBe('Something went wrong. Please try again.');
    expect(JSON.stringify(body)).not.toMatch(/Issue_gone|prisma|needle/i);

    const entry = lines.find((l) => l.includes('tracker.issues.search'));
    expect(entry, lines.join('\n---\n')).toBeDefined();
    const parsed = JSON.parse(entry!) as { level: string; event: string; msg: string; frames: string[] };
    expect(parsed).toMatchObject({ level: 'error', event: 'request.failed', procedure: 'tracker.issues.search' });
    expect(parsed.msg).toMatch(/^tRPC query tracker\.issues\.search failed: \w+/);
    expect(parsed.frames[0]).toMatch(/^at /); // where it failed
    expect(entry).not.toContain('needle-SECRET-ECHO-4711');
    expect(entry).not.toContain(p.users.MEMBER.cookie.split('=')[1]!.slice(0, 40));

    // Working again, and the caller's own mistakes are not logged as server errors.
    logged.length = 0;
    try {
      const ok = await fetch(
        `${server.url}/api/trpc/tracker.issues.get?input=${encodeURIComponent(JSON.stringify({ json: { projectId: p.id, number: 999 } }))}`,
        { headers: { cookie: p.users.MEMBER.cookie } },
      );
      expect(ok.status).toBe(404);
      expect(logged.filter((l) => l.includes('"level":"error"'))).toEqual([]);
    } finally {
      setLogDestination(undefined);
    }
  });
});
