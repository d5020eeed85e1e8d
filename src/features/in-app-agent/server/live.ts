/**
 * Runs that are live in this process, and who watches them. A run does not belong to the request
 * that started it: it keeps going when every watcher has left, and any number of watchers (the
 * starting request, a reload, a second tab, another instance through fan-out.ts) attach and leave
 * at any time. Each event gets its position (see compact.ts) and is kept, framed as SSE, in the
 * run's log until the run ends, so a watcher attaching after position n gets exactly the events
 * after n, then the live ones. When the run ends, it leaves the registry with its log and
 * watchers: nothing of it stays in the process.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { EventEncoder } from '@ag-ui/encoder';
import { processWide, registerGauge } from '../host';
import { eventWeight } from '../compact';
import type { AgentEvent } from '../schema';

/** Someone following a run: receives SSE frames in order, then `end` once. */
export interface Watcher {
  send(frame: string): void;
  /** The run ended (its terminal frame was sent) or the watcher was dropped. */
  end(): void;
}

const encoder = new EventEncoder();

const owner = processWide('__inAppAgentOwner', () => ({
  id: `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
}));

/**
 * This process as the owner of the runs it runs (their lease): unique per process, also across
 * restarts of a container whose process id is always the same.
 */
export function ownerId(): string {
  return owner.id;
}

/**
 * One SSE frame: the position as `id`, the event as `data`. The per-token events (the hot path)
 * carry no optional nulls, which is all the encoder would strip: they are framed directly.
 */
export function frameOf(event: AgentEvent | Record<string, unknown>, pos?: number): string {
  const type = (event as { type: string }).type;
  const data =
    type === 'TEXT_MESSAGE_CONTENT' || type === 'TOOL_CALL_ARGS'
      ? `data: ${JSON.stringify(event)}\n\n`
      : encoder.encodeSSE(event as never);
  return pos === undefined ? data : `id: ${pos}\n${data}`;
}

/**
 * What a run taken over kept of its earlier generations (their stored steps), as the events after
 * a position: a watcher that saw less of them than was stored gets the rest before this generation.
 */
type EarlierEvents = (after: number) => ReadonlyArray<{ pos: number; event: AgentEvent }>;

export interface LiveRunInfo {
  runId: string;
  conversationId: string;
  projectId: string;
  userId: string;
}

/**
 * Where a generation's positions start. A run taken over goes on above anything its earlier
 * generation may have sent (it may have streamed past what it stored), so a watcher's positions
 * keep increasing across a takeover.
 */
function generationBase(generation: number): number {
  return (generation - 1) * 2 ** 32;
}

export class LiveRun {
  private readonly log: Array<{ pos: number; frame: string }> = [];
  private readonly watchers = new Set<Watcher>();
  private position: number;
  private ended = false;
  /** The run went on elsewhere (another instance took it over): watchers follow it there. */
  private handedOver = false;
  /** Aborting it stops the model and every tool call in flight. */
  readonly controller = new AbortController();

  constructor(
    readonly info: LiveRunInfo,
    /** The run's generation (1 for a run that was never taken over). */
    readonly generation = 1,
    /** A run taken over: what its earlier generations kept. */
    private readonly earlier?: EarlierEvents,
  ) {
    this.position = generationBase(generation);
  }

  get runId(): string {
    return this.info.runId;
  }

  /** The position of the last event emitted. */
  get lastPosition(): number {
    return this.position;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Whether the run went on on another instance when this one ended (see `handOver`). */
  get wasHandedOver(): boolean {
    return this.handedOver;
  }

  /** Gives the event its position, keeps its frame and sends it to every watcher. */
  emit(event: AgentEvent): number {
    if (this.ended) return this.position;
    this.position += eventWeight(event);
    const frame = frameOf(event, this.position);
    this.log.push({ pos: this.position, frame });
    for (const w of this.watchers) w.send(frame);
    return this.position;
  }

  /**
   * Gives the event its position but sends it only when `release` is called: the terminal event
   * goes out once the run's end is stored, so no watcher sees an end the database does not have
   * (an instance that dies in between leaves the run to the next owner, which sends its own).
   */
  hold(event: AgentEvent): { pos: number; release: () => void } {
    if (this.ended) return { pos: this.position, release: () => undefined };
    this.position += eventWeight(event);
    const pos = this.position;
    const frame = frameOf(event, pos);
    return {
      pos,
      release: () => {
        if (this.ended) return;
        this.log.push({ pos, frame });
        for (const w of this.watchers) w.send(frame);
      },
    };
  }

  /**
   * Follows the run from after `after`: the logged frames past it at once (a run taken over: first
   * what its earlier generations kept past it), then every new one.
   * Returns the detach function (idempotent). A run that already ended sends what is logged and
   * ends the watcher at once.
   */
  attach(after: number, watcher: Watcher): () => void {
    if (this.earlier && after < generationBase(this.generation))
      for (const { pos, event } of this.earlier(after)) watcher.send(frameOf(event, pos));
    for (const entry of this.log) if (entry.pos > after) watcher.send(entry.frame);
    if (this.ended) {
      watcher.end();
      return () => undefined;
    }
    this.watchers.add(watcher);
    return () => {
      this.watchers.delete(watcher);
    };
  }

  /**
   * Stops the run here: Stop from any tab or instance (`user`), the stale sweep closed it (`lost`),
   * another instance took it over (`taken`), or the drain let it go for another instance to take
   * (`released`). The run writes its own end (or, taken or released, nothing more).
   */
  stop(reason: 'user' | 'lost' | 'taken' | 'released'): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  /**
   * The run has sent its terminal event: end every watcher. The log stays until the run leaves
   * the registry, so a watcher attaching while the end is being recorded still gets the rest.
   */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    const watchers = [...this.watchers];
    this.watchers.clear();
    for (const w of watchers) w.end();
  }

  /**
   * Another instance took the run over: ends every watcher without a terminal event; they follow
   * the run where it goes on (see the Follower in handler.ts).
   */
  handOver(): void {
    this.handedOver = true;
    this.close();
  }

  /** Lets go of the log (the run left the registry; its rows are stored). */
  dispose(): void {
    this.close();
    this.log.length = 0;
  }
}

interface Registry {
  runs: Map<string, LiveRun>;
}
const registry: Registry = processWide<Registry>('__inAppAgentLiveRuns', () => ({ runs: new Map() }));

registerGauge('inAppAgent.liveRuns', () => registry.runs.size);
registerGauge('inAppAgent.watchers', () => {
  let n = 0;
  for (const run of registry.runs.values()) n += run.watcherCount;
  return n;
});

export function registerRun(run: LiveRun): void {
  registry.runs.set(run.runId, run);
}

/** Closes the run and removes it from the registry (its watchers end). */
export function releaseRun(run: LiveRun): void {
  run.dispose();
  if (registry.runs.get(run.runId) === run) registry.runs.delete(run.runId);
}

export function liveRun(runId: string): LiveRun | undefined {
  return registry.runs.get(runId);
}

export function liveRuns(): LiveRun[] {
  return [...registry.runs.values()];
}

/**
 * An SSE response body fed by frames: coalesces the frames of one event-loop turn into one chunk
 * (fewer writes under fast models, at most one turn of added latency) and closes after `end`.
 * `onCancel` runs when the client goes away (the watcher detaches; the run goes on).
 */
export function sseStream(onStart: (watcher: Watcher) => void, onCancel: () => void): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder();
  let buf = '';
  let scheduled = false;
  let closed = false;
  let endAfterFlush = false;
  let controller: ReadableStreamDefaultController<Uint8Array>;
  const flush = () => {
    scheduled = false;
    if (closed) return;
    if (buf) {
      try {
        controller.enqueue(bytes.encode(buf));
      } catch {
        closed = true;
      }
      buf = '';
    }
    if (endAfterFlush && !closed) {
      closed = true;
      try {
        controller.close();
      } catch {
        /* already closed */
      }
    }
  };
  const schedule = () => {
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  const watcher: Watcher = {
    send(frame) {
      if (closed) return;
      buf += frame;
      schedule();
    },
    end() {
      endAfterFlush = true;
      schedule();
    },
  };
  return new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      onStart(watcher);
      // What is already there (the run's first events, a snapshot) goes out with the headers.
      if (buf) flush();
    },
    cancel() {
      closed = true;
      onCancel();
    },
  });
}
