/**
 * Pieces of a conversation view, cut and joined by run: the server replays a long conversation a
 * page of runs at a time (the newest first), and a new version of a turn replaces the runs from that
 * turn on. Pure functions over `ConversationView`; the store keeps the result in its live view.
 */
import type { ConversationView, TokenUsage, ViewMessage } from '../schema';

type Versions = NonNullable<ConversationView['versions']>;

function toolCallIdsOf(messages: readonly ViewMessage[]): Set<string> {
  const ids = new Set<string>();
  for (const m of messages) {
    if (m.role === 'assistant') for (const call of m.toolCalls) ids.add(call.id);
    else if (m.role === 'tool') ids.add(m.toolCallId);
  }
  return ids;
}

/** The part of `view` made of the runs for which `keep(index)` holds (by their position in `view.runs`). */
function slice(view: ConversationView, keep: (index: number) => boolean, navigations = true): ConversationView {
  const runs = view.runs.filter((_, i) => keep(i));
  const runIds = new Set(runs.map((r) => r.runId));
  const messages = view.messages.filter((m) => runIds.has(m.runId));
  const calls = toolCallIdsOf(messages);
  const decisions = Object.fromEntries(Object.entries(view.decisions).filter(([toolCallId]) => calls.has(toolCallId)));
  const versions = Object.fromEntries(Object.entries(view.versions ?? {}).filter(([runId]) => runIds.has(runId)));
  const answers = Object.fromEntries(
    Object.entries(view.answers ?? {}).filter(([toolCallId]) => calls.has(toolCallId)),
  );
  return {
    threadId: view.threadId,
    messages,
    runs,
    decisions,
    ...(Object.keys(answers).length ? { answers } : {}),
    // Pages the assistant opened are not tied to a run: the start of a view keeps them, the rest none.
    navigations: navigations ? [...view.navigations] : [],
    ...(Object.keys(versions).length ? { versions } : {}),
  };
}

/** The runs of `view` before the run `runId` (all of them when it is not there). */
export function viewBefore(view: ConversationView, runId: string): ConversationView {
  const at = view.runs.findIndex((r) => r.runId === runId);
  return slice(view, (i) => at < 0 || i < at);
}

/** The runs of `view` from the run `runId` on (none when it is not there). */
export function viewFrom(view: ConversationView, runId: string): ConversationView {
  const at = view.runs.findIndex((r) => r.runId === runId);
  return slice(view, (i) => at >= 0 && i >= at, false);
}

/**
 * `earlier` followed by `later` (an older page before the newest, or the kept start of a
 * conversation before a new branch). A run both hold is kept once, from `later` (the newer copy).
 */
export function joinViews(earlier: ConversationView, later: ConversationView): ConversationView {
  const laterRuns = new Set(later.runs.map((r) => r.runId));
  return concatViews(
    slice(earlier, (i) => !laterRuns.has(earlier.runs[i]!.runId)),
    later,
  );
}

/**
 * `head` followed by `tail`, taken as they are (they share no run): their messages, runs and
 * navigations in order, the decisions, answers and versions of both.
 */
export function concatViews(head: ConversationView, tail: ConversationView): ConversationView {
  const versions: Versions = { ...(head.versions ?? {}), ...(tail.versions ?? {}) };
  const answers = { ...(head.answers ?? {}), ...(tail.answers ?? {}) };
  return {
    threadId: tail.threadId ?? head.threadId,
    messages: [...head.messages, ...tail.messages],
    runs: [...head.runs, ...tail.runs],
    decisions: { ...head.decisions, ...tail.decisions },
    ...(Object.keys(answers).length ? { answers } : {}),
    navigations: [...head.navigations, ...tail.navigations],
    ...(Object.keys(versions).length ? { versions } : {}),
  };
}

/**
 * The runs of `view` by turn, in order: a turn is the run that asks (or the first run of the view)
 * and the runs that continue it after approvals (`parentRunId`).
 */
function turnsOf(view: ConversationView): string[][] {
  const turns: string[][] = [];
  for (const run of view.runs) {
    const current = turns.at(-1);
    if (current && run.parentRunId && current.includes(run.parentRunId)) current.push(run.runId);
    else turns.push([run.runId]);
  }
  return turns;
}

/**
 * What each finished turn used, summed over its runs (the question's run and the runs that went on
 * after approvals), keyed by the turn's last run: one figure per turn. A turn whose last run is
 * still running has none yet. Cost only when every run of the turn that used tokens has one.
 */
export function turnUsage(view: ConversationView): Map<string, TokenUsage> {
  const byId = new Map(view.runs.map((r) => [r.runId, r]));
  const out = new Map<string, TokenUsage>();
  for (const turn of turnsOf(view)) {
    const runs = turn.map((id) => byId.get(id)!);
    const last = runs.at(-1)!;
    if (last.status === 'running') continue;
    const used = runs.map((r) => r.usage).filter((u): u is TokenUsage => u !== undefined);
    if (!used.length) continue;
    const sum = (pick: (u: TokenUsage) => number | undefined) => used.reduce((n, u) => n + (pick(u) ?? 0), 0);
    const priced = used.every((u) => u.costUsd !== undefined);
    out.set(last.runId, {
      ...(used[0]!.provider ? { provider: used[0]!.provider } : {}),
      ...(used[0]!.model ? { model: used[0]!.model } : {}),
      inputTokens: sum((u) => u.inputTokens),
      outputTokens: sum((u) => u.outputTokens),
      ...(priced ? { costUsd: Math.round(sum((u) => u.costUsd) * 1e8) / 1e8 } : {}),
      // One run's estimate (an answer stopped or failed midway) makes the turn's figure an estimate.
      ...(used.some((u) => u.estimated) ? { estimated: true as const } : {}),
    });
  }
  return out;
}

/**
 * The turn to ask again when the newest answer failed (a model error, a timeout, the tools not
 * loading, a stale run): the run that starts the newest turn, when the failed run belongs to it.
 * Null when the newest run did not fail, or failed without the turn's message (nothing to ask).
 */
export function failedTurnRunId(view: ConversationView): string | null {
  const last = view.runs.at(-1);
  if (last?.status !== 'failed') return null;
  const turn = turnsOf(view).at(-1);
  const start = lastTurnRunId(view);
  return turn && start && turn[0] === start && turn.includes(last.runId) ? start : null;
}

/** The run that starts the turn of the newest user message (what an edit or a regeneration replaces). */
export function lastTurnRunId(view: ConversationView): string | null {
  const last = view.messages.findLast((m) => m.role === 'user');
  return last && view.runs.some((r) => r.runId === last.runId) ? last.runId : null;
}

/**
 * The versions of a turn once a new one (`newRunId`) was started from the turn now shown by
 * `replacedRunId`: the server lists a turn's versions oldest first, so the new one is the last.
 */
export function addVersion(versions: ConversationView['versions'], replacedRunId: string, newRunId: string): Versions {
  const siblings = versions?.[replacedRunId]?.runIds ?? [replacedRunId];
  const runIds = [...siblings.filter((id) => id !== newRunId), newRunId];
  // The replaced version is no longer shown, so the map (keyed by shown runs) loses it.
  const { [replacedRunId]: _replaced, ...others } = versions ?? {};
  return { ...others, [newRunId]: { index: runIds.length, count: runIds.length, runIds } };
}
