// Two production instances behind nginx (deploy/nginx.conf), exercised through the proxy only:
// runs and their replay, a follower reattaching, an approval raised on one instance and answered
// after that instance was stopped, a rolling restart of the instance running a live answer (the
// drain hands it to the other instance, where the client follows it), and the
// limits on answers at once and on MCP calls holding for both instances together.
// Started by `.ci/run` (see tests/deploy/cluster.ts); `npm run test:deploy` outside it.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_SCOPES } from '@/features/mcp/key-scopes';
import { createProjectKey } from '@/server/api-keys';
import { closeDb, getPrisma } from '@/server/db';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import {
  followRun,
  followToEnd,
  postAgent,
  startRunStream,
  userMessageBody,
  type PositionedSse,
} from '../helpers/agent';
import { createIssue, createProject, type TestProject } from '../helpers/fixtures';
import { windowWithRoom } from '../helpers/limits-window';
import { trpcClient } from '../helpers/trpc';
import {
  deployConfigured,
  instanceRunning,
  instances,
  isReady,
  proxyUrl,
  startInstance,
  stopInstance,
  waitFor,
} from './cluster';

let project: TestProject;

beforeAll(async () => {
  if (!deployConfigured())
    throw new Error('No deployment to test: run it from `.ci/run` (DEPLOY_DIR with the instances).');
  project = await createProject('Deploy');
});

afterAll(async () => {
  await closeDb();
});

const cookie = () => project.users.MEMBER.cookie;
const textOf = (events: PositionedSse[]) =>
  events.flatMap((e) => (e.event.type === 'TEXT_MESSAGE_CONTENT' ? [e.event.delta] : [])).join('');
const deltas = (events: PositionedSse[]) => events.filter((e) => e.event.type === 'TEXT_MESSAGE_CONTENT').length;
const runIdOf = (events: PositionedSse[]) => (events[0]!.event as { runId: string }).runId;

async function storedText(runId: string): Promise<string> {
  const prisma = await getPrisma();
  const rows = await prisma.agentEvent.findMany({ where: { runId }, orderBy: { seq: 'asc' } });
  return rows
    .flatMap((r) =>
      (r.payload as { type: string }).type === 'TEXT_MESSAGE' ? [(r.payload as { content: string }).content] : [],
    )
    .join('');
}

async function nothingRunning(): Promise<number> {
  const prisma = await getPrisma();
  return prisma.agentRun.count({ where: { status: 'RUNNING', conversation: { projectId: project.id } } });
}

describe('two instances behind nginx', () => {
  it('is ready through the proxy and on each instance', async () => {
    const res = await fetch(`${proxyUrl}/api/ready`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    for (const i of instances) expect(await isReady(i.url)).toBe(true);
  });

  it('streams runs through the proxy and replays them the same from either instance', async () => {
    const res = await postAgent(proxyUrl, project.id, cookie(), userMessageBody('summarize the project'));
    expect(res.status).toBe(200);
    expect(res.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    const threadId = (res.events[0] as { threadId: string }).threadId;
    const streamed = res.events.flatMap((e) => (e.type === 'TEXT_MESSAGE_CONTENT' ? [e.delta] : [])).join('');
    // The replay through the proxy, twice (nginx balances the two calls over both instances).
    for (let n = 0; n < 2; n++) {
      const got = await trpcClient(proxyUrl, cookie()).agent.conversations.get.query({
        projectId: project.id,
        conversationId: threadId,
      });
      const text = got.view.messages.map((m) => (m.role === 'tool' ? '' : (m.content ?? ''))).join('');
      expect(text).toBe(streamed);
      expect(got.liveRunId).toBeNull();
    }
  });

  it('lets a follower reattach through the proxy, from its position, and stop the run', {
    timeout: 60_000,
  }, async () => {
    const started = await startRunStream(
      proxyUrl,
      project.id,
      cookie(),
      userMessageBody('write a long answer'),
      (ev) => deltas(ev) >= 15,
    );
    const runId = runIdOf(started.events);
    const position = started.events.at(-1)!.id!;
    let stopped = false;
    const followed = await followRun(proxyUrl, project.id, runId, cookie(), {
      lastEventId: position,
      until: (ev) => {
        if (!stopped && deltas(ev) >= 15) {
          stopped = true;
          void fetch(`${proxyUrl}/api/projects/${project.id}/in-app-agent/runs/${runId}/cancel`, {
            method: 'POST',
            headers: { origin: proxyUrl, cookie: cookie() },
          });
        }
        return false;
      },
    });
    expect(followed.status).toBe(200);
    expect(followed.events[0]!.id).toBeGreaterThan(position);
    expect(followed.events.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    await waitFor('the run to be recorded', async () => (await nothingRunning()) === 0, 20_000);
    expect(await storedText(runId)).toBe(textOf(started.events) + textOf(followed.events));
  });

  it('answers an approval on the other instance after the one that raised it stopped', {
    timeout: 150_000,
  }, async () => {
    const issue = await createIssue(project.id, { title: 'Close me through the proxy' });
    const asked = await postAgent(proxyUrl, project.id, cookie(), userMessageBody(`close issue ${issue.number}`));
    const last = asked.events.at(-1) as {
      type: string;
      outcome: { type: string; interrupts: Array<{ id: string }> };
    };
    expect(last).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
    const raisedOn = instanceRunning((asked.events[0] as { runId: string }).runId);
    await stopInstance(raisedOn);
    expect(readLog(raisedOn)).toContain('"event":"shutdown.complete","exitCode":0');
    // Requests nginx sends to the stopped instance (connection refused) go to the other one: none fails.
    for (let n = 0; n < 6; n++) expect((await fetch(`${proxyUrl}/api/health`)).status).toBe(200);

    const threadId = (asked.events[0] as { threadId: string }).threadId;
    const answered = await postAgent(proxyUrl, project.id, cookie(), {
      threadId,
      messages: [],
      resume: last.outcome.interrupts.map((i) => ({
        interruptId: i.id,
        status: 'resolved',
        payload: { approved: true },
      })),
    });
    expect(answered.status).toBe(200);
    expect(answered.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    expect(instanceRunning((answered.events[0] as { runId: string }).runId)).not.toBe(raisedOn);
    const prisma = await getPrisma();
    expect((await prisma.issue.findUniqueOrThrow({ where: { id: issue.id } })).status).toBe('CLOSED');

    await startInstance(raisedOn);
    for (const i of instances) expect(await isReady(i.url)).toBe(true);
  });

  it('survives a rolling restart of the instance running a live answer', { timeout: 150_000 }, async () => {
    let victim: (typeof instances)[number] | undefined;
    let stopping: Promise<void> | undefined;
    const refusals: number[] = [];
    const { status, events } = await startRunStream(
      proxyUrl,
      project.id,
      cookie(),
      userMessageBody('write a long answer'),
      (ev) => {
        if (!stopping && deltas(ev) >= 10) {
          victim = instanceRunning(runIdOf(ev));
          stopping = (async () => {
            const stopped = stopInstance(victim!);
            // While it drains, new runs through the proxy are served by the other instance or refused
            // with 503 DRAINING: never a 500 or a proxy error.
            for (let n = 0; n < 3; n++) {
              const r = await postAgent(proxyUrl, project.id, cookie(), userMessageBody('list open issues'));
              refusals.push(r.status);
              if (r.status === 503) expect(r.error).toMatchObject({ code: 'DRAINING' });
            }
            await stopped;
          })();
        }
        return false;
      },
    );
    expect(status).toBe(200);
    await stopping;
    expect(refusals.every((s) => s === 200 || s === 503)).toBe(true);
    // The answer completed within the drain window, or the drain released it and the other
    // instance went on with it: the client follows it there (as the panel does) to its end.
    const runId = runIdOf(events);
    const isEnd = (e: PositionedSse) => e.event.type === 'RUN_FINISHED' || e.event.type === 'RUN_ERROR';
    const all = isEnd(events.at(-1)!)
      ? events
      : [...events, ...(await followToEnd([proxyUrl], project.id, runId, cookie(), { after: events.at(-1)!.id! }))];
    const end = all.at(-1)!.event as { type: string; outcome?: { type: string } };
    expect(end).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    const prisma = await getPrisma();
    const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.status).toBe('COMPLETED');
    // What the client was shown is what is stored (a taken-over step streams again: the fold drops its first try).
    const shown = foldEvents(
      all.map((e) => e.event),
      emptyView(run.conversationId),
    ).messages;
    expect(await storedText(runId)).toBe(shown.map((m) => m.content).join(''));
    expect(await nothingRunning()).toBe(0);
    expect((await prisma.apiKey.findFirstOrThrow({ where: { runId } })).revokedAt).not.toBeNull();
    expect(readLog(victim!)).toMatch(/"event":"drain.finished"/);
    expect(readLog(victim!)).toContain('"event":"shutdown.complete","exitCode":0');

    await startInstance(victim!);
    for (const i of instances) expect(await isReady(i.url)).toBe(true);
    expect((await fetch(`${proxyUrl}/api/ready`)).status).toBe(200);
  });

  it('holds the limits for both instances together: answers at once per user, MCP calls per key', {
    timeout: 90_000,
  }, async () => {
    // The deployment's defaults: 3 answers at once per user, 120 MCP tool calls per key and minute.
    const own = await createProject('Deploy limits');
    const user = own.users.MEMBER;
    const started = await Promise.all(
      Array.from({ length: 5 }, () =>
        startRunStream(proxyUrl, own.id, user.cookie, userMessageBody('write a long answer'), (ev) => ev.length > 0),
      ),
    );
    expect(started.map((r) => r.status).sort()).toEqual([200, 200, 200, 429, 429]);
    const prisma = await getPrisma();
    expect(await prisma.agentRun.count({ where: { userId: user.id, status: 'RUNNING' } })).toBe(3);
    const refused = await postAgent(proxyUrl, own.id, user.cookie, userMessageBody('one more'));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(refused.error?.code).toBe('TOO_MANY_RUNS');
    for (const r of started.filter((x) => x.status === 200)) {
      const res = await fetch(`${proxyUrl}/api/projects/${own.id}/in-app-agent/runs/${runIdOf(r.events)}/cancel`, {
        method: 'POST',
        headers: { origin: proxyUrl, cookie: user.cookie },
      });
      expect(res.status).toBe(202);
    }
    const running = () => prisma.agentRun.count({ where: { userId: user.id, status: 'RUNNING' } });
    await waitFor('the answers to end', async () => (await running()) === 0, 20_000);

    const { secret } = await createProjectKey(prisma, {
      projectId: own.id,
      name: 'deploy limit',
      createdById: own.users.OWNER.id,
      scopes: KEY_SCOPES,
    });
    const call = (id: number) =>
      fetch(`${proxyUrl}/api/public/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${secret}`,
          accept: 'application/json, text/event-stream',
          'content-type': 'application/json',
          'mcp-protocol-version': '2025-06-18',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: 'list_issues', arguments: {} },
        }),
      }).then(async (res) => ({
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        body: (await res.json()) as unknown,
      }));
    // Exactly 120 only inside one window of the limits store: across a window's edge its sliding
    // estimate lets the earlier window's share fade (120 calls counted just before the edge and
    // half a second after it make room for one more). The burst starts early enough in a window.
    await windowWithRoom(60, 20_000);
    const answers = await Promise.all(Array.from({ length: 130 }, (_, n) => call(n + 1)));
    expect(answers.filter((a) => a.status === 200)).toHaveLength(120);
    const over = answers.filter((a) => a.status === 429);
    expect(over).toHaveLength(10);
    for (const a of over) {
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      expect(a.body).toMatchObject({ error: { code: -32029, data: { code: 'RATE_LIMITED' } } });
    }
  });
});

function readLog(instance: (typeof instances)[number]): string {
  return readFileSync(instance.logFile, 'utf8');
}
