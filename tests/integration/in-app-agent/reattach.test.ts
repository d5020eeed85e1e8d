// Following a run over real HTTP: a second watcher sees the same live answer, Stop from the
// second watcher ends it for both, positions resume exactly (also from storage, mid-message),
// and only the conversation's owner (or a reviewer of the project) may watch it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyView, foldEvent } from '@/features/in-app-agent/fold';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import {
  cancelRun,
  followRun,
  runUrl,
  startRunStream,
  userMessageBody,
  useScriptedModelEnv,
  type PositionedSse,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;
let other: TestProject;
let turns: ScriptedTurn[] = [];

beforeAll(async () => {
  model = await startFakeOpenAI((_b, i) => turns[i] ?? { text: ['(no more turns)'] });
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  useScriptedModelEnv(model.url);
  server = await startTestServer();
  project = await createProject('Follow');
  other = await createProject('Elsewhere');
});

afterAll(async () => {
  await server?.close();
  await model?.close();
});

function script(...t: ScriptedTurn[]) {
  turns = t;
  model.requests.length = 0;
}

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i} `);
const member = () => project.users.MEMBER;
const isTerminal = (e: PositionedSse) => e.event.type === 'RUN_FINISHED' || e.event.type === 'RUN_ERROR';
const textOf = (events: PositionedSse[]) =>
  events.flatMap((e) => (e.event.type === 'TEXT_MESSAGE_CONTENT' ? [e.event.delta] : [])).join('');

describe('GET /api/projects/:projectId/in-app-agent/runs/:runId/events', () => {
  it('lets a second watcher follow the live answer from a snapshot, and Stop there ends it for both', async () => {
    script({ text: words(300), delayMs: 10 });
    const controller = new AbortController();
    const first = fetch(`${server.url}/api/projects/${project.id}/in-app-agent`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url, cookie: member().cookie },
      body: JSON.stringify(userMessageBody('a long answer please')),
      signal: controller.signal,
    });
    const firstRes = await first;
    const runId = firstRes.headers.get('x-in-app-agent-run-id')!;
    const firstText = firstRes.text();
    await new Promise((r) => setTimeout(r, 150));
    // The second tab: no position, so the conversation so far, then the run from its start.
    const second = followRun(server.url, project.id, runId, member().cookie, {});
    await new Promise((r) => setTimeout(r, 150));
    expect((await cancelRun(server.url, project.id, runId, member().cookie)).status).toBe(202);
    const watched = await second;
    expect(watched.events[0]!.event.type).toBe('MESSAGES_SNAPSHOT');
    expect(watched.events[1]!.event).toMatchObject({ type: 'CUSTOM', name: 'in-app-agent.snapshot' });
    expect(watched.events[2]!.event).toMatchObject({ type: 'RUN_STARTED', runId });
    expect(watched.events.at(-1)!.event).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'cancelled' } });
    // The first connection saw the same events, with the same positions, and the same end.
    const firstEvents = (await firstText).split('\n\n').filter(Boolean);
    expect(firstEvents.at(-1)).toContain('"cancelled"');
    const secondFramesFromRun = watched.events.slice(2);
    expect(firstEvents).toHaveLength(secondFramesFromRun.length);
    // Both views agree with the stored conversation.
    const view = emptyView();
    for (const e of watched.events) foldEvent(view, e.event);
    const stored = await trpcClient(server.url, member().cookie).agent.conversations.get.query({
      projectId: project.id,
      conversationId: firstRes.headers.get('x-in-app-agent-thread-id')!,
    });
    expect(view).toEqual(stored.view);
    expect(stored.liveRunId).toBeNull();
  });

  it('resumes exactly after a position (header or parameter), live and after the run ended', async () => {
    script({ text: words(40), delayMs: 5 }, { text: ['unused'] });
    const started = await startRunStream(
      server.url,
      project.id,
      member().cookie,
      userMessageBody('count for me'),
      (ev) => ev.length >= 12,
    );
    const runId = (started.events[0]!.event as { runId: string }).runId;
    const last = started.events.at(-1)!.id!;
    // Live, with Last-Event-ID: the rest, then the end.
    const rest = await followRun(server.url, project.id, runId, member().cookie, { lastEventId: last });
    expect(rest.events[0]!.id).toBeGreaterThan(last);
    expect(rest.events.filter(isTerminal)).toHaveLength(1);
    const all = [...started.events, ...rest.events];
    const user = 'count for me';
    expect(textOf(all)).toBe(user + words(40).join(''));

    // After the end, from storage: any position gives exactly the rest, even inside a message.
    for (const cut of [3, 6, 9, 14, 20]) {
      const at = all[cut]!.id!;
      const fromStorage = await followRun(server.url, project.id, runId, member().cookie, { after: at });
      expect(textOf([...all.slice(0, cut + 1), ...fromStorage.events])).toBe(user + words(40).join(''));
      expect(fromStorage.events.at(-1)!.event.type).toBe('RUN_FINISHED');
      expect(fromStorage.events.every((e) => e.id === null || e.id > at)).toBe(true);
    }
    // Inside a message: the client that saw three characters of a delta gets the rest of it.
    const delta = all.find(
      (e) => e.event.type === 'TEXT_MESSAGE_CONTENT' && (e.event as { delta: string }).delta.length > 2,
    )!;
    const inside = await followRun(server.url, project.id, runId, member().cookie, { after: delta.id! - 1 });
    const first = inside.events[0]!.event as Extract<AgentEvent, { type: 'TEXT_MESSAGE_CONTENT' }>;
    expect(first.type).toBe('TEXT_MESSAGE_CONTENT');
    expect(first.delta.startsWith((delta.event as { delta: string }).delta.slice(-1))).toBe(true);
  });

  it('shows a pending approval to every watcher', async () => {
    script({ toolCalls: [{ name: 'create_issue', args: { title: 'From the assistant' } }] });
    const started = await startRunStream(server.url, project.id, member().cookie, userMessageBody('create it'));
    const runId = (started.events[0]!.event as { runId: string }).runId;
    const end = started.events.at(-1)!.event as { outcome?: { type: string; interrupts?: Array<{ id: string }> } };
    expect(end.outcome?.type).toBe('interrupt');
    const watched = await followRun(server.url, project.id, runId, member().cookie, {});
    expect(watched.events.at(-1)!.event).toEqual(started.events.at(-1)!.event);
  });

  it('lets only the owner (and reviewers of the project) watch, and refuses bad positions', async () => {
    script({ text: ['short'] });
    const started = await startRunStream(server.url, project.id, member().cookie, userMessageBody('hi'));
    const runId = (started.events[0]!.event as { runId: string }).runId;
    // Another member (no review scope) and another project's member: the same 404.
    expect((await followRun(server.url, project.id, runId, project.users.VIEWER.cookie, {})).status).toBe(404);
    expect((await followRun(server.url, project.id, runId, project.users.VIEWER.cookie, {})).error?.code).toBe(
      'RUN_NOT_FOUND',
    );
    expect((await followRun(server.url, other.id, runId, other.users.OWNER.cookie, {})).status).toBe(404);
    expect(
      (await followRun(server.url, project.id, 'run_00000000000000000000000000', member().cookie, {})).status,
    ).toBe(404);
    // A project admin may watch (review); nobody but the owner may stop.
    const admin = await followRun(server.url, project.id, runId, project.users.ADMIN.cookie, {});
    expect(admin.status).toBe(200);
    expect(admin.events.at(-1)!.event.type).toBe('RUN_FINISHED');
    expect((await cancelRun(server.url, project.id, runId, project.users.ADMIN.cookie)).status).toBe(404);
    // Not signed in; a position that is not a number.
    expect((await fetch(runUrl(server.url, project.id, runId, 'events'))).status).toBe(401);
    const bad = await followRun(server.url, project.id, runId, member().cookie, {
      lastEventId: 'x' as unknown as number,
    });
    expect(bad).toMatchObject({ status: 400, error: { code: 'INVALID_REQUEST' } });
  });
});
