// A conversation view cut and joined by run: the pieces the panel puts together when earlier pages
// load and when a turn gets a new version.
import { describe, expect, it } from 'vitest';
import {
  addVersion,
  joinViews,
  lastTurnRunId,
  turnUsage,
  viewBefore,
  viewFrom,
} from '@/features/in-app-agent/components/view-pages';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent } from '@/features/in-app-agent/schema';

const T = 'conv_pages';

function turn(runId: string, text: string, withCall = false): AgentEvent[] {
  return [
    { type: 'RUN_STARTED', threadId: T, runId },
    { type: 'TEXT_MESSAGE_START', messageId: `u-${runId}`, role: 'user' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: `u-${runId}`, delta: text },
    { type: 'TEXT_MESSAGE_END', messageId: `u-${runId}` },
    ...(withCall
      ? ([
          {
            type: 'TOOL_CALL_START',
            toolCallId: `call-${runId}`,
            toolCallName: 'close_issue',
            parentMessageId: `a-${runId}`,
          },
          { type: 'TOOL_CALL_END', toolCallId: `call-${runId}` },
          {
            type: 'CUSTOM',
            name: 'in-app-agent.approval-decided',
            value: { toolCallId: `call-${runId}`, decision: 'approved' },
          },
        ] as AgentEvent[])
      : []),
    { type: 'RUN_FINISHED', threadId: T, runId, outcome: { type: 'success' } },
  ];
}

const view = (...turns: AgentEvent[][]) => foldEvents(turns.flat(), emptyView(T));
const runs = (v: ReturnType<typeof view>) => v.runs.map((r) => r.runId);

describe('view pages', () => {
  it('cuts a view at a run, with the messages, decisions and versions of each side', () => {
    const v = view(turn('r1', 'one', true), turn('r2', 'two'), turn('r3', 'three'));
    v.versions = { r2: { index: 2, count: 2, runIds: ['r0', 'r2'] } };
    const before = viewBefore(v, 'r2');
    const from = viewFrom(v, 'r2');
    expect(runs(before)).toEqual(['r1']);
    expect(before.messages.map((m) => m.id)).toEqual(['u-r1', 'a-r1']);
    expect(Object.keys(before.decisions)).toEqual(['call-r1']);
    expect(before.versions).toBeUndefined();
    expect(runs(from)).toEqual(['r2', 'r3']);
    expect(from.decisions).toEqual({});
    expect(from.versions).toEqual(v.versions);
    expect(runs(viewFrom(v, 'nope'))).toEqual([]);
    expect(runs(viewBefore(v, 'nope'))).toEqual(['r1', 'r2', 'r3']);
  });

  it('joins an earlier page before a later one, keeping a run both hold once (the later copy)', () => {
    const earlier = view(turn('r1', 'one'), turn('r2', 'two (old copy)'));
    const later = view(turn('r2', 'two'), turn('r3', 'three'));
    const joined = joinViews(earlier, later);
    expect(runs(joined)).toEqual(['r1', 'r2', 'r3']);
    expect(joined.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['one', 'two', 'three']);
    expect(lastTurnRunId(joined)).toBe('r3');
  });

  it('counts a new version as the last of its turn, and drops the replaced one from the map', () => {
    expect(addVersion(undefined, 'r2', 'r2b')).toEqual({ r2b: { index: 2, count: 2, runIds: ['r2', 'r2b'] } });
    const two = {
      r2b: { index: 2, count: 2, runIds: ['r2', 'r2b'] },
      r1: { index: 1, count: 2, runIds: ['r1', 'r1b'] },
    };
    expect(addVersion(two, 'r2b', 'r2c')).toEqual({
      r1: two.r1,
      r2c: { index: 3, count: 3, runIds: ['r2', 'r2b', 'r2c'] },
    });
  });

  it("marks a turn's usage as an estimate when one of its runs was estimated (stopped midway)", () => {
    const finished = (events: AgentEvent[], usage: Record<string, unknown>) =>
      events.map((e) => (e.type === 'RUN_FINISHED' ? ({ ...e, usage: [usage] } as AgentEvent) : e));
    const v = view(
      finished(turn('r1', 'one'), { inputTokens: 10, outputTokens: 5 }),
      finished(turn('r2', 'two'), { inputTokens: 20, outputTokens: 7, estimated: true }),
    );
    expect(turnUsage(v).get('r1')).toEqual({ inputTokens: 10, outputTokens: 5 });
    expect(turnUsage(v).get('r2')).toEqual({ inputTokens: 20, outputTokens: 7, estimated: true });
  });
});
