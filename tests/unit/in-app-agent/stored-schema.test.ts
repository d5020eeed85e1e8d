import { describe, expect, it } from 'vitest';
import { expand } from '@/features/in-app-agent/compact';
import { STORED_EVENT_VERSION } from '@/features/in-app-agent/constants';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import {
  STORED_EVENT_UPGRADES,
  StoredEventSchema,
  upgradeStoredEvent,
  type StoredEvent,
  type StoredEventUpgrade,
} from '@/features/in-app-agent/schema';

const v1Rows = [
  { v: 1, type: 'RUN_STARTED', runId: 'r', threadId: 't' },
  { v: 1, type: 'TEXT_MESSAGE', messageId: 'u', role: 'user', content: 'hi', complete: true },
  {
    v: 1,
    type: 'TOOL_CALL',
    toolCallId: 'c',
    toolCallName: 'find_issues',
    parentMessageId: 'a',
    args: '{}',
    complete: true,
  },
  { v: 1, type: 'TOOL_CALL_RESULT', messageId: 'res', toolCallId: 'c', content: '{"issues":[]}' },
  { v: 1, type: 'RUN_FINISHED', runId: 'r', threadId: 't', outcome: { type: 'success' } },
];

function read(rows: unknown[], opts?: Parameters<typeof upgradeStoredEvent>[1]): StoredEvent[] {
  return rows.map((r) => {
    const res = upgradeStoredEvent(r, opts);
    if (!res.ok) throw new Error(res.reason);
    return res.event;
  });
}

describe('stored event versions', () => {
  it('has one upgrade step for every version before the current one', () => {
    for (let n = 1; n < STORED_EVENT_VERSION; n++) expect(typeof STORED_EVENT_UPGRADES[n]).toBe('function');
    expect(
      Object.keys(STORED_EVENT_UPGRADES)
        .map(Number)
        .every((n) => n >= 1 && n < STORED_EVENT_VERSION),
    ).toBe(true);
  });

  it('reads rows of every version, and rows written before payloads carried a version, as they are', () => {
    const current = (r: object) => StoredEventSchema.parse({ ...r, v: STORED_EVENT_VERSION });
    // v1 rows come without a position (v2 only adds the optional `pos`).
    expect(read(v1Rows)).toEqual(v1Rows.map(current));
    expect(read(v1Rows).every((r) => r.pos === undefined)).toBe(true);
    const v2 = v1Rows.map((r, i) => ({ ...r, v: 2, pos: i + 1 }));
    expect(read(v2)).toEqual(v2.map(current));
    expect(read(v2).every((r) => r.type !== 'TEXT_MESSAGE' || r.parts === undefined)).toBe(true);
    // A v3 user message with its parts keeps them, and they replay with the message.
    const parts = [
      { type: 'text', text: 'first part' },
      { type: 'text', text: 'second part' },
    ];
    const v3 = { ...v1Rows[1]!, v: 3, content: 'first part\nsecond part', parts, pos: 2 };
    expect(read([v3])[0]).toEqual({ ...v3, v: STORED_EVENT_VERSION });
    const view = foldEvents(expand(read([v1Rows[0], v3])), emptyView('t'));
    expect(view.messages[0]).toMatchObject({ role: 'user', content: 'first part\nsecond part', parts });
    const legacy = v1Rows.map(({ v: _v, ...rest }) => rest);
    expect(read(legacy)).toEqual(read(v1Rows));
    // v3 adds `estimated` to a run's usage (a stopped answer's usage is partly estimated).
    const usage = [{ inputTokens: 120, outputTokens: 9, costUsd: 0.000495, estimated: true }];
    const v3End = {
      v: 3,
      pos: 9,
      type: 'RUN_FINISHED',
      runId: 'r',
      threadId: 't',
      outcome: { type: 'cancelled' },
      usage,
    };
    expect(read([v3End])[0]).toMatchObject({ v: STORED_EVENT_VERSION, usage });
    // v4: a user message's parts may hold images and files (attachments), which replay with it.
    const attached = [
      { type: 'image', attachmentId: 'att_1', mediaType: 'image/png', name: 'a.png', size: 10, width: 2, height: 1 },
      { type: 'file', attachmentId: 'att_2', mediaType: 'application/pdf', name: 'b.pdf', size: 20, pages: 3 },
      { type: 'text', text: 'look' },
    ];
    const v4 = { ...v1Rows[1]!, v: 4, content: 'look', parts: attached, pos: 2 };
    expect(read([v4])[0]).toEqual(v4);
    expect(foldEvents(expand(read([v1Rows[0], v4])), emptyView('t')).messages[0]).toMatchObject({ parts: attached });
    // A v3 row could not hold them: one that does is not a v3 row.
    expect(read([{ ...v4, v: 3 }])[0]).toEqual(v4);
    // v4 adds reference parts: an issue or member the user picked, with its id.
    const refs = [
      { type: 'text', text: 'ask #2' },
      { type: 'reference', kind: 'issue', id: '2', label: '#2' },
    ];
    const v4refs = { ...v1Rows[1]!, v: 4, content: 'ask #2', parts: refs, pos: 2 };
    expect(read([v4refs])[0]).toEqual(v4refs);
    expect(foldEvents(expand(read([v1Rows[0], v4refs])), emptyView('t')).messages[0]).toMatchObject({ parts: refs });
    const finished = read([{ ...v1Rows[4]!, usage: [{ inputTokens: 1, outputTokens: 2 }] }])[0]!;
    expect(finished).toMatchObject({ usage: [{ inputTokens: 1, outputTokens: 2 }] });
    expect(finished.type === 'RUN_FINISHED' && finished.usage?.[0]?.estimated).toBeUndefined();
  });

  it('upgrades a v1 row through every step of a simulated bump, in order, and it still replays', () => {
    const calls: string[] = [];
    const steps: Record<number, StoredEventUpgrade> = {
      // v1 -> v2: a tool was renamed.
      1: (p) => {
        calls.push(`1:${String(p.v)}`);
        return p.type === 'TOOL_CALL' && p.toolCallName === 'find_issues' ? { ...p, toolCallName: 'search_issues' } : p;
      },
      // v2 -> v3: user messages lost trailing whitespace (sees the v2 output).
      2: (p) => {
        calls.push(`2:${String(p.v)}:${String(p.toolCallName ?? '')}`);
        return p.type === 'TEXT_MESSAGE' ? { ...p, content: String(p.content).trimEnd() } : p;
      },
    };
    const rows = read([...v1Rows.slice(0, 1), { ...v1Rows[1]!, content: 'hi  ' }, ...v1Rows.slice(2)], {
      version: 3,
      steps,
    });
    expect(rows.every((r) => r.v === (3 as never))).toBe(true);
    expect(calls.filter((c) => c.startsWith('1:'))).toEqual(Array(5).fill('1:1'));
    expect(calls).toContain('2:2:search_issues');
    const view = foldEvents(expand(rows), emptyView('t'));
    expect(view.messages[0]).toMatchObject({ role: 'user', content: 'hi' });
    expect(view.messages[1]).toMatchObject({
      role: 'assistant',
      toolCalls: [{ id: 'c', name: 'search_issues', status: 'done' }],
    });
    // A row already at v2 only takes the second step.
    calls.length = 0;
    read([{ ...v1Rows[2]!, v: 2 }], { version: 3, steps });
    expect(calls).toEqual(['2:2:find_issues']);
  });

  it('explains rows it cannot read instead of throwing', () => {
    const steps = { 1: (p: Record<string, unknown>) => p };
    expect(upgradeStoredEvent({ ...v1Rows[0], v: 5 }, { version: 4, steps })).toEqual({
      ok: false,
      reason: expect.stringMatching(/newer version \(v5/),
    });
    expect(upgradeStoredEvent(v1Rows[0], { version: 3, steps })).toEqual({
      ok: false,
      reason: 'no upgrade step from v2',
    });
    expect(
      upgradeStoredEvent(v1Rows[0], {
        version: 2,
        steps: {
          1: () => {
            throw new Error('boom');
          },
        },
      }),
    ).toEqual({ ok: false, reason: 'upgrade from v1 failed: boom' });
    expect(upgradeStoredEvent({ v: 'one', type: 'RUN_STARTED' })).toEqual({
      ok: false,
      reason: expect.stringMatching(/invalid version/),
    });
    expect(upgradeStoredEvent({ v: 1, type: 'TEXT_MESSAGE', messageId: 'm' })).toEqual({
      ok: false,
      reason: expect.stringMatching(new RegExp(`does not match v${STORED_EVENT_VERSION}: role`)),
    });
    expect(upgradeStoredEvent(null)).toEqual({ ok: false, reason: 'payload is not an object' });
  });
});
