import { describe, expect, it } from 'vitest';
import {
  DraftAnswerSchema,
  buildResume,
  cardState,
  checkArgsText,
  describeCall,
  diffArgs,
  formatCountdown,
  humanizeToolName,
  initialDraft,
  missingRequired,
  parseArgsText,
  readApprovalInterrupt,
  summarizeArgs,
  type ApprovalRequest,
} from '@/features/in-app-agent/components/approval';
import type { Interrupt } from '@/features/in-app-agent/schema';
import { toolInputJsonSchema } from '@/features/mcp/registry';

const future = new Date(Date.now() + 5 * 60_000).toISOString();
const past = new Date(Date.now() - 1000).toISOString();

function interrupt(over: Partial<Interrupt> = {}, meta: Record<string, unknown> = {}): Interrupt {
  return {
    id: 'int_1',
    reason: 'tool_approval',
    toolCallId: 'call_1',
    expiresAt: future,
    metadata: {
      toolName: 'create_issue',
      args: { title: 'Panel test' },
      argsFingerprint: 'fp1',
      approvalReason: 'mutating',
      why: 'Creates an issue.',
      destructive: false,
      inputSchema: toolInputJsonSchema('create_issue'),
      ...meta,
    },
    ...over,
  };
}

describe('readApprovalInterrupt', () => {
  it('reads a tool approval interrupt', () => {
    const r = readApprovalInterrupt(interrupt());
    expect(r).toMatchObject({
      interruptId: 'int_1',
      toolCallId: 'call_1',
      toolName: 'create_issue',
      reason: 'mutating',
      args: { title: 'Panel test' },
    });
  });
  it('ignores other interrupts and malformed metadata', () => {
    expect(readApprovalInterrupt(interrupt({ reason: 'other' }))).toBeNull();
    expect(readApprovalInterrupt(interrupt({ toolCallId: undefined }))).toBeNull();
    expect(readApprovalInterrupt(interrupt({}, { approvalReason: 'because' }))).toBeNull();
  });
});

describe('argument editing', () => {
  it('accepts only a JSON object', () => {
    expect(parseArgsText('{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parseArgsText('[1]').ok).toBe(false);
    expect(parseArgsText('null').ok).toBe(false);
    expect(parseArgsText('"x"').ok).toBe(false);
    const bad = parseArgsText('{"a":');
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error).toMatch(/Not valid JSON/);
  });
  it('diffs top-level keys, ignoring key order inside values', () => {
    expect(diffArgs({ a: 1, b: { x: 1, y: 2 }, c: 'k' }, { b: { y: 2, x: 1 }, a: 2, d: true })).toEqual([
      { key: 'a', kind: 'changed', before: 1, after: 2 },
      { key: 'c', kind: 'removed', before: 'k' },
      { key: 'd', kind: 'added', after: true },
    ]);
    expect(diffArgs({ a: [1, 2] }, { a: [1, 2] })).toEqual([]);
  });
  it('checks the edited arguments against the tool schema, field by field', () => {
    const schema = toolInputJsonSchema('create_issue');
    expect(checkArgsText('{"title":"ok"}', schema)).toEqual({ ok: true, value: { title: 'ok' }, errors: [] });
    const bad = checkArgsText(JSON.stringify({ title: 'x'.repeat(205), priority: 'SOON' }), schema);
    expect(bad.ok).toBe(false);
    expect(bad.errors).toEqual([
      { path: 'title', message: 'at most 200 characters (it has 205)' },
      { path: 'priority', message: 'must be one of "LOW", "MEDIUM", "HIGH", "URGENT"' },
    ]);
    expect(checkArgsText('{"title":', schema).errors[0]?.message).toMatch(/Not valid JSON/);
    // Without a schema only the JSON shape counts.
    expect(checkArgsText('{"anything":1}', undefined).ok).toBe(true);
  });
  it('lists missing required properties', () => {
    expect(missingRequired({ required: ['title', 'body'] }, { title: 'x' })).toEqual(['body']);
    expect(missingRequired(undefined, {})).toEqual([]);
  });
});

describe('wording', () => {
  it('formats countdowns', () => {
    expect(formatCountdown(65_000)).toBe('1:05');
    expect(formatCountdown(3_723_000)).toBe('1:02:03');
    expect(formatCountdown(-5)).toBe('0:00');
    expect(formatCountdown(400)).toBe('0:01');
  });
  it('humanizes tool names and summarizes arguments', () => {
    expect(humanizeToolName('create_issue')).toBe('Create issue');
    expect(humanizeToolName('getProjectSummary')).toBe('Get project summary');
    expect(summarizeArgs('{"status":"OPEN","number":3}')).toBe('status: “OPEN”, number: 3');
    expect(summarizeArgs('')).toBe('');
    expect(summarizeArgs('{not json')).toBe('{not json');
    expect(describeCall('close_issue', { number: 3 })).toBe('Close issue with number: 3.');
  });
});

describe('buildResume', () => {
  const a = readApprovalInterrupt(interrupt())!;
  const b = readApprovalInterrupt(
    interrupt(
      { id: 'int_2', toolCallId: 'call_2' },
      {
        toolName: 'close_issue',
        args: { number: 3 },
        argsFingerprint: 'fp2',
        approvalReason: 'destructive',
        destructive: true,
      },
    ),
  )!;

  it('needs an answer for every request of the batch', () => {
    const res = buildResume([a, b], { int_1: { ...initialDraft(a), decision: 'approve' } }, Date.now());
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.error).toMatch(/Close issue/);
  });

  it('sends one entry per request at once, edited args only when changed, with the fingerprint shown', () => {
    const res = buildResume(
      [a, b],
      {
        int_1: { decision: 'approve', argsText: '{"title":"Panel test edited"}', feedback: '' },
        int_2: { ...initialDraft(b), decision: 'reject', feedback: '  not this one ' },
      },
      Date.now(),
    );
    expect(res).toEqual({
      ok: true,
      resume: [
        {
          interruptId: 'int_1',
          status: 'resolved',
          payload: { approved: true, argsFingerprint: 'fp1', args: { title: 'Panel test edited' } },
        },
        {
          interruptId: 'int_2',
          status: 'resolved',
          payload: { approved: false, argsFingerprint: 'fp2', feedback: 'not this one' },
        },
      ],
    });
  });

  it('does not send unchanged args and refuses invalid JSON on approve', () => {
    const ok = buildResume([a], { int_1: { ...initialDraft(a), decision: 'approve' } }, Date.now());
    expect(ok).toEqual({
      ok: true,
      resume: [{ interruptId: 'int_1', status: 'resolved', payload: { approved: true, argsFingerprint: 'fp1' } }],
    });
    const bad = buildResume([a], { int_1: { decision: 'approve', argsText: '{', feedback: '' } }, Date.now());
    expect(bad.ok).toBe(false);
    // A rejection does not care about the edited text.
    const rej = buildResume([a], { int_1: { decision: 'reject', argsText: '{', feedback: '' } }, Date.now());
    expect(rej.ok).toBe(true);
  });

  it('refuses approving arguments the tool schema rejects, naming the field', () => {
    const res = buildResume(
      [a],
      { int_1: { decision: 'approve', argsText: '{"title":"ok","labels":"bug"}', feedback: '' } },
      Date.now(),
    );
    expect(res).toEqual({ ok: false, error: 'Arguments of “Create issue”: labels: must be a list' });
    const unknown = buildResume(
      [a],
      { int_1: { decision: 'approve', argsText: '{"title":"ok","due":"friday"}', feedback: '' } },
      Date.now(),
    );
    expect(unknown.ok).toBe(false);
    if (!unknown.ok) expect(unknown.error).toContain('due: is not an argument of this tool');
  });

  it('refuses a batch in which a request expired', () => {
    const expired: ApprovalRequest = { ...a, expiresAt: past };
    const res = buildResume([expired], { int_1: { ...initialDraft(a), decision: 'approve' } }, Date.now());
    expect(res.ok).toBe(false);
    if (!res.ok) expect(res.error).toMatch(/expired/);
  });
});

describe('always allow in this conversation', () => {
  const offered = readApprovalInterrupt(interrupt({}, { canAlwaysAllow: true }))!;
  const notOffered = readApprovalInterrupt(interrupt())!;

  it('is sent with an approval of a request that offers it, and only then', () => {
    expect([offered.canAlwaysAllow, notOffered.canAlwaysAllow]).toEqual([true, false]);
    const approve = { ...initialDraft(offered), decision: 'approve' as const, alwaysInConversation: true };
    const sent = buildResume([offered], { int_1: approve }, Date.now());
    expect(sent.ok && sent.resume[0]!.payload).toMatchObject({ approved: true, alwaysInConversation: true });
    // Not offered (a tool that always asks), or rejected: never sent.
    const notSent = buildResume([notOffered], { int_1: approve }, Date.now());
    expect(notSent.ok && notSent.resume[0]!.payload).not.toHaveProperty('alwaysInConversation');
    const rejected = buildResume([offered], { int_1: { ...approve, decision: 'reject' } }, Date.now());
    expect(rejected.ok && rejected.resume[0]!.payload).toEqual({ approved: false, argsFingerprint: 'fp1' });
  });

  it('keeps drafts stored before the choice existed readable', () => {
    expect(DraftAnswerSchema.safeParse({ decision: 'approve', argsText: '{}', feedback: '' }).success).toBe(true);
  });
});

describe('cardState', () => {
  const a = readApprovalInterrupt(interrupt())!;
  it('decided beats expired beats open', () => {
    const decided = { call_1: { toolCallId: 'call_1', decision: 'rejected' as const, feedback: 'no' } };
    expect(cardState({ ...a, expiresAt: past }, decided, Date.now(), true)).toEqual({
      kind: 'decided',
      decision: decided.call_1,
    });
    expect(cardState({ ...a, expiresAt: past }, {}, Date.now(), true)).toEqual({ kind: 'expired' });
    expect(cardState(a, {}, Date.now(), true)).toEqual({ kind: 'open' });
    expect(cardState(a, {}, Date.now(), false)).toEqual({ kind: 'unanswered' });
  });
  it('read-only, an open request of the last run is waiting; an expired one is expired', () => {
    expect(cardState(a, {}, Date.now(), false, true)).toEqual({ kind: 'waiting' });
    expect(cardState({ ...a, expiresAt: past }, {}, Date.now(), false, true)).toEqual({ kind: 'expired' });
  });
});

describe('DraftAnswerSchema', () => {
  it('accepts a stored draft and rejects junk', () => {
    expect(DraftAnswerSchema.safeParse({ decision: 'approve', argsText: '{}', feedback: '' }).success).toBe(true);
    expect(DraftAnswerSchema.safeParse({ decision: null, argsText: '{}', feedback: 'x' }).success).toBe(true);
    expect(DraftAnswerSchema.safeParse({ decision: 'maybe', argsText: '{}', feedback: '' }).success).toBe(false);
    expect(DraftAnswerSchema.safeParse({ decision: 'approve' }).success).toBe(false);
  });
});
