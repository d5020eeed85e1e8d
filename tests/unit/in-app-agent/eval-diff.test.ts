// How a candidate's answer is compared with the original: tool calls paired by name with their
// argument differences, expectations, the word diff of the answers, and a case of two experiments.
import { describe, expect, it } from 'vitest';
import { answerDiff, argDiffs, checkExpectations, compareCase, toolCallDiff } from '@/features/in-app-agent/eval/diff';

describe('toolCallDiff', () => {
  it('pairs calls of the same tool in order and lists the rest as added or removed', () => {
    const diff = toolCallDiff(
      [
        { name: 'list_issues', args: { status: 'OPEN' } },
        { name: 'get_issue', args: { number: 1 } },
        { name: 'get_issue', args: { number: 2 } },
      ],
      [
        { name: 'get_issue', args: { number: 1 } },
        { name: 'search_issues', args: { query: 'x' } },
        { name: 'get_issue', args: { number: 3 } },
      ],
    );
    expect(diff).toEqual({
      matched: [
        { name: 'get_issue', args: [] },
        { name: 'get_issue', args: [{ path: 'number', original: 2, candidate: 3 }] },
      ],
      added: [{ name: 'search_issues', args: { query: 'x' } }],
      removed: [{ name: 'list_issues', args: { status: 'OPEN' } }],
    });
  });

  it('names nested and missing fields by path; key order does not matter', () => {
    expect(argDiffs({ a: { b: 1, c: [1, 2] }, d: 'x' }, { d: 'x', a: { c: [1, 2], b: 2 }, e: true })).toEqual([
      { path: 'a.b', original: 1, candidate: 2 },
      { path: 'e', original: undefined, candidate: true },
    ]);
  });
});

describe('checkExpectations', () => {
  const answer = {
    text: 'Issue #4 is OPEN.',
    calls: [
      { name: 'get_issue', args: { number: 4, verbose: true } },
      { name: 'ask_user', args: { message: 'Which one?' } },
    ],
  };
  it('checks calls (with a subset of arguments), calls not made, mentions and asking back', () => {
    const results = checkExpectations(
      [
        { kind: 'calls', tool: 'get_issue', args: { number: 4 } },
        { kind: 'calls', tool: 'get_issue', args: { number: 5 } },
        { kind: 'calls', tool: 'list_issues' },
        { kind: 'not_calls', tool: 'delete_issue' },
        { kind: 'not_calls', tool: 'get_issue' },
        { kind: 'mentions', text: 'open' },
        { kind: 'mentions', text: 'closed' },
        { kind: 'asks_back' },
      ],
      answer,
    );
    expect(results.map((r) => r.passed)).toEqual([true, false, false, true, false, true, false, true]);
    expect(results[1]!.detail).toContain('other arguments');
    expect(results[4]!.detail).toBe('get_issue was called once.');
  });
});

describe('answerDiff', () => {
  it('reads back as either answer and marks the words that changed', () => {
    const a = 'The issue #1 is open and assigned to Ana.';
    const b = 'The issue #1 is closed and assigned to Ana.';
    const diff = answerDiff(a, b);
    expect(diff).toContainEqual({ op: 'removed', text: 'open' });
    expect(diff).toContainEqual({ op: 'added', text: 'closed' });
    const side = (op: string) =>
      diff
        .filter((p) => p.op === 'same' || p.op === op)
        .map((p) => p.text)
        .join('');
    expect(side('removed')).toBe(a);
    expect(side('added')).toBe(b);
  });

  it('shows equal answers as one unchanged piece, and very long ones as replaced whole', () => {
    expect(answerDiff('same text', 'same text')).toEqual([{ op: 'same', text: 'same text' }]);
    const long = 'word '.repeat(2_000);
    expect(answerDiff(long, `${long}more`)).toEqual([
      { op: 'removed', text: long },
      { op: 'added', text: `${long}more` },
    ]);
  });
});

describe('compareCase', () => {
  const c = (o: Partial<Parameters<typeof compareCase>[0]>) => ({
    outcome: 'completed' as const,
    passed: false,
    failedExpectations: 1,
    calls: ['get_issue'],
    answer: 'x',
    ...o,
  });
  it('is better when it passes now, fails fewer expectations or no longer errors; worse the other way', () => {
    expect(compareCase(c({}), c({ passed: true, failedExpectations: 0 }))).toBe('better');
    expect(compareCase(c({ passed: true, failedExpectations: 0 }), c({}))).toBe('worse');
    expect(compareCase(c({ outcome: 'error' }), c({}))).toBe('better');
    expect(compareCase(c({ failedExpectations: 2 }), c({ failedExpectations: 1 }))).toBe('better');
    expect(compareCase(c({}), c({ calls: ['list_issues'] }))).toBe('changed');
    expect(compareCase(c({}), c({}))).toBe('same');
  });
});

describe('answerDiff blocks', () => {
  it('reads a run of changed words as one removed and one added piece', () => {
    const a = 'Issue one is open now. Bye';
    const b = 'Your role cannot read it. Bye';
    const diff = answerDiff(a, b);
    expect(diff).toEqual([
      { op: 'removed', text: 'Issue one is open now.' },
      { op: 'added', text: 'Your role cannot read it.' },
      { op: 'same', text: ' Bye' },
    ]);
  });
});
