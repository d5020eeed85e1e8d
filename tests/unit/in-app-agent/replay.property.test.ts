import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalesce, Compactor, eventsAfter, eventWeight, expand, type WriteOp } from '@/features/in-app-agent/compact';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import {
  AgentEventSchema,
  StoredEventSchema,
  textOfParts,
  type AgentEvent,
  type StoredEvent,
} from '@/features/in-app-agent/schema';

// A generated live stream: several runs, each a random mix of text messages (split into random
// deltas), tool calls (args split into deltas, with or without results), batches of parallel tool
// calls whose starts, argument deltas, ends, approval decisions or question answers and results
// interleave, and custom
// events, ending in success, interrupt, cancellation (abort) or failure, with time passing between
// events so long messages get flushed partially.

type Decision = {
  decision: 'approved' | 'rejected' | 'expired';
  edited?: boolean;
  args?: Record<string, unknown>;
  feedback?: string;
};
/** A question (`ask_user`) answered, declined or expired. */
type Answered = {
  question: { action: 'accept' | 'decline' | 'expired'; content?: Record<string, string | number | boolean> };
};
type ParallelCall = {
  name: string;
  argChunks: string[];
  decision: Decision | Answered | null;
  result: string | null;
};
type Step =
  | { kind: 'text'; chunks: string[] }
  | { kind: 'tool'; name: string; argChunks: string[]; result: string | null }
  | { kind: 'parallel'; calls: ParallelCall[]; schedule: number[] }
  | { kind: 'custom'; name: string; value: unknown }
  /** The checked references or the suggestions of the message before (after it ended, as the server sends them). */
  | { kind: 'annotate'; what: 'references' | 'suggestions' };
type Ending = 'success' | 'interrupt' | 'cancelled' | 'error' | 'abort-midway' | 'still-running';
/** `userParts`: the user message comes in several parts (a parts event after its start). */
type RunSpec = { user: string; userParts: string[] | null; steps: Step[]; ending: Ending; gaps: number[] };

const text = fc.string({ minLength: 1, maxLength: 12 });
const decision: fc.Arbitrary<Decision> = fc.oneof(
  fc.record(
    {
      decision: fc.constant('approved' as const),
      edited: fc.boolean(),
      args: fc.dictionary(text, fc.oneof(text, fc.integer())),
    },
    { requiredKeys: ['decision'] },
  ),
  fc.record({ decision: fc.constant('rejected' as const), feedback: text }, { requiredKeys: ['decision'] }),
  fc.constant({ decision: 'expired' as const }),
);
const answered: fc.Arbitrary<Answered> = fc.record({
  question: fc.oneof(
    fc.record({
      action: fc.constant('accept' as const),
      content: fc.dictionary(
        fc.constantFrom('issue', 'note', 'days', 'notify'),
        fc.oneof(text, fc.integer(), fc.boolean()),
      ),
    }),
    fc.record({ action: fc.constantFrom('decline' as const, 'expired' as const) }),
  ),
});
const toolName = fc.constantFrom('list_issues', 'get_issue', 'create_issue', 'navigate', 'ask_user');
const toolResult = fc.option(
  fc.oneof(text, fc.constant('{"isError":true,"error":"x"}'), fc.constant('{"rejected":true}')),
  { nil: null },
);
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('text' as const), chunks: fc.array(text, { minLength: 0, maxLength: 6 }) }),
  fc.record({
    kind: fc.constant('tool' as const),
    name: fc.constantFrom('list_issues', 'get_issue', 'create_issue'),
    argChunks: fc.array(text, { minLength: 0, maxLength: 4 }),
    result: fc.option(fc.oneof(text, fc.constant('{"isError":true,"error":"x"}')), { nil: null }),
  }),
  fc.record({
    kind: fc.constant('parallel' as const),
    calls: fc.array(
      fc.record({
        name: toolName,
        argChunks: fc.array(text, { maxLength: 4 }),
        decision: fc.option(fc.oneof(decision, answered), { nil: null }),
        result: toolResult,
      }),
      { minLength: 2, maxLength: 4 },
    ),
    schedule: fc.array(fc.nat(), { minLength: 30, maxLength: 30 }),
  }),
  fc.record({
    kind: fc.constant('custom' as const),
    name: fc.constantFrom('in-app-agent.model', 'in-app-agent.navigate', 'other'),
    value: fc.constantFrom(
      { provider: 'demo', modelId: 'demo', label: 'Demo', demo: true },
      { href: '/projects/p/issues' },
      42,
    ),
  }),
);
const annotate: fc.Arbitrary<Step> = fc.record({
  kind: fc.constant('annotate' as const),
  what: fc.constantFrom('references' as const, 'suggestions' as const),
});
const run: fc.Arbitrary<RunSpec> = fc.record({
  user: text,
  userParts: fc.option(fc.array(text, { minLength: 2, maxLength: 3 }), { nil: null }),
  steps: fc.array(fc.oneof({ arbitrary: step, weight: 4 }, { arbitrary: annotate, weight: 1 }), { maxLength: 6 }),
  ending: fc.constantFrom<Ending>('success', 'interrupt', 'cancelled', 'error', 'abort-midway', 'still-running'),
  gaps: fc.array(fc.integer({ min: 0, max: 700 }), { minLength: 40, maxLength: 40 }),
});

function build(runs: RunSpec[]): { events: AgentEvent[]; times: number[] } {
  const events: AgentEvent[] = [];
  const times: number[] = [];
  let t = 0;
  let id = 0;
  runs.forEach((r, ri) => {
    let g = 0;
    const push = (e: AgentEvent) => {
      t += r.gaps[g++ % r.gaps.length]!;
      events.push(e);
      times.push(t);
    };
    const runId = `run${ri}`;
    push({ type: 'RUN_STARTED', threadId: 'thread', runId });
    const um = `u${++id}`;
    push({ type: 'TEXT_MESSAGE_START', messageId: um, role: 'user' });
    if (r.userParts) {
      const parts = r.userParts.map((t) => ({ type: 'text' as const, text: t }));
      push({ type: 'CUSTOM', name: CUSTOM_EVENTS.messageParts, value: { messageId: um, parts } });
      push({ type: 'TEXT_MESSAGE_CONTENT', messageId: um, delta: textOfParts(parts) });
    } else {
      push({ type: 'TEXT_MESSAGE_CONTENT', messageId: um, delta: r.user });
    }
    push({ type: 'TEXT_MESSAGE_END', messageId: um });
    let parent: string | undefined;
    // A run still going (or whose process died) is only possible as the last one of a conversation.
    const ending: Ending = r.ending === 'still-running' && ri < runs.length - 1 ? 'success' : r.ending;
    const cut =
      ending === 'abort-midway' || ending === 'still-running' ? Math.max(0, r.steps.length - 1) : r.steps.length;
    for (let si = 0; si < r.steps.length; si++) {
      const s = r.steps[si]!;
      const midway = si >= cut; // the abort lands inside this step
      if (s.kind === 'text') {
        const m = `a${++id}`;
        parent = m;
        push({ type: 'TEXT_MESSAGE_START', messageId: m, role: 'assistant' });
        const chunks = midway ? s.chunks.slice(0, Math.ceil(s.chunks.length / 2)) : s.chunks;
        for (const c of chunks) push({ type: 'TEXT_MESSAGE_CONTENT', messageId: m, delta: c });
        if (!midway) push({ type: 'TEXT_MESSAGE_END', messageId: m });
      } else if (s.kind === 'tool') {
        const tc = `tc${++id}`;
        push({
          type: 'TOOL_CALL_START',
          toolCallId: tc,
          toolCallName: s.name,
          ...(parent ? { parentMessageId: parent } : {}),
        });
        for (const c of s.argChunks) push({ type: 'TOOL_CALL_ARGS', toolCallId: tc, delta: c });
        if (!midway) {
          push({ type: 'TOOL_CALL_END', toolCallId: tc });
          if (s.result !== null)
            push({ type: 'TOOL_CALL_RESULT', messageId: `r${++id}`, toolCallId: tc, content: s.result, role: 'tool' });
        }
      } else if (s.kind === 'parallel') {
        // One queue of events per call, merged in a generated order (each call's own order kept).
        const queues = s.calls.map((c) => {
          const tc = `tc${++id}`;
          const q: AgentEvent[] = [
            {
              type: 'TOOL_CALL_START',
              toolCallId: tc,
              toolCallName: c.name,
              ...(parent ? { parentMessageId: parent } : {}),
            },
          ];
          for (const a of c.argChunks) q.push({ type: 'TOOL_CALL_ARGS', toolCallId: tc, delta: a });
          q.push({ type: 'TOOL_CALL_END', toolCallId: tc });
          if (c.decision && 'question' in c.decision)
            q.push({
              type: 'CUSTOM',
              name: CUSTOM_EVENTS.questionAnswered,
              value: { toolCallId: tc, ...c.decision.question },
            });
          else if (c.decision)
            q.push({ type: 'CUSTOM', name: 'in-app-agent.approval-decided', value: { toolCallId: tc, ...c.decision } });
          if (c.result !== null)
            q.push({
              type: 'TOOL_CALL_RESULT',
              messageId: `r${++id}`,
              toolCallId: tc,
              content: c.result,
              role: 'tool',
            });
          return q;
        });
        const merged: AgentEvent[] = [];
        let k = 0;
        for (let live = queues.filter((q) => q.length); live.length; live = queues.filter((q) => q.length)) {
          merged.push(live[s.schedule[k++ % s.schedule.length]! % live.length]!.shift()!);
        }
        // An abort inside the batch cuts it anywhere.
        const keep = midway ? Math.floor(merged.length / 2) : merged.length;
        for (const e of merged.slice(0, keep)) push(e);
      } else if (s.kind === 'annotate') {
        const messageId = parent ?? 'no-message';
        push({
          type: 'CUSTOM',
          name: CUSTOM_EVENTS[s.what],
          value:
            s.what === 'references'
              ? { messageId, issues: [{ number: id, title: `Issue ${id}`, status: 'OPEN' }] }
              : { messageId, suggestions: [`Next ${id}`] },
        });
      } else {
        push({ type: 'CUSTOM', name: s.name, value: s.value });
      }
      if (midway) break;
    }
    switch (ending) {
      case 'success':
        push({ type: 'RUN_FINISHED', threadId: 'thread', runId, outcome: { type: 'success' } });
        break;
      case 'interrupt':
        push({
          type: 'RUN_FINISHED',
          threadId: 'thread',
          runId,
          outcome: {
            type: 'interrupt',
            interrupts: [
              { id: `i${++id}`, reason: 'tool_approval', toolCallId: 'x', expiresAt: '2030-01-01T00:00:00Z' },
              {
                id: `i${++id}`,
                reason: 'user_question',
                toolCallId: 'y',
                message: 'Which one?',
                expiresAt: '2030-01-01T00:00:00Z',
                metadata: { requestedSchema: { type: 'object', properties: { n: { type: 'integer' } } } },
              },
            ],
          },
        });
        break;
      case 'cancelled':
      case 'abort-midway':
        // What the server records when the client goes away.
        push({ type: 'RUN_FINISHED', threadId: 'thread', runId, outcome: { type: 'cancelled' } });
        break;
      case 'error':
        push({ type: 'RUN_ERROR', code: 'MODEL_ERROR', message: 'boom' });
        break;
      case 'still-running':
        break; // what is open was flushed as incomplete rows (drain), nothing else
    }
  });
  return { events, times };
}

/** Simulates the table: inserts and in-place updates keyed by seq, read back in seq order. */
function store(ops: WriteOp[]): StoredEvent[] {
  const table = new Map<number, StoredEvent>();
  for (const op of ops) {
    if (op.kind === 'insert') {
      expect(table.has(op.seq)).toBe(false);
    } else {
      expect(table.has(op.seq)).toBe(true);
    }
    // Stored payloads go through JSON and the stored schema, like rows in the database.
    table.set(op.seq, StoredEventSchema.parse(JSON.parse(JSON.stringify(op.event))));
  }
  return [...table.entries()].sort((a, b) => a[0] - b[0]).map(([, e]) => e);
}

describe('replay(compact(stream)) equals the live fold of the stream', () => {
  it('holds for generated streams, including aborted and failed runs', () => {
    let withAnswers = 0;
    fc.assert(
      fc.property(fc.array(run, { minLength: 1, maxLength: 4 }), fc.integer({ min: 1, max: 1500 }), (runs, flushMs) => {
        const { events, times } = build(runs);
        for (const e of events) AgentEventSchema.parse(e);
        let now = 0;
        const compactor = new Compactor(0, flushMs, () => now);
        const ops: WriteOp[] = [];
        let batch: WriteOp[] = [];
        events.forEach((e, i) => {
          now = times[i]!;
          batch.push(...compactor.push(e));
          // The recorder writes in batches; coalescing must not change the result.
          if (i % 3 === 0) {
            ops.push(...coalesce(batch));
            batch = [];
          }
        });
        ops.push(...coalesce([...batch, ...compactor.drain()]));
        const live = foldEvents(events, emptyView('thread'));
        const replayed = foldEvents(expand(store(ops)), emptyView('thread'));
        expect(replayed).toEqual(live);
        if (Object.keys(live.answers ?? {}).length) withAnswers++;
      }),
      { numRuns: 400 },
    );
    // The streams did include answered questions (so the property covers them).
    expect(withAnswers).toBeGreaterThan(10);
  });

  it('writes rows per message or tool call, not per token', () => {
    const chunks = Array.from({ length: 2000 }, (_, i) => `t${i} `);
    const events: AgentEvent[] = [
      { type: 'RUN_STARTED', threadId: 'th', runId: 'r' },
      { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' },
      ...chunks.map((delta) => ({ type: 'TEXT_MESSAGE_CONTENT' as const, messageId: 'm', delta })),
      { type: 'TEXT_MESSAGE_END', messageId: 'm' },
      { type: 'RUN_FINISHED', threadId: 'th', runId: 'r', outcome: { type: 'success' } },
    ];
    const c = new Compactor(0, 1000, () => 0);
    const ops = events.flatMap((e) => c.push(e));
    expect(ops).toHaveLength(3);
    expect(ops[1]!.event).toMatchObject({ type: 'TEXT_MESSAGE', content: chunks.join(''), complete: true });
  });

  it('flushes a long message at the interval and updates the same row', () => {
    let now = 0;
    const c = new Compactor(10, 1000, () => now);
    c.push({ type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant' });
    now = 500;
    expect(c.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'a' })).toEqual([]);
    now = 1001;
    const first = c.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'b' });
    expect(first).toEqual([
      { kind: 'insert', seq: 11, event: expect.objectContaining({ content: 'ab', complete: false }) },
    ]);
    now = 1500;
    expect(c.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'c' })).toEqual([]);
    expect(c.push({ type: 'TEXT_MESSAGE_END', messageId: 'm' })).toEqual([
      { kind: 'update', seq: 11, event: expect.objectContaining({ content: 'abc', complete: true }) },
    ]);
  });

  it("keeps a user message's parts with its row, not as a row of their own", () => {
    const parts = [
      { type: 'text' as const, text: 'look at this' },
      { type: 'text' as const, text: 'and this' },
    ];
    const events: AgentEvent[] = [
      { type: 'RUN_STARTED', threadId: 'th', runId: 'r' },
      { type: 'TEXT_MESSAGE_START', messageId: 'u', role: 'user' },
      { type: 'CUSTOM', name: CUSTOM_EVENTS.messageParts, value: { messageId: 'u', parts } },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'u', delta: textOfParts(parts) },
      { type: 'TEXT_MESSAGE_END', messageId: 'u' },
    ];
    const c = new Compactor(0, 1000, () => 0);
    const rows = store(events.flatMap((e) => c.push(e)));
    expect(rows.map((r) => r.type)).toEqual(['RUN_STARTED', 'TEXT_MESSAGE']);
    expect(rows[1]).toMatchObject({ type: 'TEXT_MESSAGE', role: 'user', parts, content: 'look at this\nand this' });
    expect(foldEvents(expand(rows), emptyView('th')).messages).toEqual(foldEvents(events, emptyView('th')).messages);
  });

  it('rebuilds the events after any position of a run whose user message has parts', () => {
    const parts = [
      { type: 'text' as const, text: 'first' },
      { type: 'text' as const, text: 'second' },
    ];
    const events: AgentEvent[] = [
      { type: 'RUN_STARTED', threadId: 'th', runId: 'r' },
      { type: 'TEXT_MESSAGE_START', messageId: 'u', role: 'user' },
      { type: 'CUSTOM', name: CUSTOM_EVENTS.messageParts, value: { messageId: 'u', parts } },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'u', delta: textOfParts(parts) },
      { type: 'TEXT_MESSAGE_END', messageId: 'u' },
      { type: 'TEXT_MESSAGE_START', messageId: 'a', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a', delta: 'An ' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a', delta: 'answer.' },
      { type: 'TEXT_MESSAGE_END', messageId: 'a' },
      { type: 'RUN_FINISHED', threadId: 'th', runId: 'r', outcome: { type: 'success' } },
    ];
    let pos = 0;
    const positioned = events.map((event) => ({ event, pos: (pos += eventWeight(event)) }));
    const c = new Compactor(0, 1000, () => 0);
    const rows = store(positioned.flatMap(({ event, pos: at }) => c.push(event, at)));
    const whole = foldEvents(events, emptyView('th'));
    for (const { pos: after } of [{ pos: 0 }, ...positioned]) {
      const seen = positioned.filter((p) => p.pos <= after).map((p) => p.event);
      const rest = eventsAfter(rows, after, 'th');
      expect(rest).not.toBeNull();
      expect(rest!.every((r) => r.pos > after)).toBe(true);
      const view = foldEvents([...seen, ...rest!.map((r) => r.event)], emptyView('th'));
      expect([after, view]).toEqual([after, whole]);
    }
  });

  it('replays rows stored by an older schema version', () => {
    // Version 1 rows without the `v` field (written before it existed) still parse and replay.
    const legacy = [
      { type: 'RUN_STARTED', runId: 'r', threadId: 't' },
      { type: 'TEXT_MESSAGE', messageId: 'm', role: 'user', content: 'hi', complete: true },
      { type: 'RUN_FINISHED', runId: 'r', threadId: 't' },
    ].map((p) => StoredEventSchema.parse(p));
    const view = foldEvents(expand(legacy));
    expect(view.messages).toEqual([{ id: 'm', role: 'user', content: 'hi', runId: 'r' }]);
    expect(view.runs[0]!.status).toBe('completed');
  });
});
