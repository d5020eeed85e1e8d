/**
 * How a candidate's answer compares (isomorphic, pure): its tool calls against the original's
 * (name and argument differences), against the case's expectations, its text beside the
 * original's (a word diff), and one case of two experiments against each other.
 */
import {
  EVAL_LIMITS,
  type AnswerDiff,
  type ComparisonVerdict,
  type EvalExpectation,
  type ExpectationResult,
  type ToolCallDiff,
} from './schema';

type Call = { name: string; args: Record<string, unknown> };

/** A value as canonical JSON (object keys sorted), so equal values compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object')
    return Object.fromEntries(
      Object.keys(value as Record<string, unknown>)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  return value;
}

export const sameArgs = (a: unknown, b: unknown) => canonicalJson(a ?? {}) === canonicalJson(b ?? {});

/** The fields whose values differ, by path (`a.b`), top-level and nested objects. */
export function argDiffs(
  original: Record<string, unknown>,
  candidate: Record<string, unknown>,
  prefix = '',
): Array<{ path: string; original: unknown; candidate: unknown }> {
  const out: Array<{ path: string; original: unknown; candidate: unknown }> = [];
  const keys = [...new Set([...Object.keys(original), ...Object.keys(candidate)])].sort();
  for (const k of keys) {
    const a = original[k];
    const b = candidate[k];
    const path = prefix ? `${prefix}.${k}` : k;
    const isObj = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
    if (isObj(a) && isObj(b)) out.push(...argDiffs(a as Record<string, unknown>, b as Record<string, unknown>, path));
    else if (canonicalJson(a) !== canonicalJson(b)) out.push({ path, original: a, candidate: b });
  }
  return out;
}

/**
 * The candidate's calls against the original's: calls of the same tool are paired in order (the
 * first unpaired one of that name), with their argument differences; the rest were added or removed.
 */
export function toolCallDiff(original: readonly Call[], candidate: readonly Call[]): ToolCallDiff {
  const unpaired = original.map((c, i) => ({ ...c, i }));
  const diff: ToolCallDiff = { matched: [], added: [], removed: [] };
  for (const c of candidate) {
    const at = unpaired.findIndex((o) => o.name === c.name);
    if (at < 0) {
      diff.added.push({ name: c.name, args: c.args });
      continue;
    }
    const [o] = unpaired.splice(at, 1);
    diff.matched.push({ name: c.name, args: argDiffs(o!.args, c.args) });
  }
  for (const o of unpaired) diff.removed.push({ name: o.name, args: o.args });
  return diff;
}

/** Whether `args` holds every field of `wanted` with an equal value. */
function hasArgs(args: Record<string, unknown>, wanted: Record<string, unknown>): boolean {
  return Object.entries(wanted).every(([k, v]) => canonicalJson(args[k]) === canonicalJson(v));
}

/** The case's expectations, each with whether the candidate met it and why. */
export function checkExpectations(
  expectations: readonly EvalExpectation[],
  answer: { text: string; calls: readonly Call[] },
): ExpectationResult[] {
  return expectations.map((expectation) => checkOne(expectation, answer));
}

function checkOne(expectation: EvalExpectation, answer: { text: string; calls: readonly Call[] }): ExpectationResult {
  switch (expectation.kind) {
    case 'calls': {
      const named = answer.calls.filter((c) => c.name === expectation.tool);
      if (!named.length) return { expectation, passed: false, detail: `${expectation.tool} was not called.` };
      if (!expectation.args || named.some((c) => hasArgs(c.args, expectation.args!)))
        return { expectation, passed: true, detail: `${expectation.tool} was called.` };
      return {
        expectation,
        passed: false,
        detail: `${expectation.tool} was called with other arguments: ${named.map((c) => canonicalJson(c.args)).join('; ')}`,
      };
    }
    case 'not_calls': {
      const n = answer.calls.filter((c) => c.name === expectation.tool).length;
      return n
        ? { expectation, passed: false, detail: `${expectation.tool} was called ${n === 1 ? 'once' : `${n} times`}.` }
        : { expectation, passed: true, detail: `${expectation.tool} was not called.` };
    }
    case 'mentions': {
      const found = answer.text.toLowerCase().includes(expectation.text.toLowerCase());
      return {
        expectation,
        passed: found,
        detail: found
          ? `The answer mentions "${expectation.text}".`
          : `The answer does not mention "${expectation.text}".`,
      };
    }
    case 'asks_back': {
      const asked = answer.calls.some((c) => c.name === 'ask_user');
      return {
        expectation,
        passed: asked,
        detail: asked ? 'The assistant asked back.' : 'The assistant did not ask back.',
      };
    }
  }
}

/**
 * A word diff of two answers (longest common subsequence over words and the spaces between them),
 * adjacent pieces of one kind joined. Answers longer than the limit are shown as replaced whole.
 */
export function answerDiff(original: string, candidate: string): AnswerDiff {
  const a = original.split(/(\s+)/).filter(Boolean);
  const b = candidate.split(/(\s+)/).filter(Boolean);
  if (a.length + b.length > EVAL_LIMITS.maxDiffWords * 2) {
    return join([
      ...(original ? [{ op: 'removed' as const, text: original }] : []),
      ...(candidate ? [{ op: 'added' as const, text: candidate }] : []),
    ]);
  }
  // lcs[i][j]: the common length of a[i..] and b[j..].
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const out: AnswerDiff = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      out.push({ op: 'same', text: a[i]! });
      i++;
      j++;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) out.push({ op: 'removed', text: a[i++]! });
    else out.push({ op: 'added', text: b[j++]! });
  }
  while (i < a.length) out.push({ op: 'removed', text: a[i++]! });
  while (j < b.length) out.push({ op: 'added', text: b[j++]! });
  return join(blocks(out));
}

/**
 * Changed words separated only by spaces read as one change: in a run of removed and added words
 * (with the spaces between them), the removed words and the spaces become one removed piece and the
 * added words and the spaces one added piece. Each side still reads back as its answer.
 */
function blocks(parts: AnswerDiff): AnswerDiff {
  const out: AnswerDiff = [];
  let block: AnswerDiff = [];
  let spaces: AnswerDiff = [];
  const flush = () => {
    const removed = block.filter((p) => p.op !== 'added');
    const added = block.filter((p) => p.op !== 'removed');
    if (block.some((p) => p.op === 'removed') && block.some((p) => p.op === 'added')) {
      out.push({ op: 'removed', text: removed.map((p) => p.text).join('') });
      out.push({ op: 'added', text: added.map((p) => p.text).join('') });
    } else out.push(...block);
    block = [];
  };
  for (const p of parts) {
    if (p.op === 'same' && block.length && /^\s+$/.test(p.text)) {
      spaces.push(p);
      continue;
    }
    if (p.op === 'same') {
      flush();
      out.push(...spaces, p);
      spaces = [];
      continue;
    }
    block.push(...spaces, p);
    spaces = [];
  }
  flush();
  out.push(...spaces);
  return out;
}

function join(parts: AnswerDiff): AnswerDiff {
  const out: AnswerDiff = [];
  for (const p of parts) {
    const last = out.at(-1);
    if (last && last.op === p.op) last.text += p.text;
    else out.push({ ...p });
  }
  return out;
}

/** What a comparison reads of one case's result. */
export interface ComparedCase {
  outcome: 'completed' | 'pending' | 'error';
  passed: boolean;
  failedExpectations: number;
  calls: readonly string[];
  answer: string;
}

/**
 * One case in experiment B against experiment A: better (it passes now, or fails fewer
 * expectations, or no longer errors), worse (the other way), changed (same standing, but other
 * tools or another answer), same.
 */
export function compareCase(a: ComparedCase, b: ComparedCase): ComparisonVerdict {
  const rank = (c: ComparedCase) => (c.outcome === 'error' ? 0 : c.passed ? 2 : 1);
  if (rank(b) !== rank(a)) return rank(b) > rank(a) ? 'better' : 'worse';
  if (b.failedExpectations !== a.failedExpectations)
    return b.failedExpectations < a.failedExpectations ? 'better' : 'worse';
  if (b.calls.join(',') !== a.calls.join(',') || b.answer !== a.answer) return 'changed';
  return 'same';
}
