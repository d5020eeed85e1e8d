// The panel's store without a browser: runs, reattach, backoff, snapshots, the queue, Stop,
// Approve all / Reject all, other tabs and per-user storage, against a scripted agent server.
import { afterEach, describe, expect, it } from 'vitest';
import {
  CONFLICT_RETRY,
  FINISH_GRACE_MS,
  RECONNECT,
  reconnectDelay,
  type AgentStore,
} from '@/features/in-app-agent/components/agent-store';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent, ConversationView } from '@/features/in-app-agent/schema';
import {
  FakeAgentServer,
  MemoryStorage,
  PROJECT,
  START,
  ScriptedStream,
  TabBus,
  assistantText,
  errorResponse,
  finished,
  interruptedTurn,
  makeStore,
  settle,
  streamResponse,
  userTurn,
  type Harness,
} from './harness';

const T = 'conv_test_1';
const stores: AgentStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.unmount();
});

function harness(overrides: Parameters<typeof makeStore>[0] = {}): Harness {
  const h = makeStore(overrides);
  stores.push(h.store);
  return h;
}

/** A conversation the server knows, opened in the panel (as after a reload with the panel open). */
function withConversation(h: Harness, view: ConversationView, liveRunId: string | null = null): void {
  h.server.conversations.set(T, { view, liveRunId });
  h.local.setItem(`in-app-agent:u:user-a:${PROJECT}:conversation`, T);
  h.local.setItem('in-app-agent:u:user-a:open', '1');
}

function completedConversation(): ConversationView {
  return foldEvents([...userTurn(T, 'run_old', 'u_old', 'hello'), finished(T, 'run_old')], emptyView());
}

/** Starts a message in an open, loaded conversation; returns the stream the server answers with. */
async function startStreaming(h: Harness, text = 'write a long answer', runId = 'run_1'): Promise<ScriptedStream> {
  const stream = new ScriptedStream();
  h.server.onStart(() => streamResponse(stream, runId, T));
  h.store.send(text);
  await settle();
  stream.emit(...userTurn(T, runId, `u-${runId}`, text), {
    type: 'TEXT_MESSAGE_START',
    messageId: `a-${runId}`,
    role: 'assistant',
  });
  await settle();
  return stream;
}

async function openLoaded(
  h: Harness,
  view: ConversationView = completedConversation(),
  liveRunId: string | null = null,
): Promise<void> {
  withConversation(h, view, liveRunId);
  h.store.mount();
  await settle();
}

describe('agent store: runs and reattach', () => {
  it('reattaches after a dropped stream from its last position: no duplicate delta, no gap', async () => {
    const h = harness();
    await openLoaded(h);
    const first = await startStreaming(h);
    first.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_1', delta: 'The quick ' });
    const lastSeen = first.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_1', delta: 'brown ' });
    await settle();
    first.fail();
    await settle();
    expect(h.store.getSnapshot().connection).toBe('reconnecting');

    const second = new ScriptedStream(lastSeen);
    h.server.onFollow(() => streamResponse(second, 'run_1', T));
    await h.clock.advance(RECONNECT.firstDelayMs - 1);
    expect(h.server.of('follow')).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.server.of('follow').map((r) => r.url)).toEqual([
      `/api/projects/${PROJECT}/in-app-agent/runs/run_1/events?after=${lastSeen}`,
    ]);

    // A frame at or before the position is never applied twice (even if a server sent it again).
    second.emitAt(lastSeen, { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_1', delta: 'brown ' });
    second.emit(
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_1', delta: 'fox' },
      { type: 'TEXT_MESSAGE_END', messageId: 'a-run_1' },
    );
    second.emit(finished(T, 'run_1'));
    second.close();
    await settle();

    const state = h.store.getSnapshot();
    expect(assistantText(state.view)).toEqual(['The quick brown fox']);
    expect(state.view.runs.at(-1)).toMatchObject({ runId: 'run_1', status: 'completed' });
    expect(state.connection).toBe('idle');
    expect(h.server.of('cancel')).toHaveLength(0);
  });

  it('backs off between failed reattach attempts (doubling, capped), says so once, resets when connected', async () => {
    const h = harness();
    await openLoaded(h);
    const first = await startStreaming(h);
    const position = first.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_1', delta: 'partial' });
    await settle();
    first.fail();
    await settle();

    const attemptTimes: number[] = [];
    const failuresBeforeSuccess = 8;
    for (let i = 0; i < failuresBeforeSuccess; i++) {
      h.server.onFollow(() => {
        attemptTimes.push(h.clock.now() - START);
        return errorResponse(503, 'INTERNAL_ERROR');
      });
    }
    const recovered = new ScriptedStream(position);
    h.server.onFollow(() => streamResponse(recovered, 'run_1', T));
    await h.clock.advance(120_000);

    const gaps = attemptTimes.map((t, i) => t - (attemptTimes[i - 1] ?? 0));
    expect(gaps).toEqual([500, 1000, 2000, 4000, 8000, 15000, 15000, 15000]);
    expect(gaps.map((_, i) => reconnectDelay(i + 1, 1))).toEqual(gaps);
    expect(h.server.of('follow').every((r) => r.url.endsWith(`?after=${position}`))).toBe(true);
    expect(h.store.getSnapshot().announcements.filter((a) => a.text.includes('Reconnecting'))).toHaveLength(1);
    expect(h.store.getSnapshot().connection).toBe('reconnecting');

    recovered.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_1', delta: ' and more' });
    await settle();
    expect(h.store.getSnapshot()).toMatchObject({ connection: 'streaming', reconnectAttempt: 0 });
    expect(assistantText(h.store.getSnapshot().view)).toEqual(['partial and more']);
  });

  it('unmounting while a reattach waits clears its timer and never stops the run', async () => {
    const h = harness();
    await openLoaded(h);
    const stream = await startStreaming(h);
    stream.fail();
    await settle();
    expect(h.store.getSnapshot().connection).toBe('reconnecting');
    expect(h.clock.pending).toBeGreaterThan(0);
    h.store.unmount();
    expect(h.clock.pending).toBe(0);
    expect(h.bus.openEnds).toBe(0);
    await h.clock.advance(60_000);
    expect(h.server.of('follow')).toHaveLength(0);
    expect(h.server.of('cancel')).toHaveLength(0);
  });

  it('attaches to the live run of a reloaded conversation from a snapshot, replacing the view exactly', async () => {
    const h = harness();
    const before = completedConversation();
    // What the reload reads: the run so far, as stored (partial).
    const stored = foldEvents([...userTurn(T, 'run_live', 'u_live', 'write a long answer')], structuredClone(before));
    withConversation(h, stored, 'run_live');
    const live = new ScriptedStream();
    h.server.onFollow(() => streamResponse(live, 'run_live', T));
    h.store.mount();
    await settle();
    expect(h.server.of('follow').map((r) => r.url)).toEqual([
      `/api/projects/${PROJECT}/in-app-agent/runs/run_live/events`,
    ]);
    expect(h.store.getSnapshot().connection).toBe('streaming');

    const runEvents: AgentEvent[] = [
      ...userTurn(T, 'run_live', 'u_live', 'write a long answer'),
      { type: 'TEXT_MESSAGE_START', messageId: 'a_live', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a_live', delta: 'One. ' },
      { type: 'TEXT_MESSAGE_END', messageId: 'a_live' },
    ];
    // The catch-up arrives in one chunk: snapshot (no position), then the run from its start.
    live.raw(
      `data: ${JSON.stringify({ type: 'MESSAGES_SNAPSHOT', messages: [] })}\n\n` +
        `data: ${JSON.stringify({ type: 'CUSTOM', name: 'in-app-agent.snapshot', value: { view: before } })}\n\n`,
    );
    live.emit(...runEvents);
    await settle();
    const afterCatchUp = h.store.getSnapshot();
    expect(afterCatchUp.view).toEqual(foldEvents(runEvents, structuredClone(before)));
    // What was replayed is not announced again.
    expect(afterCatchUp.announcements.some((a) => a.text.startsWith('Assistant: One.'))).toBe(false);

    await h.clock.advance(1_000);
    live.emit(
      { type: 'TEXT_MESSAGE_START', messageId: 'a_live2', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a_live2', delta: 'Two.' },
      { type: 'TEXT_MESSAGE_END', messageId: 'a_live2' },
    );
    await settle();
    expect(h.store.getSnapshot().announcements.at(-1)?.text).toBe('Assistant: Two.');

    // Leaving (unmount, reload) lets go of the stream without stopping the run, and leaves nothing behind.
    h.store.unmount();
    await settle();
    expect(h.server.of('cancel')).toHaveLength(0);
    expect(h.clock.pending).toBe(0);
    expect(h.bus.openEnds).toBe(0);
  });

  it('waits for the stream to close after the terminal event (the end is stored first), with a limit', async () => {
    const h = harness();
    await openLoaded(h);
    const stream = await startStreaming(h, 'hi');
    stream.emit(finished(T, 'run_1'));
    await settle();
    expect(h.store.getSnapshot().connection).toBe('streaming');
    h.store.send('next one');
    expect(h.server.of('start')).toHaveLength(1);
    const nextStream = new ScriptedStream();
    h.server.onStart(() => streamResponse(nextStream, 'run_2', T));
    await h.clock.advance(FINISH_GRACE_MS);
    expect(h.store.getSnapshot().connection).not.toBe('idle');
    expect(h.server.of('start').at(-1)?.body).toMatchObject({ messages: [{ role: 'user', content: 'next one' }] });
  });
});

describe('agent store: queue', () => {
  it('queues messages typed while an answer streams (edit, remove), sends them one by one after the run', async () => {
    const h = harness();
    await openLoaded(h);
    const first = await startStreaming(h);
    h.store.setDraft('second');
    h.store.send();
    h.store.send('third');
    h.store.send('fourth');
    expect(h.store.getSnapshot().draft).toBe('');
    expect(h.store.getSnapshot().queue.map((q) => q.text)).toEqual(['second', 'third', 'fourth']);
    expect(h.server.of('start')).toHaveLength(1);
    expect(h.store.getSnapshot().announcements.some((a) => a.text.startsWith('Message queued'))).toBe(true);
    // Kept for a reload of this tab, under this user's key.
    expect(h.session.getItem(`in-app-agent:u:user-a:${PROJECT}:queue:${T}`)).toContain('third');

    const [second, third] = h.store.getSnapshot().queue;
    h.store.setQueuedEditing(second!.id, true);
    h.store.editQueued(second!.id, 'second, edited');
    h.store.removeQueued(third!.id);

    const secondStream = new ScriptedStream();
    h.server.onStart(() => streamResponse(secondStream, 'run_2', T));
    first.emit(finished(T, 'run_1'));
    first.close();
    await settle();
    // The head of the queue is being edited: it waits (and holds the rest).
    expect(h.server.of('start')).toHaveLength(1);
    h.store.setQueuedEditing(second!.id, false);
    await settle();
    expect(h.server.of('start')).toHaveLength(2);
    const sent = h.server.of('start')[1]!.body!;
    expect(sent.messages).toEqual([expect.objectContaining({ role: 'user', content: 'second, edited' })]);
    expect(sent).not.toHaveProperty('resume');
    expect(h.store.getSnapshot().queue.map((q) => q.text)).toEqual(['fourth']);

    const thirdStream = new ScriptedStream();
    h.server.onStart(() => streamResponse(thirdStream, 'run_3', T));
    secondStream.emit(...userTurn(T, 'run_2', 'u2', 'second, edited'), finished(T, 'run_2'));
    secondStream.close();
    await settle();
    expect(h.server.of('start').map((r) => (r.body!.messages as Array<{ content: string }>)[0]?.content)).toEqual([
      'write a long answer',
      'second, edited',
      'fourth',
    ]);
    expect(h.store.getSnapshot().queue).toEqual([]);
  });

  it('holds the queue while approvals are open; the resume carries no message; the queue goes after it', async () => {
    const h = harness();
    await openLoaded(h);
    const expiresAt = new Date(START + 10 * 60_000).toISOString();
    const first = new ScriptedStream();
    h.server.onStart(() => streamResponse(first, 'run_1', T));
    h.store.send('close issues 1 and 2');
    await settle();
    h.store.send('and then list open issues');
    first.emit(...interruptedTurn(T, 'run_1', expiresAt));
    first.close();
    await settle();
    expect(h.store.getSnapshot().connection).toBe('idle');
    expect(h.server.of('start')).toHaveLength(1);
    expect(h.store.getSnapshot().queue.map((q) => q.text)).toEqual(['and then list open issues']);

    const resumeStream = new ScriptedStream();
    h.server.onStart(() => streamResponse(resumeStream, 'run_2', T));
    h.store.answerAll('approve');
    await settle();
    const resume = h.server.of('start')[1]!.body!;
    expect(resume.messages).toEqual([]);
    expect(resume.resume).toHaveLength(2);

    const afterStream = new ScriptedStream();
    h.server.onStart(() => streamResponse(afterStream, 'run_3', T));
    resumeStream.emit(
      { type: 'RUN_STARTED', threadId: T, runId: 'run_2', parentRunId: 'run_1' },
      { type: 'CUSTOM', name: 'in-app-agent.approval-decided', value: { toolCallId: 'call_1', decision: 'approved' } },
      { type: 'CUSTOM', name: 'in-app-agent.approval-decided', value: { toolCallId: 'call_2', decision: 'approved' } },
      finished(T, 'run_2'),
    );
    resumeStream.close();
    await settle();
    expect(h.server.of('start')).toHaveLength(3);
    expect(h.server.of('start')[2]!.body).toMatchObject({ messages: [{ content: 'and then list open issues' }] });
    expect(h.server.of('start')[2]!.body).not.toHaveProperty('resume');
  });

  it('a message refused with RUN_IN_PROGRESS follows the live run (another tab) and is sent after it', async () => {
    const h = harness();
    await openLoaded(h);
    h.server.onStart(() => {
      // Another tab started a run meanwhile.
      h.server.conversations.get(T)!.liveRunId = 'run_other';
      return errorResponse(409, 'RUN_IN_PROGRESS');
    });
    const other = new ScriptedStream();
    h.server.onFollow(() => streamResponse(other, 'run_other', T));
    h.store.send('my question');
    await settle();
    expect(h.server.of('follow').map((r) => r.url)).toEqual([
      `/api/projects/${PROJECT}/in-app-agent/runs/run_other/events`,
    ]);
    expect(h.store.getSnapshot().queue.map((q) => q.text)).toEqual(['my question']);
    expect(h.store.getSnapshot().requestError).toBeNull();

    const mine = new ScriptedStream();
    h.server.onStart(() => streamResponse(mine, 'run_mine', T));
    h.server.conversations.get(T)!.liveRunId = null;
    other.emit(...userTurn(T, 'run_other', 'u_other', 'from the other tab'), finished(T, 'run_other'));
    other.close();
    await settle();
    expect(h.server.of('start').at(-1)!.body).toMatchObject({ messages: [{ content: 'my question' }] });
  });

  it('a refused message goes back into the input (never lost) and Retry sends it', async () => {
    const h = harness();
    await openLoaded(h);
    h.server.onStart(() => errorResponse(429, 'RATE_LIMITED', 'Too many requests. Try again in 12 s.'));
    h.store.send('keep me');
    await settle();
    expect(h.store.getSnapshot()).toMatchObject({
      draft: 'keep me',
      connection: 'idle',
      requestError: { code: 'RATE_LIMITED', message: 'Too many requests. Try again in 12 s.', retryable: true },
    });
    expect(h.local.getItem(`in-app-agent:u:user-a:${PROJECT}:draft:${T}`)).toBe('keep me');
    const stream = new ScriptedStream();
    h.server.onStart(() => streamResponse(stream, 'run_retry', T));
    h.store.retry();
    await settle();
    expect(h.store.getSnapshot().draft).toBe('');
    expect(h.server.of('start').at(-1)!.body).toMatchObject({ messages: [{ content: 'keep me' }] });
  });

  it('retries a message refused with RUN_IN_PROGRESS while the previous run is still closing', async () => {
    const h = harness();
    await openLoaded(h);
    h.server.onStart(() => errorResponse(409, 'RUN_IN_PROGRESS'));
    h.server.onStart(() => errorResponse(409, 'RUN_IN_PROGRESS'));
    const stream = new ScriptedStream();
    h.server.onStart(() => streamResponse(stream, 'run_1', T));
    h.store.send('hello again');
    await settle();
    expect(h.store.getSnapshot().connection).toBe('sending');
    await h.clock.advance(CONFLICT_RETRY.delayMs * 3);
    expect(h.server.of('start')).toHaveLength(3);
    expect(h.store.getSnapshot().connection).toBe('streaming');
  });
});

describe('agent store: Stop', () => {
  it('Stop calls the cancel route; the run ends with its own terminal event', async () => {
    const h = harness();
    await openLoaded(h);
    const stream = await startStreaming(h);
    stream.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_1', delta: 'Some words' });
    await settle();
    h.server.onCancel(() => new Response(JSON.stringify({ runId: 'run_1', status: 'stopping' }), { status: 202 }));
    h.store.stop();
    expect(h.store.getSnapshot().connection).toBe('stopping');
    await settle();
    expect(h.server.of('cancel')).toEqual([
      { method: 'POST', url: `/api/projects/${PROJECT}/in-app-agent/runs/run_1/cancel`, body: null },
    ]);
    // More words that were on the way still arrive, then the end.
    stream.emit({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_1', delta: ' on the way' });
    stream.emit({ type: 'RUN_FINISHED', threadId: T, runId: 'run_1', outcome: { type: 'cancelled' } });
    stream.close();
    await settle();
    const state = h.store.getSnapshot();
    expect(state.connection).toBe('idle');
    expect(state.view.runs.at(-1)?.status).toBe('cancelled');
    expect(assistantText(state.view)).toEqual(['Some words on the way']);
  });

  it('Stop keeps the queued messages: nothing is sent until the user sends or clears them (also after a reload)', async () => {
    const h = harness();
    await openLoaded(h);
    const stream = await startStreaming(h);
    h.store.send('second');
    h.store.send('third');
    h.server.onCancel(() => new Response(JSON.stringify({ runId: 'run_1', status: 'stopping' }), { status: 202 }));
    h.store.stop();
    await settle();
    stream.emit({ type: 'RUN_FINISHED', threadId: T, runId: 'run_1', outcome: { type: 'cancelled' } });
    stream.close();
    await settle();
    await h.clock.advance(10_000);
    let state = h.store.getSnapshot();
    expect(state.connection).toBe('idle');
    expect(state.queuePaused).toBe(true);
    expect(state.queue.map((q) => q.text)).toEqual(['second', 'third']);
    expect(h.server.of('start')).toHaveLength(1);
    expect(state.announcements.at(-1)?.text).toMatch(/queued messages wait until you send or clear them/);

    // A reload of the tab keeps the queue paused.
    h.store.unmount();
    const reloaded = harness({ server: h.server, local: h.local, session: h.session, clock: h.clock, bus: h.bus });
    reloaded.store.mount();
    await settle();
    expect(reloaded.store.getSnapshot()).toMatchObject({ queuePaused: true, connection: 'idle' });
    expect(h.server.of('start')).toHaveLength(1);

    // Sending the first one resumes the queue: the rest follows it in order.
    const next = new ScriptedStream();
    h.server.onStart(() => streamResponse(next, 'run_2', T));
    reloaded.store.sendQueuedNow(reloaded.store.getSnapshot().queue[0]!.id);
    await settle();
    state = reloaded.store.getSnapshot();
    expect(state.queuePaused).toBe(false);
    expect(state.queue.map((q) => q.text)).toEqual(['third']);
    const last = new ScriptedStream();
    h.server.onStart(() => streamResponse(last, 'run_3', T));
    next.emit(...userTurn(T, 'run_2', 'u2', 'second'), finished(T, 'run_2'));
    next.close();
    await settle();
    expect(h.server.of('start').map((r) => (r.body!.messages as Array<{ content: string }>)[0]?.content)).toEqual([
      'write a long answer',
      'second',
      'third',
    ]);
  });

  it('Clear all empties a queue paused by Stop; the next message goes as usual', async () => {
    const h = harness();
    await openLoaded(h);
    const stream = await startStreaming(h);
    h.store.send('second');
    h.server.onCancel(() => new Response(JSON.stringify({ runId: 'run_1', status: 'stopping' }), { status: 202 }));
    h.store.stop();
    await settle();
    stream.emit({ type: 'RUN_FINISHED', threadId: T, runId: 'run_1', outcome: { type: 'cancelled' } });
    stream.close();
    await settle();
    expect(h.store.getSnapshot().queuePaused).toBe(true);
    h.store.clearQueue();
    expect(h.store.getSnapshot()).toMatchObject({ queue: [], queuePaused: false });
    expect(h.session.getItem(`in-app-agent:u:user-a:${PROJECT}:queue-paused:${T}`)).toBeNull();
    h.server.onStart(() => streamResponse(new ScriptedStream(), 'run_2', T));
    h.store.send('a new question');
    await settle();
    expect(h.server.of('start')).toHaveLength(2);
  });

  it('Stop pressed before the run id is known is sent as soon as the server answers', async () => {
    const h = harness();
    await openLoaded(h);
    let answer: (response: Response) => void = () => undefined;
    h.server.onStart(() => new Promise<Response>((resolve) => (answer = resolve)));
    h.store.send('write a long answer');
    await settle();
    h.store.stop();
    await settle();
    expect(h.server.of('cancel')).toHaveLength(0);
    h.server.onCancel(() => new Response(JSON.stringify({ status: 'stopping' }), { status: 202 }));
    const stream = new ScriptedStream();
    answer(streamResponse(stream, 'run_1', T));
    await settle();
    expect(h.server.of('cancel').map((r) => r.url)).toEqual([
      `/api/projects/${PROJECT}/in-app-agent/runs/run_1/cancel`,
    ]);
  });
});

describe('agent store: the product behind the panel', () => {
  it('tells the host which objects a tool changed, live only (not when catching up on a snapshot)', async () => {
    const changes: unknown[] = [];
    const h = harness({ onProductChange: (objects) => changes.push(objects) });
    await openLoaded(h);
    const stream = await startStreaming(h, 'close issue 3');
    stream.emit(
      { type: 'TOOL_CALL_START', toolCallId: 'call_1', toolCallName: 'close_issue', parentMessageId: 'a-run_1' },
      { type: 'TOOL_CALL_END', toolCallId: 'call_1' },
      { type: 'TOOL_CALL_RESULT', messageId: 'm1', toolCallId: 'call_1', content: '{"issue":{"number":3}}' },
      {
        type: 'CUSTOM',
        name: CUSTOM_EVENTS.changed,
        value: { toolCallId: 'call_1', objects: [{ kind: 'issue', id: '3' }] },
      },
    );
    await settle();
    expect(changes).toEqual([[{ kind: 'issue', id: '3' }]]);
    // Malformed values are ignored.
    stream.emit({ type: 'CUSTOM', name: CUSTOM_EVENTS.changed, value: { objects: 'all' } });
    await settle();
    expect(changes).toHaveLength(1);
  });
});

describe('agent store: approvals', () => {
  async function interrupted(h: Harness): Promise<void> {
    await openLoaded(h);
    const stream = new ScriptedStream();
    h.server.onStart(() => streamResponse(stream, 'run_1', T));
    h.store.send('close issues 1 and 2');
    await settle();
    stream.emit(...interruptedTurn(T, 'run_1', new Date(START + 10 * 60_000).toISOString()));
    stream.close();
    await settle();
    h.server.onStart(() => streamResponse(new ScriptedStream(), 'run_2', T));
  }

  it('Approve all answers every card explicitly, one resume entry per interrupt (edited arguments kept)', async () => {
    const h = harness();
    await interrupted(h);
    h.store.setApprovalDraft('int_1', { decision: null, argsText: '{"number": 11}', feedback: '' });
    h.store.answerAll('approve');
    await settle();
    expect(h.server.of('start')[1]!.body!.resume).toEqual([
      {
        interruptId: 'int_1',
        status: 'resolved',
        payload: { approved: true, argsFingerprint: 'fp-int_1', args: { number: 11 } },
      },
      { interruptId: 'int_2', status: 'resolved', payload: { approved: true, argsFingerprint: 'fp-int_2' } },
    ]);
  });

  it('Reject all carries one note for the batch, still one entry per interrupt', async () => {
    const h = harness();
    await interrupted(h);
    h.store.answerAll('reject', '  not this week ');
    await settle();
    expect(h.server.of('start')[1]!.body!.resume).toEqual([
      {
        interruptId: 'int_1',
        status: 'resolved',
        payload: { approved: false, argsFingerprint: 'fp-int_1', feedback: 'not this week' },
      },
      {
        interruptId: 'int_2',
        status: 'resolved',
        payload: { approved: false, argsFingerprint: 'fp-int_2', feedback: 'not this week' },
      },
    ]);
  });
});

describe('agent store: other tabs', () => {
  it('a second tab follows the run another tab started, and sees approvals answered there as decided', async () => {
    const server = new FakeAgentServer();
    const local = new MemoryStorage();
    const bus = new TabBus();
    const first = harness({ server, local, bus });
    const second = harness({ server, local, bus, session: new MemoryStorage() });
    withConversation(first, completedConversation());
    first.store.mount();
    second.store.mount();
    await settle();

    const started = new ScriptedStream();
    server.onStart(() => streamResponse(started, 'run_1', T));
    const followed = new ScriptedStream();
    server.onFollow(() => streamResponse(followed, 'run_1', T));
    first.store.send('close issues 1 and 2');
    await settle();
    expect(server.of('follow').map((r) => r.url)).toEqual([`/api/projects/${PROJECT}/in-app-agent/runs/run_1/events`]);
    expect(second.store.getSnapshot()).toMatchObject({ connection: 'streaming', liveRunId: 'run_1' });

    const events = interruptedTurn(T, 'run_1', new Date(START + 10 * 60_000).toISOString());
    started.emit(...events);
    started.close();
    followed.emitUnpositioned({
      type: 'CUSTOM',
      name: 'in-app-agent.snapshot',
      value: { view: completedConversation() },
    });
    followed.emit(...events);
    followed.close();
    await settle();
    expect(second.store.getSnapshot().view).toEqual(first.store.getSnapshot().view);

    // The first tab answers; the second learns of the resume run and shows the decided cards.
    const resumeStream = new ScriptedStream();
    server.onStart(() => streamResponse(resumeStream, 'run_2', T));
    const resumeFollowed = new ScriptedStream();
    server.onFollow(() => streamResponse(resumeFollowed, 'run_2', T));
    first.store.answerAll('reject');
    await settle();
    expect(server.of('follow').at(-1)!.url).toBe(`/api/projects/${PROJECT}/in-app-agent/runs/run_2/events`);
    const decided: AgentEvent[] = [
      { type: 'RUN_STARTED', threadId: T, runId: 'run_2', parentRunId: 'run_1' },
      { type: 'CUSTOM', name: 'in-app-agent.approval-decided', value: { toolCallId: 'call_1', decision: 'rejected' } },
      { type: 'CUSTOM', name: 'in-app-agent.approval-decided', value: { toolCallId: 'call_2', decision: 'rejected' } },
      finished(T, 'run_2'),
    ];
    resumeFollowed.emitUnpositioned({
      type: 'CUSTOM',
      name: 'in-app-agent.snapshot',
      value: { view: first.store.getSnapshot().view },
    });
    resumeFollowed.emit(...decided);
    resumeFollowed.close();
    await settle();
    expect(Object.keys(second.store.getSnapshot().view.decisions).sort()).toEqual(['call_1', 'call_2']);
    expect(second.store.getSnapshot().connection).toBe('idle');
  });

  it('looks for a live run again when the tab becomes visible', async () => {
    const h = harness();
    await openLoaded(h);
    expect(h.server.of('follow')).toHaveLength(0);
    h.server.conversations.get(T)!.liveRunId = 'run_elsewhere';
    h.server.onFollow(() => streamResponse(new ScriptedStream(), 'run_elsewhere', T));
    await h.clock.advance(5_000);
    h.store.checkLiveRun();
    await settle();
    expect(h.server.of('follow').map((r) => r.url)).toEqual([
      `/api/projects/${PROJECT}/in-app-agent/runs/run_elsewhere/events`,
    ]);
  });
});

describe('agent store: storage per user', () => {
  it('keys drafts and panel state by user; the next user sees none of it; sign-out clears it everywhere', async () => {
    const local = new MemoryStorage();
    const session = new MemoryStorage();
    const bus = new TabBus();
    // Written by an older build, without a user: nobody may see it.
    local.setItem(`in-app-agent:${PROJECT}:draft:new`, 'unattributed');
    const alice = harness({ local, session, bus });
    alice.store.mount();
    alice.store.setOpen(true);
    alice.store.setWidth(500);
    alice.store.setDraft('secret plan');
    await settle();
    expect(
      local
        .keys()
        .filter((k) => k.startsWith('in-app-agent:'))
        .every((k) => k.startsWith('in-app-agent:u:user-a:')),
    ).toBe(true);
    expect(local.keys()).not.toContain(`in-app-agent:${PROJECT}:draft:new`);

    const bob = harness({ local, session, bus, userId: 'user-b' });
    bob.store.mount();
    await settle();
    expect(bob.store.getSnapshot()).toMatchObject({ draft: '', open: false, width: 420, conversationId: null });

    alice.store.signOut();
    await settle();
    expect(local.keys().filter((k) => k.startsWith('in-app-agent:'))).toEqual([]);
    expect(alice.store.getSnapshot()).toMatchObject({ signedOut: true, draft: '' });
    // The other tab heard it, and nothing is written any more.
    expect(bob.store.getSnapshot().signedOut).toBe(true);
    alice.store.setDraft('typed after sign-out');
    expect(local.keys()).toEqual([]);
  });
});
