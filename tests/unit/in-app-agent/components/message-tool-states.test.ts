// Per-message tool states are derived once per view, and a message that did not change between two
// render snapshots gets the very same arrays: its memoized bubble (compared prop by prop with
// Object.is) then does not render again while another message streams.
import { describe, expect, it } from 'vitest';
import { LiveView } from '@/features/in-app-agent/components/live-view';
import {
  NO_TOOL_STATES,
  toolStatesOf,
  type MessageToolStates,
} from '@/features/in-app-agent/components/message-tool-states';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import type { AgentEvent, ConversationView } from '@/features/in-app-agent/schema';
import { finished, interruptedTurn, userTurn } from '../store/harness';

const T = 'conv_states';
const NOW = Date.parse('2030-01-01T00:00:00Z');
const LATER = new Date(NOW + 60_000).toISOString();

/** Turn 1 asks for two approvals; turn 2 approves one with edited arguments and rejects the other. */
function decidedTurns(): AgentEvent[] {
  return [
    ...interruptedTurn(T, 'run_1', LATER),
    { type: 'RUN_STARTED', threadId: T, runId: 'run_2', parentRunId: 'run_1' },
    {
      type: 'CUSTOM',
      name: CUSTOM_EVENTS.approvalDecided,
      value: { toolCallId: 'call_1', decision: 'approved', edited: true, args: { number: 3 } },
    },
    { type: 'CUSTOM', name: CUSTOM_EVENTS.approvalDecided, value: { toolCallId: 'call_2', decision: 'rejected' } },
    { type: 'TOOL_CALL_RESULT', messageId: 't1', toolCallId: 'call_1', content: '{"closed":3}', role: 'tool' },
    { type: 'TOOL_CALL_RESULT', messageId: 't2', toolCallId: 'call_2', content: '{"rejected":true}', role: 'tool' },
    finished(T, 'run_2'),
  ];
}

function liveView(events: AgentEvent[]): LiveView {
  const live = new LiveView();
  for (const event of events) live.apply(event);
  return live;
}

const assistantIds = (view: ConversationView) => view.messages.filter((m) => m.role === 'assistant').map((m) => m.id);

function expectSame(a: MessageToolStates | undefined, b: MessageToolStates | undefined): void {
  expect(a).toBeDefined();
  expect(b).toBe(a);
  expect(b?.statuses).toBe(a?.statuses);
  expect(b?.edited).toBe(a?.edited);
  expect(b?.ranWith).toBe(a?.ranWith);
}

describe('toolStatesOf', () => {
  it('gives an unchanged message the same arrays while another message streams', () => {
    const live = liveView([
      ...decidedTurns(),
      ...userTurn(T, 'run_3', 'u3', 'and now?'),
      { type: 'TEXT_MESSAGE_START', messageId: 'a3', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a3', delta: 'Hel' },
    ]);
    const first = live.snapshot();
    live.apply({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'a3', delta: 'lo' });
    const second = live.snapshot();
    const [toolMessage] = assistantIds(first);
    expect(toolMessage).toBe('a-run_1');

    // The snapshot kept the untouched message; the derived states keep their identity with it.
    expect(second).not.toBe(first);
    expect(second.messages.find((m) => m.id === toolMessage)).toBe(first.messages.find((m) => m.id === toolMessage));
    const before = toolStatesOf(first, NOW);
    const after = toolStatesOf(second, NOW);
    expectSame(before.get(toolMessage!), after.get(toolMessage!));
    expect(after.get(toolMessage!)).toEqual({
      statuses: ['done', 'rejected'],
      edited: [true, false],
      ranWith: [{ number: 3 }, undefined],
    });
    // A message without tool calls shares one empty set of states.
    expect(after.get('a3')).toBe(NO_TOOL_STATES);
    // One derivation per view (and clock).
    expect(toolStatesOf(second, NOW)).toBe(after);

    // The streaming message gains a tool call: only its own states change.
    live.apply({ type: 'TEXT_MESSAGE_END', messageId: 'a3' });
    live.apply({ type: 'TOOL_CALL_START', toolCallId: 'call_3', toolCallName: 'list_issues', parentMessageId: 'a3' });
    live.apply({ type: 'TOOL_CALL_ARGS', toolCallId: 'call_3', delta: '{}' });
    const third = live.snapshot();
    const next = toolStatesOf(third, NOW);
    expectSame(before.get(toolMessage!), next.get(toolMessage!));
    expect(next.get('a3')).not.toBe(NO_TOOL_STATES);
    expect(next.get('a3')?.statuses).toHaveLength(1);
  });

  it('gives new arrays when what a card shows changes: an approval expiring, a decision arriving', () => {
    const live = liveView(interruptedTurn(T, 'run_1', LATER));
    const view = live.snapshot();
    const id = assistantIds(view)[0]!;
    const waiting = toolStatesOf(view, NOW).get(id);
    expect(waiting?.statuses).toEqual(['awaiting-approval', 'awaiting-approval']);
    // The same view a second later: nothing changed for the cards, so nothing new.
    expectSame(waiting, toolStatesOf(view, NOW + 1000).get(id));
    // Past the expiry: the same message object, new states.
    const expired = toolStatesOf(view, Date.parse(LATER) + 1).get(id);
    expect(expired).not.toBe(waiting);
    expect(expired?.statuses).toEqual(['expired', 'expired']);

    live.apply({ type: 'RUN_STARTED', threadId: T, runId: 'run_2', parentRunId: 'run_1' });
    live.apply({
      type: 'CUSTOM',
      name: CUSTOM_EVENTS.approvalDecided,
      value: { toolCallId: 'call_1', decision: 'approved', edited: false, args: { number: 1 } },
    });
    const decided = toolStatesOf(live.snapshot(), NOW).get(id);
    expect(decided).not.toBe(waiting);
    expect(decided?.statuses[0]).toBe('approved');
    expect(decided?.ranWith[0]).toEqual({ number: 1 });
  });
});
