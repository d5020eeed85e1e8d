// The panel's store and the versions of a turn (edit the last message, regenerate the last answer,
// switch between versions) and the pages of a long conversation (show earlier messages), against a
// scripted agent server.
import { afterEach, describe, expect, it } from 'vitest';
import { canReviseLastTurn, type AgentStore } from '@/features/in-app-agent/components/agent-store';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent, ConversationView } from '@/features/in-app-agent/schema';
import {
  PROJECT,
  ScriptedStream,
  errorResponse,
  interruptedTurn,
  makeStore,
  settle,
  streamResponse,
  userTurn,
  type Harness,
} from './harness';

const T = 'conv_versions_1';
const stores: AgentStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.unmount();
});

function harness(): Harness {
  const h = makeStore();
  stores.push(h.store);
  return h;
}

/** One whole turn: the question, the answer, the end. */
function turn(runId: string, question: string, answer: string): AgentEvent[] {
  return [
    ...userTurn(T, runId, `u-${runId}`, question),
    { type: 'TEXT_MESSAGE_START', messageId: `a-${runId}`, role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: `a-${runId}`, delta: answer },
    { type: 'TEXT_MESSAGE_END', messageId: `a-${runId}` },
    {
      type: 'RUN_FINISHED',
      threadId: T,
      runId,
      outcome: { type: 'success' },
      usage: [{ inputTokens: 1200, outputTokens: 30 }],
    },
  ];
}

function viewOf(...turns: AgentEvent[][]): ConversationView {
  return foldEvents(turns.flat(), emptyView(T));
}

async function open(h: Harness, view: ConversationView, olderBefore: string | null = null): Promise<void> {
  h.server.conversations.set(T, { view, liveRunId: null, olderBefore });
  h.local.setItem(`in-app-agent:u:user-a:${PROJECT}:conversation`, T);
  h.local.setItem('in-app-agent:u:user-a:open', '1');
  h.store.mount();
  await settle();
}

const texts = (view: ConversationView) => view.messages.map((m) => `${m.role}:${m.content}`);

describe('agent store: edit and regenerate', () => {
  it('an edit asks the newest turn again with the new text: the turn is replaced in place and counted 2 / 2', async () => {
    const h = harness();
    await open(h, viewOf(turn('run_1', 'list open issues', 'Three open.'), turn('run_2', 'hello', 'Hi there.')));
    expect(canReviseLastTurn(h.store.getSnapshot(), h.clock.now())).toBe(true);

    const stream = new ScriptedStream();
    h.server.onStart(() => streamResponse(stream, 'run_3', T));
    h.store.editLastMessage('  list closed issues ');
    // The replaced turn leaves the view at once; the edited text waits as the pending message.
    expect(texts(h.store.getSnapshot().view)).toEqual(['user:list open issues', 'assistant:Three open.']);
    expect(h.store.getSnapshot().pendingUserMessage).toBe('list closed issues');
    await settle();
    const body = h.server.of('start')[0]!.body!;
    expect(body.forwardedProps).toMatchObject({ version: { of: 'run_2' } });
    expect(body.messages).toEqual([expect.objectContaining({ role: 'user', content: 'list closed issues' })]);
    expect(canReviseLastTurn(h.store.getSnapshot(), h.clock.now())).toBe(false);

    stream.emit(...turn('run_3', 'list closed issues', 'One closed.'));
    stream.close();
    await settle();
    const state = h.store.getSnapshot();
    expect(state.connection).toBe('idle');
    expect(state.pendingUserMessage).toBeNull();
    expect(texts(state.view)).toEqual([
      'user:list open issues',
      'assistant:Three open.',
      'user:list closed issues',
      'assistant:One closed.',
    ]);
    expect(state.view.versions).toEqual({ run_3: { index: 2, count: 2, runIds: ['run_2', 'run_3'] } });
    expect(state.view.runs.at(-1)?.usage).toMatchObject({ inputTokens: 1200, outputTokens: 30 });
  });

  it('a regeneration sends no message (the server asks the turn again) and adds a third version to two', async () => {
    const h = harness();
    const view = viewOf(turn('run_2b', 'hello', 'Hi again.'));
    view.versions = { run_2b: { index: 2, count: 2, runIds: ['run_2', 'run_2b'] } };
    await open(h, view);
    const stream = new ScriptedStream();
    h.server.onStart(() => streamResponse(stream, 'run_2c', T));
    h.store.regenerate();
    expect(h.store.getSnapshot().pendingUserMessage).toBe('hello');
    await settle();
    const body = h.server.of('start')[0]!.body!;
    expect(body.messages).toEqual([]);
    expect(body.forwardedProps).toMatchObject({ version: { of: 'run_2b' } });
    stream.emit(...userTurn(T, 'run_2c', 'u-run_2c', 'hello'));
    await settle();
    // Counted as soon as the run started, while it answers.
    expect(h.store.getSnapshot().view.versions?.run_2c).toEqual({
      index: 3,
      count: 3,
      runIds: ['run_2', 'run_2b', 'run_2c'],
    });
    stream.emit(...turn('run_2c', 'hello', 'Hello!').slice(4));
    stream.close();
    await settle();
    expect(texts(h.store.getSnapshot().view)).toEqual(['user:hello', 'assistant:Hello!']);
  });

  it('a refused new version shows the turn again; Retry asks for the version again, not a new message', async () => {
    const h = harness();
    const before = viewOf(turn('run_1', 'hello', 'Hi.'));
    await open(h, before);
    h.server.onStart(() => errorResponse(429, 'RATE_LIMITED', 'Too many requests. Try again in 12 s.'));
    h.store.editLastMessage('hello there');
    await settle();
    let state = h.store.getSnapshot();
    expect(state.connection).toBe('idle');
    expect(texts(state.view)).toEqual(['user:hello', 'assistant:Hi.']);
    expect(state.pendingUserMessage).toBeNull();
    expect(state.requestError).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
    // The edit is not put into the input as a new message.
    expect(state.draft).toBe('');

    const stream = new ScriptedStream();
    h.server.onStart(() => streamResponse(stream, 'run_2', T));
    h.store.retry();
    await settle();
    const retried = h.server.of('start')[1]!.body!;
    expect(retried.forwardedProps).toMatchObject({ version: { of: 'run_1' } });
    expect(retried.messages).toEqual([expect.objectContaining({ content: 'hello there' })]);
    stream.emit(...turn('run_2', 'hello there', 'Hi!'));
    stream.close();
    await settle();
    state = h.store.getSnapshot();
    expect(texts(state.view)).toEqual(['user:hello there', 'assistant:Hi!']);
    expect(state.requestError).toBeNull();
  });

  it('Retry after a failed answer asks the turn again in place: one question, the failure kept as version 1', async () => {
    const h = harness();
    const failed: AgentEvent[] = [
      ...userTurn(T, 'run_2', 'u-run_2', 'summarize the project'),
      { type: 'TEXT_MESSAGE_START', messageId: 'a-run_2', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_2', delta: 'Half an ans' },
      { type: 'RUN_ERROR', code: 'MODEL_UNAVAILABLE', message: 'The model is not reachable right now.' },
    ];
    // As after a reload: this tab never sent the message itself.
    await open(h, viewOf(turn('run_1', 'hello', 'Hi.'), failed));
    expect(h.store.canRetry).toBe(true);
    const stream = new ScriptedStream();
    h.server.onStart(() => streamResponse(stream, 'run_3', T));
    h.store.retry();
    await settle();
    const body = h.server.of('start')[0]!.body!;
    expect(body.forwardedProps).toMatchObject({ version: { of: 'run_2' } });
    // A regeneration: the server asks the turn's own message again; nothing new is sent.
    expect(body.messages).toEqual([]);
    expect(texts(h.store.getSnapshot().view)).toEqual(['user:hello', 'assistant:Hi.']);
    stream.emit(...turn('run_3', 'summarize the project', 'Two open issues.'));
    stream.close();
    await settle();
    const state = h.store.getSnapshot();
    expect(texts(state.view)).toEqual([
      'user:hello',
      'assistant:Hi.',
      'user:summarize the project',
      'assistant:Two open issues.',
    ]);
    expect(state.view.versions?.run_3).toMatchObject({ index: 2, count: 2, runIds: ['run_2', 'run_3'] });
    expect(h.store.canRetry).toBe(false);
  });

  it('Retry of a failed answer after approvals asks the whole turn again (the question once)', async () => {
    const h = harness();
    const expiresAt = new Date(h.clock.now() + 60_000).toISOString();
    const resumed: AgentEvent[] = [
      { type: 'RUN_STARTED', threadId: T, runId: 'run_2', parentRunId: 'run_1' },
      { type: 'RUN_ERROR', code: 'MODEL_TIMEOUT', message: 'The model stopped responding.' },
    ];
    await open(h, viewOf(interruptedTurn(T, 'run_1', expiresAt), resumed));
    h.server.onStart(() => streamResponse(new ScriptedStream(), 'run_3', T));
    h.store.retry();
    await settle();
    expect(h.server.of('start')[0]!.body!.forwardedProps).toMatchObject({ version: { of: 'run_1' } });
  });

  it('is not offered while an approval waits or an answer runs, and does nothing then', async () => {
    const h = harness();
    const expiresAt = new Date(h.clock.now() + 60_000).toISOString();
    await open(h, foldEvents(interruptedTurn(T, 'run_1', expiresAt), emptyView(T)));
    expect(canReviseLastTurn(h.store.getSnapshot(), h.clock.now())).toBe(false);
    h.store.regenerate();
    h.store.editLastMessage('close issue 3');
    await settle();
    expect(h.server.of('start')).toHaveLength(0);
    // Once the approval expired, the turn may be asked again.
    expect(canReviseLastTurn(h.store.getSnapshot(), h.clock.now() + 61_000)).toBe(true);
  });
});

describe('agent store: versions and earlier messages', () => {
  it('shows earlier messages before the shown ones, and a quiet re-check keeps them', async () => {
    const h = harness();
    const newest = viewOf(turn('run_3', 'third', 'C'), turn('run_4', 'fourth', 'D'));
    await open(h, newest, 'run_3');
    expect(h.store.getSnapshot().olderBefore).toBe('run_3');
    const older = viewOf(turn('run_1', 'first', 'A'), turn('run_2', 'second', 'B'));
    h.server.olderPages.set(`${T} run_3`, { view: older, olderBefore: null });
    await h.store.loadOlder();
    let state = h.store.getSnapshot();
    expect(h.server.pageCalls).toEqual(['older run_3']);
    const questions = state.view.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(questions).toEqual(['first', 'second', 'third', 'fourth']);
    expect(state.view.runs.map((r) => r.runId)).toEqual(['run_1', 'run_2', 'run_3', 'run_4']);
    expect(state).toMatchObject({ olderBefore: null, loadingOlder: false, olderError: null });
    expect(state.announcements.at(-1)?.text).toBe('4 earlier messages loaded.');

    // The tab is shown again: the server's newest page is the same, so nothing is dropped.
    h.store.checkLiveRun();
    await settle();
    state = h.store.getSnapshot();
    expect(state.view.runs.map((r) => r.runId)).toEqual(['run_1', 'run_2', 'run_3', 'run_4']);
  });

  it('says when the earlier messages could not be loaded, and keeps the button', async () => {
    const h = harness();
    await open(h, viewOf(turn('run_2', 'second', 'B')), 'run_2');
    await h.store.loadOlder();
    expect(h.store.getSnapshot()).toMatchObject({
      olderBefore: 'run_2',
      olderError: 'Could not load earlier messages.',
    });
    expect(h.store.getSnapshot().view.runs).toHaveLength(1);
  });

  it('switching to another version keeps what comes before the turn and shows the chosen branch', async () => {
    const h = harness();
    const shown = viewOf(turn('run_2', 'second', 'B'), turn('run_3b', 'third, edited', 'C2'));
    shown.versions = { run_3b: { index: 2, count: 2, runIds: ['run_3', 'run_3b'] } };
    await open(h, shown, 'run_2');
    h.server.olderPages.set(`${T} run_2`, { view: viewOf(turn('run_1', 'first', 'A')), olderBefore: null });
    await h.store.loadOlder();
    // The server's newest page of the new path (one run per page here): the first version, and
    // the answer that followed it then.
    const branch = viewOf(turn('run_3', 'third', 'C'), turn('run_5', 'fifth', 'E'));
    branch.versions = { run_3: { index: 1, count: 2, runIds: ['run_3', 'run_3b'] } };
    h.server.versionPages.set('run_3', { view: branch, olderBefore: 'run_3' });
    await h.store.selectVersion('run_3b', 'run_3');
    const state = h.store.getSnapshot();
    expect(h.server.pageCalls).toEqual(['older run_2', 'select run_3']);
    expect(texts(state.view)).toEqual([
      'user:first',
      'assistant:A',
      'user:second',
      'assistant:B',
      'user:third',
      'assistant:C',
      'user:fifth',
      'assistant:E',
    ]);
    expect(state.view.versions).toEqual({ run_3: { index: 1, count: 2, runIds: ['run_3', 'run_3b'] } });
    expect(state.olderBefore).toBeNull();
    expect(state.switchingVersion).toBe(false);
    expect(state.announcements.at(-1)?.text).toBe('Showing version 1 of 2.');
  });

  it('switching a turn older than the newest page loads pages back until the turn is in', async () => {
    const h = harness();
    const shown = viewOf(
      turn('run_1b', 'first, edited', 'A2'),
      turn('run_2', 'second', 'B'),
      turn('run_3', 'third', 'C'),
    );
    shown.versions = { run_1b: { index: 2, count: 2, runIds: ['run_1', 'run_1b'] } };
    await open(h, shown);
    const newestOfBranch = viewOf(turn('run_4', 'fourth', 'D'));
    h.server.versionPages.set('run_1', { view: newestOfBranch, olderBefore: 'run_4' });
    const older = viewOf(turn('run_1', 'first', 'A'));
    older.versions = { run_1: { index: 1, count: 2, runIds: ['run_1', 'run_1b'] } };
    h.server.olderPages.set(`${T} run_4`, { view: older, olderBefore: null });
    await h.store.selectVersion('run_1b', 'run_1');
    const state = h.store.getSnapshot();
    expect(h.server.pageCalls).toEqual(['select run_1', 'older run_4']);
    expect(texts(state.view)).toEqual(['user:first', 'assistant:A', 'user:fourth', 'assistant:D']);
    expect(state.olderBefore).toBeNull();
  });

  it('a version the server refuses leaves the view as it was and says why', async () => {
    const h = harness();
    const shown = viewOf(turn('run_1b', 'hello', 'Hi 2'));
    shown.versions = { run_1b: { index: 2, count: 2, runIds: ['run_1', 'run_1b'] } };
    await open(h, shown);
    await h.store.selectVersion('run_1b', 'run_1');
    const state = h.store.getSnapshot();
    expect(texts(state.view)).toEqual(['user:hello', 'assistant:Hi 2']);
    expect(state.statusNote).toBe('Could not show that version: That version cannot be shown now.');
    expect(state.switchingVersion).toBe(false);
  });
});
