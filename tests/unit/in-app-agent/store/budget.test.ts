// The panel's store and budgets: a run's budget event at 80 % shows the warning and says it in the
// live region once per budget and window (also after a reload, from browser storage); a refusal
// with BUDGET_EXCEEDED shows the server's sentence, offers no Retry, and puts the message back.
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentStore } from '@/features/in-app-agent/components/agent-store';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import {
  errorResponse,
  finished,
  makeStore,
  MemoryStorage,
  PROJECT,
  ScriptedStream,
  settle,
  streamResponse,
  userTurn,
  type Harness,
} from './harness';

const T = 'conv_budget_1';
const stores: AgentStore[] = [];
afterEach(() => {
  for (const store of stores.splice(0)) store.unmount();
});

function harness(local = new MemoryStorage()): Harness {
  const h = makeStore({ local });
  stores.push(h.store);
  h.server.conversations.set(T, {
    view: foldEvents([...userTurn(T, 'run_0', 'u0', 'hi'), finished(T, 'run_0')], emptyView()),
    liveRunId: null,
  });
  h.local.setItem(`in-app-agent:u:user-a:${PROJECT}:conversation`, T);
  h.local.setItem('in-app-agent:u:user-a:open', '1');
  h.store.mount();
  return h;
}

const budgetEvent = (spent: number, endsAt = '2030-01-02T00:00:00Z') => ({
  type: 'CUSTOM' as const,
  name: CUSTOM_EVENTS.budget,
  value: { budgets: [{ scope: 'MEMBER_DAY', unit: 'TOKENS', amount: 1000, spent, endsAt }] },
});

async function answer(h: Harness, runId: string, spent: number, endsAt?: string): Promise<void> {
  const stream = new ScriptedStream();
  h.server.onStart(() => streamResponse(stream, runId, T));
  h.store.send(`question ${runId}`);
  await settle();
  stream.emit(...userTurn(T, runId, `u-${runId}`, `question ${runId}`), budgetEvent(spent, endsAt), finished(T, runId));
  stream.close();
  await settle();
}

const WARNING = 'Your daily assistant budget in this project is 85 % used (850 tokens of 1,000 tokens).';

describe('agent store: budgets', () => {
  it('warns once per budget and window at 80 %, also across a reload', async () => {
    const h = harness();
    await settle();
    await answer(h, 'run_1', 500);
    expect(h.store.getSnapshot().budgetWarning).toBeNull();
    await answer(h, 'run_2', 850);
    const state = h.store.getSnapshot();
    expect(state.budgetWarning).toContain(WARNING);
    expect(state.announcements.map((a) => a.text)).toContainEqual(expect.stringContaining(WARNING));
    await answer(h, 'run_3', 950);
    // The same window again: nothing more is said.
    expect(h.store.getSnapshot().announcements.filter((a) => a.text.includes('% used'))).toHaveLength(1);

    // A reload in the same window: not again. The next window: again.
    h.store.unmount();
    const again = harness(h.local);
    await settle();
    await answer(again, 'run_4', 990);
    expect(again.store.getSnapshot().budgetWarning).toBeNull();
    await answer(again, 'run_5', 900, '2030-01-03T00:00:00Z');
    expect(again.store.getSnapshot().budgetWarning).toContain('90 % used');
  });

  it('shows a budget refusal in its own words, without Retry, and keeps the message', async () => {
    const h = harness();
    await settle();
    const sentence =
      'You have used your daily assistant budget in this project (1,000 tokens). It renews at 00:00 UTC; until then the assistant cannot start new answers for you here. A project admin can change it in Settings, Budgets.';
    h.server.onStart(() => errorResponse(429, 'BUDGET_EXCEEDED', sentence));
    h.store.send('one more question');
    await settle();
    const state = h.store.getSnapshot();
    expect(state.requestError).toEqual({ code: 'BUDGET_EXCEEDED', message: sentence, retryable: false });
    expect(state.draft).toBe('one more question');
    expect(state.connection).toBe('idle');
  });
});
