// Talks to the agent route over real HTTP and parses the AG-UI SSE stream it answers with.
import { AgentEventSchema, type AgentEvent } from '@/features/in-app-agent/schema';
import { resetEnvCache } from '@/server/env';

export interface AgentResponse {
  status: number;
  headers: Headers;
  events: AgentEvent[];
  /** Error body for non-stream answers. */
  error?: { code: string; message: string };
}

export function agentUrl(base: string, projectId: string): string {
  return `${base}/api/projects/${encodeURIComponent(projectId)}/in-app-agent`;
}

export function userMessageBody(text: string, threadId?: string, extra: Record<string, unknown> = {}) {
  return {
    threadId: threadId ?? 'new',
    runId: 'client-run-id',
    messages: [{ id: 'client-msg', role: 'user', content: text }],
    tools: [],
    context: [],
    ...extra,
  };
}

/** Parses `data:` lines of an SSE body into validated AG-UI events. */
export function parseSse(text: string): AgentEvent[] {
  const events: AgentEvent[] = [];
  for (const block of text.split('\n\n')) {
    const data = block
      .split('\n')
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (data) events.push(AgentEventSchema.parse(JSON.parse(data)));
  }
  return events;
}

export async function postAgent(
  base: string,
  projectId: string,
  cookie: string | undefined,
  body: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal; raw?: string } = {},
): Promise<AgentResponse> {
  const res = await fetch(agentUrl(base, projectId), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base, ...(cookie ? { cookie } : {}), ...init.headers },
    body: init.raw ?? JSON.stringify(body),
    signal: init.signal,
  });
  const text = await res.text();
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    return {
      status: res.status,
      headers: res.headers,
      events: [],
      error: (JSON.parse(text) as { error: { code: string; message: string } }).error,
    };
  }
  return { status: res.status, headers: res.headers, events: parseSse(text) };
}

export const types = (events: AgentEvent[]) => events.map((e) => e.type);

export function textOf(events: AgentEvent[], role: 'assistant' | 'user' = 'assistant'): string {
  const ids = new Set(
    events
      .filter((e) => e.type === 'TEXT_MESSAGE_START' && e.role === role)
      .map((e) => (e as { messageId: string }).messageId),
  );
  return events
    .filter(
      (e): e is Extract<AgentEvent, { type: 'TEXT_MESSAGE_CONTENT' }> =>
        e.type === 'TEXT_MESSAGE_CONTENT' && ids.has(e.messageId),
    )
    .map((e) => e.delta)
    .join('');
}

/**
 * Points the app at a scripted OpenAI-compatible model server (no retries, no run limits in the
 * way) plus any `extra` settings, and drops the cached environment so the next request sees them.
 */
export function useScriptedModelEnv(modelUrl: string, extra: Record<string, string> = {}): void {
  Object.assign(process.env, {
    AGENT_MODEL_PROVIDER: 'openai-compatible',
    OPENAI_COMPATIBLE_BASE_URL: modelUrl,
    OPENAI_COMPATIBLE_MODEL: 'scripted-model',
    AGENT_MODEL_MAX_RETRIES: '0',
    AGENT_RATE_LIMIT_PER_MINUTE: '1000',
    AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
    ...extra,
  });
  resetEnvCache();
}

export function runUrl(base: string, projectId: string, runId: string, action: 'events' | 'cancel'): string {
  return `${agentUrl(base, projectId)}/runs/${encodeURIComponent(runId)}/${action}`;
}

/** Stop: `POST .../runs/:runId/cancel`. */
export async function cancelRun(
  base: string,
  projectId: string,
  runId: string,
  cookie: string,
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(runUrl(base, projectId, runId, 'cancel'), {
    method: 'POST',
    headers: { origin: base, cookie },
  });
  return { status: res.status, body: await res.json().catch(() => null) };
}

/** An SSE event with its position (the SSE `id`, when the server sent one). */
export interface PositionedSse {
  id: number | null;
  event: AgentEvent;
}

/** Parses an SSE body into events with their `id:` positions. */
function parseSseWithIds(text: string): PositionedSse[] {
  const out: PositionedSse[] = [];
  for (const block of text.split('\n\n')) {
    const lines = block.split('\n');
    const data = lines
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (!data) continue;
    const idLine = lines.find((l) => l.startsWith('id:'));
    out.push({ id: idLine ? Number(idLine.slice(3).trim()) : null, event: AgentEventSchema.parse(JSON.parse(data)) });
  }
  return out;
}

/**
 * Reads an SSE response until it ends or `until` says stop (then the connection is dropped).
 * Returns the events with their positions.
 */
async function readSse(
  res: Response,
  opts: { until?: (events: PositionedSse[]) => boolean; controller?: AbortController } = {},
): Promise<PositionedSse[]> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const events: PositionedSse[] = [];
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      const idx = buf.lastIndexOf('\n\n');
      if (idx >= 0) {
        events.push(...parseSseWithIds(buf.slice(0, idx + 2)));
        buf = buf.slice(idx + 2);
      }
      if (opts.until?.(events)) {
        opts.controller?.abort();
        await reader.cancel().catch(() => undefined);
        break;
      }
    }
  } catch (err) {
    if (!opts.controller?.signal.aborted) throw err;
  }
  return events;
}

/** Follows a run: `GET .../runs/:runId/events`, from a position or (none) from a snapshot. */
export async function followRun(
  base: string,
  projectId: string,
  runId: string,
  cookie: string,
  opts: { after?: number | null; lastEventId?: number; until?: (events: PositionedSse[]) => boolean } = {},
): Promise<{ status: number; events: PositionedSse[]; error?: { code: string; message: string } }> {
  const controller = new AbortController();
  const url = new URL(runUrl(base, projectId, runId, 'events'));
  if (opts.after !== undefined && opts.after !== null) url.searchParams.set('after', String(opts.after));
  const res = await fetch(url, {
    headers: { cookie, ...(opts.lastEventId !== undefined ? { 'last-event-id': String(opts.lastEventId) } : {}) },
    signal: controller.signal,
  });
  if (!(res.headers.get('content-type') ?? '').includes('text/event-stream')) {
    return {
      status: res.status,
      events: [],
      error: ((await res.json()) as { error: { code: string; message: string } }).error,
    };
  }
  return { status: res.status, events: await readSse(res, { until: opts.until, controller }) };
}

/** Starts a run and reads its SSE until `until` (then drops the connection) or its end. */
export async function startRunStream(
  base: string,
  projectId: string,
  cookie: string,
  body: unknown,
  until?: (events: PositionedSse[]) => boolean,
): Promise<{ status: number; events: PositionedSse[] }> {
  const controller = new AbortController();
  const res = await fetch(agentUrl(base, projectId), {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base, cookie },
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  return { status: res.status, events: await readSse(res, { until, controller }) };
}

/**
 * Follows a run as the panel does, until its terminal event: from `after`, and again from the last
 * position whenever a stream ends or breaks without one (the instance it came from stopped), on the
 * next of `bases` (round robin: another instance, or the same proxy). Returns every event received.
 */
export async function followToEnd(
  bases: string[],
  projectId: string,
  runId: string,
  cookie: string,
  opts: {
    after?: number | null;
    /** Called with the events so far after each batch (e.g. to kill an instance at a point). */
    onEvents?: (events: PositionedSse[]) => void;
    timeoutMs?: number;
  } = {},
): Promise<PositionedSse[]> {
  const all: PositionedSse[] = [];
  let after: number | null = opts.after ?? null;
  const until = Date.now() + (opts.timeoutMs ?? 90_000);
  const terminal = (e: PositionedSse) => e.event.type === 'RUN_FINISHED' || e.event.type === 'RUN_ERROR';
  for (let attempt = 0; Date.now() < until; attempt++) {
    const base = bases[attempt % bases.length]!;
    // The events of this attempt as they arrive (kept when the connection breaks).
    let got: PositionedSse[] = [];
    try {
      const res = await followRun(base, projectId, runId, cookie, {
        after,
        until: (events) => {
          got = events;
          opts.onEvents?.([...all, ...events]);
          return events.some(terminal);
        },
      });
      got = res.events;
    } catch {
      // The instance went away mid-stream: go on from the last position elsewhere.
    }
    all.push(...got);
    const last = [...got].reverse().find((e) => e.id !== null);
    if (last) after = last.id;
    if (got.some(terminal)) return all;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the run did not end within the time allowed (${all.length} events received)`);
}
