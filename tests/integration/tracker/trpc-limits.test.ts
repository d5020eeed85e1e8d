// Limits of the tRPC endpoint over real HTTP: body size, batch size and nesting caps answered with
// tRPC's own error envelope and a stable appCode (never a 500), and the per-user mutation limit
// from the limits store (429 RATE_LIMITED with Retry-After), as the real tRPC client sees them.
import { createTRPCClient, httpBatchLink, TRPCClientError } from '@trpc/client';
import superjson from 'superjson';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRPC_MAX_BATCH_SIZE, TRPC_MAX_BODY_BYTES } from '@/lib/trpc/limits';
import type { AppRouter } from '@/server/api-root';
import { resetEnvCache } from '@/server/env';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let p: TestProject;

beforeAll(async () => {
  process.env.TRPC_MUTATIONS_PER_MINUTE = '5';
  resetEnvCache();
  server = await startTestServer();
  p = await createProject('Limits');
  await createIssue(p.id, { title: 'Target' });
});
afterAll(async () => {
  delete process.env.TRPC_MUTATIONS_PER_MINUTE;
  resetEnvCache();
  await server?.close();
});

interface ErrorEntry {
  error: { json: { message: string; data: { code: string; httpStatus: number; appCode: string; path?: string } } };
}

async function post(path: string, body: string, query = '') {
  const res = await fetch(`${server.url}/api/trpc/${path}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: p.users.MEMBER.cookie, origin: server.url },
    body,
  });
  return { status: res.status, headers: res.headers, json: (await res.json()) as ErrorEntry | ErrorEntry[] };
}

const comment = (body: string) => JSON.stringify({ json: { projectId: p.id, number: 1, body } });

describe('request caps', () => {
  it('refuses a body over the cap with 413 PAYLOAD_TOO_LARGE, without running the procedure', async () => {
    const res = await post('tracker.comments.add', comment('x'.repeat(TRPC_MAX_BODY_BYTES)));
    expect(res.status).toBe(413);
    expect((res.json as ErrorEntry).error.json.data).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      httpStatus: 413,
      appCode: 'PAYLOAD_TOO_LARGE',
      path: 'tracker.comments.add',
    });
    const issue = await trpcClient(server.url, p.users.MEMBER.cookie).tracker.issues.get.query({
      projectId: p.id,
      number: 1,
    });
    expect(issue.comments).toHaveLength(0);
  });

  it('refuses a batch of more calls than allowed with BATCH_TOO_LARGE, one entry per call', async () => {
    const paths = Array.from({ length: TRPC_MAX_BATCH_SIZE + 1 }, () => 'tracker.projects.list').join(',');
    const res = await fetch(`${server.url}/api/trpc/${paths}?batch=1&input=%7B%7D`, {
      headers: { cookie: p.users.MEMBER.cookie },
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorEntry[];
    expect(body).toHaveLength(TRPC_MAX_BATCH_SIZE);
    expect(body[0]!.error.json.data).toMatchObject({ code: 'BAD_REQUEST', appCode: 'BATCH_TOO_LARGE' });
    // The largest allowed batch works.
    const allowed = Array.from({ length: TRPC_MAX_BATCH_SIZE }, () => 'tracker.projects.list').join(',');
    expect(
      (
        await fetch(`${server.url}/api/trpc/${allowed}?batch=1&input=%7B%7D`, {
          headers: { cookie: p.users.MEMBER.cookie },
        })
      ).status,
    ).toBe(200);
  });

  it('refuses deeply nested input with JSON_TOO_DEEP in a body and in a query string', async () => {
    const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const viaBody = await post('tracker.comments.add', `{"json":${deep}}`);
    expect([viaBody.status, (viaBody.json as ErrorEntry).error.json.data.appCode]).toEqual([400, 'JSON_TOO_DEEP']);
    const viaQuery = await fetch(
      `${server.url}/api/trpc/tracker.projects.list?input=${encodeURIComponent(deep.slice(4900, 5100))}`,
      {
        headers: { cookie: p.users.MEMBER.cookie },
      },
    );
    expect(viaQuery.status).toBe(400);
    expect(((await viaQuery.json()) as ErrorEntry).error.json.data.appCode).toBe('JSON_TOO_DEEP');
  });

  it('the browser client (batched) reads the refusal as a normal tRPC error', async () => {
    const client = createTRPCClient<AppRouter>({
      links: [
        httpBatchLink({
          url: `${server.url}/api/trpc`,
          transformer: superjson,
          headers: () => ({ cookie: p.users.MEMBER.cookie, origin: server.url }),
        }),
      ],
    });
    const err = await client.tracker.comments.add
      .mutate({ projectId: p.id, number: 1, body: 'y'.repeat(TRPC_MAX_BODY_BYTES) })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    expect((err as TRPCClientError<AppRouter>).data).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      appCode: 'PAYLOAD_TOO_LARGE',
    });
  });
});

describe('mutations per user and minute', () => {
  it('refuses the 6th change in a minute: 429 RATE_LIMITED with Retry-After; others are not affected', async () => {
    const owner = p.users.OWNER;
    const send = () =>
      fetch(`${server.url}/api/trpc/tracker.comments.add`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: owner.cookie, origin: server.url },
        body: comment('a change'),
      });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await send()).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    const refused = await send();
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(((await refused.json()) as ErrorEntry).error.json.data).toMatchObject({
      code: 'TOO_MANY_REQUESTS',
      httpStatus: 429,
      appCode: 'RATE_LIMITED',
      retryAfterSeconds: retryAfter,
    });
    // Reads are not limited, and another user's changes still go through.
    expect(
      (await fetch(`${server.url}/api/trpc/tracker.projects.list`, { headers: { cookie: owner.cookie } })).status,
    ).toBe(200);
    const admin = trpcClient(server.url, p.users.ADMIN.cookie);
    await expect(
      admin.tracker.comments.add.mutate({ projectId: p.id, number: 1, body: 'fine' }),
    ).resolves.toMatchObject({ body: 'fine' });
  });
});
