/**
 * Compaction of live AG-UI events into stored rows, and their expansion back into events.
 * Text deltas are merged per message and tool-call argument deltas per call; a row is written when
 * a message or call ends, and a long message is also flushed (updated in place) at a bounded
 * interval so a crash loses at most that interval. Sequence numbers are allocated when a message
 * or call starts, so the stored order is the order things appeared in.
 */
import { LIMITS, STORED_EVENT_VERSION } from './constants';
import type { AgentEvent, StoredEvent } from './schema';

export interface WriteOp {
  kind: 'insert' | 'update';
  seq: number;
  event: StoredEvent;
}

interface OpenText {
  seq: number;
  role: 'user' | 'assistant';
  content: string;
  written: boolean;
  lastFlush: number;
}
interface OpenCall {
  seq: number;
  name: string;
  parentMessageId?: string;
  args: string;
  written: boolean;
  lastFlush: number;
}

/** The common answer (no write): shared, frozen, so the hot path allocates nothing per delta. */
const NONE = Object.freeze([]) as unknown as WriteOp[];

export class Compactor {
  private seq: number;
  private readonly texts = new Map<string, OpenText>();
  private readonly calls = new Map<string, OpenCall>();

  constructor(
    lastSeq: number,
    private readonly flushIntervalMs: number = LIMITS.flushIntervalMs,
    private readonly now: () => number = Date.now,
  ) {
    this.seq = lastSeq;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /** Feeds one live event; returns the row writes it causes (often none; do not mutate the result). */
  push(e: AgentEvent): WriteOp[] {
    const v = STORED_EVENT_VERSION;
    switch (e.type) {
      case 'TEXT_MESSAGE_START':
        this.texts.set(e.messageId, { seq: ++this.seq, role: e.role, content: '', written: false, lastFlush: this.now() });
        return NONE;
      case 'TEXT_MESSAGE_CONTENT': {
        const t = this.texts.get(e.messageId);
        if (!t) return NONE;
        t.content += e.delta;
        return this.now() - t.lastFlush >= this.flushIntervalMs ? [this.textOp(e.messageId, t, false)] : NONE;
      }
      case 'TEXT_MESSAGE_END': {
        const t = this.texts.get(e.messageId);
        if (!t) return NONE;
        this.texts.delete(e.messageId);
        return [this.textOp(e.messageId, t, true)];
      }
      case 'TOOL_CALL_START':
        this.calls.set(e.toolCallId, {
          seq: ++this.seq,
          name: e.toolCallName,
          parentMessageId: e.parentMessageId,
          args: '',
          written: false,
          lastFlush: this.now(),
        });
        return NONE;
      case 'TOOL_CALL_ARGS': {
        const c = this.calls.get(e.toolCallId);
        if (!c) return NONE;
        c.args += e.delta;
        return this.now() - c.lastFlush >= this.flushIntervalMs ? [this.callOp(e.toolCallId, c, false)] : NONE;
      }
      case 'TOOL_CALL_END': {
        const c = this.calls.get(e.toolCallId);
        if (!c) return NONE;
        this.calls.delete(e.toolCallId);
        return [this.callOp(e.toolCallId, c, true)];
      }
      case 'TOOL_CALL_RESULT':
        return [{ kind: 'insert', seq: ++this.seq, event: { v, type: 'TOOL_CALL_RESULT', messageId: e.messageId, toolCallId: e.toolCallId, content: e.content } }];
      case 'CUSTOM':
        return [{ kind: 'insert', seq: ++this.seq, event: { v, type: 'CUSTOM', name: e.name, value: e.value } }];
      case 'RUN_STARTED':
        return [{ kind: 'insert', seq: ++this.seq, event: { v, type: 'RUN_STARTED', runId: e.runId, threadId: e.threadId, ...(e.parentRunId ? { parentRunId: e.parentRunId } : {}) } }];
      case 'RUN_FINISHED':
        return [
          ...this.drain(),
          {
            kind: 'insert',
            seq: ++this.seq,
            event: { v, type: 'RUN_FINISHED', runId: e.runId, threadId: e.threadId, ...(e.outcome ? { outcome: e.outcome } : {}), ...(e.usage ? { usage: e.usage } : {}) },
          },
        ];
      case 'RUN_ERROR':
        // RUN_ERROR has no runId on the wire; the writer knows its run.
        return [...this.drain(), { kind: 'insert', seq: ++this.seq, event: { v, type: 'RUN_ERROR', runId: '', ...(e.code ? { code: e.code } : {}), message: e.message } }];
    }
  }

  /** Writes whatever is still open as incomplete rows (run ended midway). */
  drain(): WriteOp[] {
    const ops: WriteOp[] = [];
    for (const [id, t] of this.texts) ops.push(this.textOp(id, t, false));
    for (const [id, c] of this.calls) ops.push(this.callOp(id, c, false));
    this.texts.clear();
    this.calls.clear();
    return ops.sort((a, b) => a.seq - b.seq);
  }

  /** Rows for open messages that have not been flushed for the interval (timer-driven flush). */
  flushDue(): WriteOp[] {
    const ops: WriteOp[] = [];
    const now = this.now();
    for (const [id, t] of this.texts) if (t.content && now - t.lastFlush >= this.flushIntervalMs) ops.push(this.textOp(id, t, false));
    for (const [id, c] of this.calls) if (c.args && now - c.lastFlush >= this.flushIntervalMs) ops.push(this.callOp(id, c, false));
    return ops;
  }

  private textOp(messageId: string, t: OpenText, complete: boolean): WriteOp {
    const kind = t.written ? 'update' : 'insert';
    t.written = true;
    t.lastFlush = this.now();
    return { kind, seq: t.seq, event: { v: STORED_EVENT_VERSION, type: 'TEXT_MESSAGE', messageId, role: t.role, content: t.content, complete } };
  }

  private callOp(toolCallId: string, c: OpenCall, complete: boolean): WriteOp {
    const kind = c.written ? 'update' : 'insert';
    c.written = true;
    c.lastFlush = this.now();
    return {
      kind,
      seq: c.seq,
      event: {
        v: STORED_EVENT_VERSION,
        type: 'TOOL_CALL',
        toolCallId,
        toolCallName: c.name,
        ...(c.parentMessageId ? { parentMessageId: c.parentMessageId } : {}),
        args: c.args,
        complete,
      },
    };
  }
}

/** Collapses a list of write ops so each seq is written once with its latest content. */
export function coalesce(ops: WriteOp[]): WriteOp[] {
  const bySeq = new Map<number, WriteOp>();
  for (const op of ops) {
    const prev = bySeq.get(op.seq);
    bySeq.set(op.seq, prev && prev.kind === 'insert' ? { ...op, kind: 'insert' } : op);
  }
  return [...bySeq.values()].sort((a, b) => a.seq - b.seq);
}

/** Expands stored rows (in seq order) back into the AG-UI events they stand for. */
export function expand(stored: Iterable<StoredEvent>): AgentEvent[] {
  const out: AgentEvent[] = [];
  let threadId = '';
  let runId = '';
  for (const s of stored) {
    switch (s.type) {
      case 'RUN_STARTED':
        threadId = s.threadId;
        runId = s.runId;
        out.push({ type: 'RUN_STARTED', threadId: s.threadId, runId: s.runId, ...(s.parentRunId ? { parentRunId: s.parentRunId } : {}) });
        break;
      case 'TEXT_MESSAGE':
        out.push({ type: 'TEXT_MESSAGE_START', messageId: s.messageId, role: s.role });
        if (s.content) out.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: s.messageId, delta: s.content });
        if (s.complete) out.push({ type: 'TEXT_MESSAGE_END', messageId: s.messageId });
        break;
      case 'TOOL_CALL':
        out.push({ type: 'TOOL_CALL_START', toolCallId: s.toolCallId, toolCallName: s.toolCallName, ...(s.parentMessageId ? { parentMessageId: s.parentMessageId } : {}) });
        if (s.args) out.push({ type: 'TOOL_CALL_ARGS', toolCallId: s.toolCallId, delta: s.args });
        if (s.complete) out.push({ type: 'TOOL_CALL_END', toolCallId: s.toolCallId });
        break;
      case 'TOOL_CALL_RESULT':
        out.push({ type: 'TOOL_CALL_RESULT', messageId: s.messageId, toolCallId: s.toolCallId, content: s.content, role: 'tool' });
        break;
      case 'CUSTOM':
        out.push({ type: 'CUSTOM', name: s.name, value: s.value });
        break;
      case 'RUN_FINISHED':
        out.push({ type: 'RUN_FINISHED', threadId: s.threadId || threadId, runId: s.runId || runId, ...(s.outcome ? { outcome: s.outcome } : {}), ...(s.usage ? { usage: s.usage } : {}) });
        break;
      case 'RUN_ERROR':
        out.push({ type: 'RUN_ERROR', message: s.message, ...(s.code ? { code: s.code } : {}) });
        break;
    }
  }
  return out;
}
