// Cut the connection anywhere, reattach, and the panel's view is what an uninterrupted run shows.
// fast-check generates conversations (text streamed in pieces, read tool calls, batches of calls
// that need approval and their answers, model errors) and, for every run, where the connection
// drops, how long the client stays away (the run may end meanwhile) and whether it reattaches
// with its last position or with none (a snapshot). Everything goes through the real routes over
// HTTP. Checked for every run: positions only grow and never repeat, every text delta arrives
// exactly once when reattaching with a position, exactly one terminal event arrives, and the
// client's folded view equals the stored conversation (which replays exactly what a client that
// never lost its connection folded: see replay.property.test.ts).
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyView, foldEvent, openInterrupts } from '@/features/in-app-agent/fold';
import type { AgentEvent, ConversationView } from '@/features/in-app-agent/schema';
import {
  followRun,
  startRunStream,
  userMessageBody,
  useScriptedModelEnv,
  type PositionedSse,
} from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let model: FakeServer;
let project: TestProject;
let queue: ScriptedTurn[] = [];

beforeAll(async () => {
  model = await startFakeOpenAI(() => queue.shift() ?? { text: ['(no more turns)'] });
  for (const k of ['AGENT_MCP_URL', 'NEXTAUTH_URL']) delete process.env[k];
  useScriptedModelEnv(model.url, { AGENT_RATE_LIMIT_PER_MINUTE: '10000' });
  server = await startTestServer();
  project = await createProject('Reattach');
  await createIssue(project.id, { title: 'First issue' });
  await createIssue(project.id, { title: 'Second issue' });
});

afterAll(async () => {
  await server?.close();
  await model?.close();
});

const word = fc.stringMatching(/^[a-z]{1,6} $/);
const textTurn = fc.record({
  text: fc.array(word, { minLength: 1, maxLength: 12 }),
  delayMs: fc.constantFrom(0, 2, 5),
});
/** One model turn of a run: text, a read tool, a batch needing approval, or a failure. */
const turn: fc.Arbitrary<ScriptedTurn & { kind: string }> = fc.oneof(
  textTurn.map((t) => ({ ...t, kind: 'text' })),
  fc.record({ text: fc.array(word, { maxLength: 4 }), delayMs: fc.constant(2) }).map((t) => ({
    ...t,
    kind: 'read',
    toolCalls: [{ name: 'list_issues', args: {} }],
  })),
  fc.integer({ min: 1, max: 3 }).map((n) => ({
    kind: 'approval',
    text: ['Let me do that. '],
    delayMs: 2,
    toolCalls: Array.from({ length: n }, (_, i) => ({
      name: 'add_comment',
      args: { number: 1 + (i % 2), body: `note ${i}` },
    })),
  })),
  fc.constant(0).map(() => ({ kind: 'error', text: ['Partial '], delayMs: 2, streamError: 'internal' as const })),
);
/** Where a connection drops (after how many events), how long the client is away, how it comes back. */
const cut = fc.record({
  after: fc.integer({ min: 1, max: 40 }),
  awayMs: fc.constantFrom(0, 5, 30, 120),
  withPosition: fc.boolean(),
});
const conversation = fc.record({
  turns: fc.array(turn, { minLength: 1, maxLength: 4 }),
  cuts: fc.array(fc.option(fc.array(cut, { maxLength: 2 }), { nil: null }), { minLength: 8, maxLength: 8 }),
  decisions: fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
});

const isTerminal = (e: AgentEvent) => e.type === 'RUN_FINISHED' || e.type === 'RUN_ERROR';

type Cut = { after: number; awayMs: number; withPosition: boolean };

/**
 * A client: folds what it receives into its view (a snapshot replaces it), tracks its position in
 * the current run, and collects the run's text deltas.
 */
class Client {
  view: ConversationView = emptyView();
  position = 0;
  runDeltas: string[] = [];
  terminals = 0;

  newRun(): void {
    this.position = 0;
    this.runDeltas = [];
    this.terminals = 0;
  }

  take(events: PositionedSse[]): void {
    for (const { id, event } of events) {
      if (id !== null) {
        // Positions only grow: nothing is sent twice.
        expect(id).toBeGreaterThan(this.position);
        this.position = id;
      }
      if (event.type === 'TEXT_MESSAGE_CONTENT') this.runDeltas.push(event.delta);
      if (isTerminal(event)) this.terminals += 1;
      foldEvent(this.view, event);
    }
  }
}

const dropAfter = (cut: Cut | undefined) => (cut ? (ev: PositionedSse[]) => ev.length >= cut.after : undefined);

/**
 * One run: started, its connection dropped where the first cut says; then, per cut, the client
 * stays away, reattaches (with its position or none) and may drop again; the last connection is
 * read to the end.
 */
async function runWithCuts(client: Client, body: unknown, cuts: Cut[]): Promise<{ runId: string; threadId: string }> {
  client.newRun();
  const started = await startRunStream(server.url, project.id, project.users.MEMBER.cookie, body, dropAfter(cuts[0]));
  expect(started.status).toBe(200);
  const { runId, threadId } = started.events[0]!.event as { runId: string; threadId: string };
  client.take(started.events);
  for (let i = 0; client.terminals === 0; i++) {
    const cut = cuts[i];
    if (cut) await new Promise((r) => setTimeout(r, cut.awayMs));
    const withPosition = cut?.withPosition ?? true;
    if (!withPosition) client.newRun(); // a reload: the snapshot, then the run from its start
    const res = await followRun(server.url, project.id, runId, project.users.MEMBER.cookie, {
      after: withPosition ? client.position : null,
      until: dropAfter(cuts[i + 1]),
    });
    expect(res.status).toBe(200);
    if (!withPosition) {
      expect(res.events[0]?.event.type).toBe('MESSAGES_SNAPSHOT');
      expect(res.events[1]?.event).toMatchObject({ type: 'CUSTOM', name: 'in-app-agent.snapshot' });
    }
    client.take(res.events);
    expect(i).toBeLessThan(10);
  }
  expect(client.terminals).toBe(1);
  return { runId, threadId };
}

describe('reattaching to a run', () => {
  it('gives the view of an uninterrupted run, with no delta lost or repeated', { timeout: 600_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(conversation, async ({ turns, cuts, decisions }) => {
        queue = [];
        for (const t of turns) {
          queue.push(t);
          // After a tool call the model answers once more (after the result or the decision).
          if (t.toolCalls) queue.push({ text: ['Done ', 'with ', 'that.'], delayMs: 2 });
        }
        const client = new Client();
        let threadId = 'new';
        let decisionIndex = 0;
        for (let runIndex = 0; queue.length > 0 || openInterrupts(client.view).length > 0; runIndex++) {
          expect(runIndex).toBeLessThan(12);
          const open = openInterrupts(client.view);
          const body = open.length
            ? {
                threadId,
                messages: [],
                resume: open.map((i) => ({
                  interruptId: i.id,
                  status: 'resolved',
                  payload: { approved: decisions[decisionIndex++ % decisions.length] },
                })),
              }
            : userMessageBody(`Request ${runIndex}`, threadId);
          const run = await runWithCuts(client, body, cuts[runIndex % cuts.length] ?? []);
          threadId = run.threadId;
          const stored = await trpcClient(server.url, project.users.MEMBER.cookie).agent.conversations.get.query({
            projectId: project.id,
            conversationId: threadId,
          });
          // Every delta of the run exactly once, in order: what arrived is the run's stored text.
          const runText = stored.view.messages
            .filter((m) => m.role !== 'tool' && m.runId === run.runId)
            .map((m) => m.content)
            .join('');
          expect(client.runDeltas.join('')).toBe(runText);
          expect(client.view).toEqual(stored.view);
        }
      }),
      { numRuns: Number(process.env.REATTACH_RUNS ?? 25) },
    );
  });
});
