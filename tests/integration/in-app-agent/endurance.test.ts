// A run leaves nothing behind: after 200 runs through the real route (plain answers, read tools,
// approvals held and answered), the process has the same signal and exit listeners, the same active
// handles, the same async-local storages in use and the same registry sizes as before. A per-run
// leak of any of these makes every later run of the process slower (see src/server/diagnostics.ts),
// so this test counts them instead of timing anything.
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { readDiagnostics, trackAsyncLocalStorages, type Diagnostics } from '@/server/diagnostics';
import { postAgent, userMessageBody } from '../../helpers/agent';
import { type KeywordAgent, startKeywordAgent } from '../../helpers/keyword-agent';

trackAsyncLocalStorages();

// The scripted model: the kind of run is the user's message; after a tool result it answers.
let agent: KeywordAgent;

beforeAll(async () => {
  agent = await startKeywordAgent('Endurance', { AGENT_RATE_LIMIT_PER_MINUTE: '10000' });
});

afterAll(async () => {
  await agent?.close();
});

const member = () => agent.project.users.MEMBER;

async function oneRun(kind: 'plain' | 'read' | 'approve'): Promise<void> {
  const { server, project } = agent;
  const res = await postAgent(server.url, project.id, member().cookie, userMessageBody(`${kind} please`));
  expect(res.status).toBe(200);
  const last = res.events.at(-1) as AgentEvent;
  if (kind !== 'approve') {
    expect(last).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
    return;
  }
  expect(last).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'interrupt' } });
  const started = res.events[0] as { threadId: string };
  const interrupts = (last as { outcome: { interrupts: Array<{ id: string }> } }).outcome.interrupts;
  const resumed = await postAgent(server.url, project.id, member().cookie, {
    threadId: started.threadId,
    messages: [],
    resume: interrupts.map((i) => ({ interruptId: i.id, status: 'resolved', payload: { approved: true } })),
  });
  expect(resumed.status).toBe(200);
  expect(resumed.events.at(-1)).toMatchObject({ type: 'RUN_FINISHED', outcome: { type: 'success' } });
}

const KINDS = ['plain', 'read', 'approve'] as const;

/** What must not grow: listeners, handles by type, storages, registries. */
function footprint(d: Diagnostics) {
  return {
    processListeners: d.processListeners,
    activeResources: d.activeResources,
    asyncLocalStorages: d.asyncLocalStorages,
    registries: d.registries,
  };
}

/**
 * Every count of `now` above the one in `before`, as `path: before -> now`. Fewer is fine: pooled
 * database connections opened before the runs may close while idle (pg closes them after 10 s).
 */
function growth(before: ReturnType<typeof footprint>, now: ReturnType<typeof footprint>): string[] {
  const flat = (o: unknown, prefix = ''): Array<[string, number]> =>
    o !== null && typeof o === 'object'
      ? Object.entries(o).flatMap(([k, v]) => flat(v, prefix ? `${prefix}.${k}` : k))
      : typeof o === 'number'
        ? [[prefix, o]]
        : [];
  const was = new Map(flat(before));
  return flat(now).flatMap(([k, v]) => (v > (was.get(k) ?? 0) ? [`${k}: ${was.get(k) ?? 0} -> ${v}`] : []));
}

/** Idle keep-alive sockets and timers close on their own: wait (bounded) until nothing exceeds `before`. */
async function settledGrowth(before: ReturnType<typeof footprint>): Promise<string[]> {
  let grown = growth(before, footprint(readDiagnostics()));
  for (let i = 0; i < 100 && grown.length > 0; i++) {
    await new Promise((r) => setTimeout(r, 100));
    grown = growth(before, footprint(readDiagnostics()));
  }
  return grown;
}

describe('per-run footprint', () => {
  it('is back where it was after 200 runs', { timeout: 240_000 }, async () => {
    // Warm-up: modules, process-wide objects created once, pooled connections.
    for (const kind of KINDS) await oneRun(kind);
    await new Promise((r) => setTimeout(r, 5_500)); // idle keep-alive sockets close after 5 s
    const before = footprint(readDiagnostics());
    // Counted where storages are kept in a process-wide list (Node 20, 22): there each one left
    // behind slows every later promise. Node 24 builds them on AsyncContextFrame, with no such list
    // and no cost per promise: nothing to count, and the diagnostics say null.
    const listed = typeof (AsyncLocalStorage.prototype as unknown as { _enable?: unknown })._enable === 'function';
    expect(before.asyncLocalStorages === null).toBe(!listed);

    for (let i = 0; i < 200; i += 4) {
      await Promise.all([0, 1, 2, 3].map((j) => oneRun(KINDS[(i + j) % KINDS.length]!)));
    }
    expect(await settledGrowth(before)).toEqual([]);
  });
});
