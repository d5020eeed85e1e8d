/**
 * Compaction of live AG-UI events into stored rows, and their expansion back into events.
 * Text deltas are merged per message and tool-call argument deltas per call; a row is written when
 * a message or call ends, and a long message is also flushed (updated in place) at a bounded
 * interval so a crash loses at most that interval. Sequence numbers are allocated when a message
 * or call starts, so the stored order is the order things appeared in.
 *
 * Positions. Every live event of a run has a position, sent as its SSE `id`: RUN_STARTED is 1,
 * and each later event adds its weight (1, or the length of a text or argument delta). Each row
 * stores the position where it starts (`pos`), so the events after any position can be rebuilt
 * exactly from the stored rows of a finished run (`eventsAfter`): a client that reconnects after
 * the run ended gets the rest of a message from the character where it stopped.
 */
import { CUSTOM_EVENTS, LIMITS, STORED_EVENT_VERSION } from './constants';
import { MessagePartsValueSchema, type AgentEvent, type MessagePart, type StoredEvent } from './schema';

export interface WriteOp {
  kind: 'insert' | 'update';
  seq: number;
  event: StoredEvent;
}

/** How far one event moves a run's position: a delta by its length, anything else by one. */
export function eventWeight(e: AgentEvent): number {
  return e.type === 'TEXT_MESSAGE_CONTENT' || e.type === 'TOOL_CALL_ARGS' ? Math.max(1, e.delta.length) : 1;
}

/** A message or tool call still streaming: its row, the text so far and when it was last written. */
interface Open {
  pos?: number;
  seq: number;
  /** A message's content or a call's arguments, so far. */
  text: string;
  written: boolean;
  lastFlush: number;
}
interface OpenText extends Open {
  role: 'user' | 'assistant';
  /** A user message's parts (`CUSTOM_EVENTS.messageParts`, right after its start): stored in its row. */
  parts?: MessagePart[];
}
interface OpenCall extends Open {
  name: string;
  parentMessageId?: string;
}
/** The row write of an open message or call (`complete`: it has ended). */
type RowOp<T extends Open> = (id: string, open: T, complete: boolean) => WriteOp;

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
    /** The last seq this compactor may allocate (the run's reserved block); beyond it, push throws. */
    private readonly maxSeq: number = Number.MAX_SAFE_INTEGER,
  ) {
    this.seq = lastSeq;
  }

  private nextSeq(): number {
    if (this.seq >= this.maxSeq) throw new Error('The run produced more rows than its reserved block holds.');
    return ++this.seq;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Feeds one live event and its position (when the run tracks positions); returns the row writes
   * it causes (often none; do not mutate the result).
   */
  push(e: AgentEvent, pos?: number): WriteOp[] {
    const v = STORED_EVENT_VERSION;
    const at = pos === undefined ? {} : { pos };
    switch (e.type) {
      case 'TEXT_MESSAGE_START':
        return this.begin(this.texts, e.messageId, { role: e.role }, pos);
      case 'TEXT_MESSAGE_CONTENT':
        return this.append(this.texts, e.messageId, e.delta, this.textOp);
      case 'TEXT_MESSAGE_END':
        return this.end(this.texts, e.messageId, this.textOp);
      case 'TOOL_CALL_START':
        return this.begin(this.calls, e.toolCallId, { name: e.toolCallName, parentMessageId: e.parentMessageId }, pos);
      case 'TOOL_CALL_ARGS':
        return this.append(this.calls, e.toolCallId, e.delta, this.callOp);
      case 'TOOL_CALL_END':
        return this.end(this.calls, e.toolCallId, this.callOp);
      case 'TOOL_CALL_RESULT':
        return [
          {
            kind: 'insert',
            seq: this.nextSeq(),
            event: {
              v,
              type: 'TOOL_CALL_RESULT',
              messageId: e.messageId,
              toolCallId: e.toolCallId,
              content: e.content,
              ...at,
            },
          },
        ];
      case 'CUSTOM': {
        if (e.name === CUSTOM_EVENTS.messageParts && this.attachParts(e.value)) return NONE;
        return [
          { kind: 'insert', seq: this.nextSeq(), event: { v, type: 'CUSTOM', name: e.name, value: e.value, ...at } },
        ];
      }
      case 'RUN_STARTED':
        return [
          {
            kind: 'insert',
            seq: this.nextSeq(),
            event: {
              v,
              type: 'RUN_STARTED',
              runId: e.runId,
              threadId: e.threadId,
              ...(e.parentRunId ? { parentRunId: e.parentRunId } : {}),
              ...at,
            },
          },
        ];
      case 'RUN_FINISHED': {
        const open = this.drain();
        const event: StoredEvent = {
          v,
          type: 'RUN_FINISHED',
          runId: e.runId,
          threadId: e.threadId,
          ...(e.outcome ? { outcome: e.outcome } : {}),
          ...(e.usage ? { usage: e.usage } : {}),
          ...at,
        };
        return [...open, { kind: 'insert', seq: this.nextSeq(), event }];
      }
      case 'MESSAGES_SNAPSHOT':
        return NONE; // sent to one watcher, never part of a run
      case 'RUN_ERROR': {
        // RUN_ERROR has no runId on the wire; the writer knows its run.
        const open = this.drain();
        const event: StoredEvent = {
          v,
          type: 'RUN_ERROR',
          runId: '',
          ...(e.code ? { code: e.code } : {}),
          message: e.message,
          ...at,
        };
        return [...open, { kind: 'insert', seq: this.nextSeq(), event }];
      }
    }
  }

  /**
   * A user message's parts, sent right after its start: kept with its row (they and the start are
   * one row). False when no such message is open before its text (then the event is a row of its own).
   */
  private attachParts(value: unknown): boolean {
    const parsed = MessagePartsValueSchema.safeParse(value);
    if (!parsed.success) return false;
    const open = this.texts.get(parsed.data.messageId);
    if (open?.role !== 'user' || open.text !== '' || open.parts) return false;
    open.parts = parsed.data.parts;
    return true;
  }

  /** Opens a message or call; its seq is allocated now, so rows keep the order things started in. */
  private begin<T extends Open>(
    open: Map<string, T>,
    id: string,
    item: Omit<T, keyof Open>,
    pos: number | undefined,
  ): WriteOp[] {
    open.set(id, { ...item, pos, seq: this.nextSeq(), text: '', written: false, lastFlush: this.now() } as T);
    return NONE;
  }

  /** Adds a delta to an open message or call; writes it when the flush interval has passed since its last write. */
  private append<T extends Open>(open: Map<string, T>, id: string, delta: string, op: RowOp<T>): WriteOp[] {
    const o = open.get(id);
    if (!o) return NONE;
    o.text += delta;
    return this.now() - o.lastFlush >= this.flushIntervalMs ? [op(id, o, false)] : NONE;
  }

  /** Closes an open message or call with its complete row. */
  private end<T extends Open>(open: Map<string, T>, id: string, op: RowOp<T>): WriteOp[] {
    const o = open.get(id);
    if (!o) return NONE;
    open.delete(id);
    return [op(id, o, true)];
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
    for (const [id, t] of this.texts)
      if (t.text && now - t.lastFlush >= this.flushIntervalMs) ops.push(this.textOp(id, t, false));
    for (const [id, c] of this.calls)
      if (c.text && now - c.lastFlush >= this.flushIntervalMs) ops.push(this.callOp(id, c, false));
    return ops;
  }

  private readonly textOp: RowOp<OpenText> = (messageId, t, complete) => {
    const kind = t.written ? 'update' : 'insert';
    t.written = true;
    t.lastFlush = this.now();
    const event: StoredEvent = {
      v: STORED_EVENT_VERSION,
      type: 'TEXT_MESSAGE',
      messageId,
      role: t.role,
      content: t.text,
      complete,
      ...(t.parts ? { parts: t.parts } : {}),
      ...(t.pos === undefined ? {} : { pos: t.pos }),
    };
    return { kind, seq: t.seq, event };
  };

  private readonly callOp: RowOp<OpenCall> = (toolCallId, c, complete) => {
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
        args: c.text,
        complete,
        ...(c.pos === undefined ? {} : { pos: c.pos }),
      },
    };
  };
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
  for (const row of stored) {
    switch (row.type) {
      case 'RUN_STARTED':
        threadId = row.threadId;
        runId = row.runId;
        out.push({
          type: 'RUN_STARTED',
          threadId: row.threadId,
          runId: row.runId,
          ...(row.parentRunId ? { parentRunId: row.parentRunId } : {}),
        });
        break;
      case 'TEXT_MESSAGE':
        out.push({ type: 'TEXT_MESSAGE_START', messageId: row.messageId, role: row.role });
        if (row.parts) out.push(partsEvent(row.messageId, row.parts));
        if (row.content) out.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: row.messageId, delta: row.content });
        if (row.complete) out.push({ type: 'TEXT_MESSAGE_END', messageId: row.messageId });
        break;
      case 'TOOL_CALL':
        out.push({
          type: 'TOOL_CALL_START',
          toolCallId: row.toolCallId,
          toolCallName: row.toolCallName,
          ...(row.parentMessageId ? { parentMessageId: row.parentMessageId } : {}),
        });
        if (row.args) out.push({ type: 'TOOL_CALL_ARGS', toolCallId: row.toolCallId, delta: row.args });
        if (row.complete) out.push({ type: 'TOOL_CALL_END', toolCallId: row.toolCallId });
        break;
      case 'TOOL_CALL_RESULT':
        out.push({
          type: 'TOOL_CALL_RESULT',
          messageId: row.messageId,
          toolCallId: row.toolCallId,
          content: row.content,
          role: 'tool',
        });
        break;
      case 'CUSTOM':
        out.push({ type: 'CUSTOM', name: row.name, value: row.value });
        break;
      case 'RUN_FINISHED':
        out.push({
          type: 'RUN_FINISHED',
          threadId: row.threadId || threadId,
          runId: row.runId || runId,
          ...(row.outcome ? { outcome: row.outcome } : {}),
          ...(row.usage ? { usage: row.usage } : {}),
        });
        break;
      case 'RUN_ERROR':
        out.push({ type: 'RUN_ERROR', message: row.message, ...(row.code ? { code: row.code } : {}) });
        break;
    }
  }
  return out;
}

function partsEvent(messageId: string, parts: MessagePart[]): AgentEvent {
  return { type: 'CUSTOM', name: CUSTOM_EVENTS.messageParts, value: { messageId, parts } };
}

/** Positions a row's start takes before its text: the start, and its parts event when it has one. */
const headOf = (s: StoredEvent) => (s.type === 'TEXT_MESSAGE' && s.parts ? 1 : 0);

/** An event with its position in its run. */
export interface PositionedEvent {
  pos: number;
  event: AgentEvent;
}

/** Where a row ends: the position of the last event it reflects (null: no position stored). */
export function rowEnd(s: StoredEvent): number | null {
  if (s.pos === undefined) return null;
  if (s.type === 'TEXT_MESSAGE') return s.pos + headOf(s) + s.content.length + (s.complete ? 1 : 0);
  if (s.type === 'TOOL_CALL') return s.pos + s.args.length + (s.complete ? 1 : 0);
  return s.pos;
}

/**
 * The position a run's stored rows reach (the position of the last event they reflect), or null
 * when they cannot be positioned (rows written before positions existed, or rows that overlap,
 * which a run's live stream never produces). `rows` are one run's rows in seq order.
 */
function storedPosition(rows: readonly StoredEvent[]): number | null {
  let end = 0;
  for (const r of rows) {
    const start = r.pos;
    if (start === undefined || start <= end) return null;
    end = rowEnd(r)!;
  }
  return end;
}

/**
 * The live events of a run after position `after`, rebuilt from its stored rows (in seq order):
 * exactly what a client that saw everything up to `after` is missing, down to the characters of a
 * message it saw half of. Null when the rows cannot be positioned (see storedPosition).
 */
export function eventsAfter(rows: readonly StoredEvent[], after: number, threadId: string): PositionedEvent[] | null {
  if (storedPosition(rows) === null) return null;
  const out: PositionedEvent[] = [];
  const emit = (pos: number, event: AgentEvent) => {
    if (pos > after) out.push({ pos, event });
  };
  for (const r of rows) {
    const p = r.pos!;
    if (r.type === 'TEXT_MESSAGE' || r.type === 'TOOL_CALL') {
      const body = r.type === 'TEXT_MESSAGE' ? r.content : r.args;
      const head = headOf(r);
      const end = p + head + body.length;
      if (r.type === 'TEXT_MESSAGE') {
        emit(p, { type: 'TEXT_MESSAGE_START', messageId: r.messageId, role: r.role });
        if (r.parts) emit(p + 1, partsEvent(r.messageId, r.parts));
      } else
        emit(p, {
          type: 'TOOL_CALL_START',
          toolCallId: r.toolCallId,
          toolCallName: r.toolCallName,
          ...(r.parentMessageId ? { parentMessageId: r.parentMessageId } : {}),
        });
      if (body.length > 0 && end > after) {
        // The client holds the first `after - p - head` characters when it stopped inside this row.
        const rest = body.slice(Math.max(0, after - p - head));
        if (r.type === 'TEXT_MESSAGE') emit(end, { type: 'TEXT_MESSAGE_CONTENT', messageId: r.messageId, delta: rest });
        else emit(end, { type: 'TOOL_CALL_ARGS', toolCallId: r.toolCallId, delta: rest });
      }
      if (r.complete) {
        if (r.type === 'TEXT_MESSAGE') emit(end + 1, { type: 'TEXT_MESSAGE_END', messageId: r.messageId });
        else emit(end + 1, { type: 'TOOL_CALL_END', toolCallId: r.toolCallId });
      }
      continue;
    }
    const terminal = r.type === 'RUN_FINISHED' || r.type === 'RUN_ERROR';
    for (const event of expand([r])) {
      const e = event.type === 'RUN_FINISHED' && !event.threadId ? { ...event, threadId } : event;
      // The end is always delivered: a client that saw more than was stored (its run's instance
      // died before writing it) still learns how the run ended.
      emit(terminal ? Math.max(p, after + 1) : p, e);
    }
  }
  return out;
}
