/**
 * Live runs across instances, through PostgreSQL itself (no other service): a watcher on one
 * instance follows a run that another instance is running, and Stop reaches the run wherever it
 * runs. Nothing is sent while nobody watches from elsewhere, so a run's database cost does not
 * change (no row per token, not even a notification per token).
 *
 * Each instance holds ONE dedicated connection (not a pooled one) that LISTENs on the shared
 * control channel and on its own channel, and sends every NOTIFY of the instance (one session
 * keeps them in order). The protocol, all JSON under PostgreSQL's 8,000-byte payload limit:
 * - control `watch {run, after, from, w}`: the owner of `run` acknowledges (`ack` to `from`) and
 *   sends the run's frames after position `after`, then the live ones (`frames`, a frame too long
 *   for one payload as `part`s), then `end`; `keep` renews a watch (dropped after 30 s without),
 *   `unwatch` ends it;
 * - control `cancel {run, from, c}`: the owner stops the run and answers `cancelled`.
 * A watcher that gets no acknowledgement looks in the database instead (the run ended, or its
 * instance died and the stale sweep will close it).
 *
 * On the embedded database there is one process, so there is nothing to fan out to: the local
 * registry (live.ts) is the whole story.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describeError, log, processWide, registerGauge } from '../host';
import { liveRun, type Watcher } from './live';

const CONTROL = 'iaa_control';
/** Bytes of one NOTIFY payload we allow ourselves (PostgreSQL's limit is 8,000). */
const PAYLOAD_BYTES = 7_600;
const KEEP_EVERY_MS = 10_000;
const WATCH_TTL_MS = 30_000;

/** The frames of a run arriving from another instance. */
interface RemoteSink {
  frame(frame: string): void;
  /** The owner says the run ended (after its terminal frame). */
  end(): void;
}

export interface RemoteWatch {
  /** Whether an owner acknowledged within the wait (false: nobody runs it live). */
  acked: boolean;
  /** Stops watching (idempotent). */
  close(): void;
}

export interface FanOut {
  readonly kind: 'none' | 'postgres';
  /**
   * Listens for other instances' requests (watch, stop) from now on. Called before a run starts:
   * an instance that runs runs must hear about their watchers. Cheap once listening.
   */
  listen(): Promise<void>;
  /** Ask whoever runs `runId` on another instance to stream its frames after `after` to `sink`. */
  watch(runId: string, after: number, sink: RemoteSink, waitMs?: number): Promise<RemoteWatch>;
  /** Ask whoever runs `runId` on another instance to stop it; true when one acknowledged. */
  cancel(runId: string, waitMs?: number): Promise<boolean>;
  /** Tells every instance that a run was let go (the drain): they look for runs to take over now. */
  released(): Promise<void>;
  /** Called when another instance let a run go (see `released`). One listener per process. */
  onReleased(listener: () => void): void;
  close(): Promise<void>;
}

/** One process (embedded database): no other instance can run anything. */
const NO_FAN_OUT: FanOut = {
  kind: 'none',
  async listen() {},
  async watch() {
    return { acked: false, close: () => undefined };
  },
  async cancel() {
    return false;
  },
  async released() {},
  onReleased() {},
  async close() {},
};

type Control =
  | { t: 'watch'; run: string; after: number; from: string; w: string }
  | { t: 'keep'; run: string; w: string }
  | { t: 'unwatch'; run: string; w: string }
  | { t: 'cancel'; run: string; from: string; c: string }
  | { t: 'released'; from: string };
type Direct =
  | { t: 'ack'; w: string }
  | { t: 'frames'; w: string; f: string[] }
  | { t: 'part'; w: string; s: string; last: boolean }
  | { t: 'end'; w: string }
  | { t: 'cancelled'; c: string };

interface Outgoing {
  runId: string;
  detach: () => void;
  keptAt: number;
}

interface Incoming {
  sink: RemoteSink;
  acked: () => void;
  partial: string;
}

function bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

class PgFanOut implements FanOut {
  readonly kind = 'postgres' as const;
  readonly instanceId = `i${randomBytes(6).toString('hex')}`;
  private readonly channel = `iaa_${this.instanceId}`;
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  /** Watches this instance serves for others, by watch id. */
  private readonly outgoing = new Map<string, Outgoing>();
  /** Watches this instance placed with others, by watch id. */
  private readonly incoming = new Map<string, Incoming>();
  private readonly cancels = new Map<string, () => void>();
  private releasedListener: (() => void) | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly connectionString: string) {}

  get outgoingCount(): number {
    return this.outgoing.size;
  }

  get incomingCount(): number {
    return this.incoming.size + this.cancels.size;
  }

  /** The listening connection, opened on first use and reopened after a loss. */
  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= (async () => {
      const client = new pg.Client({
        connectionString: this.connectionString,
        application_name: 'in-app-agent fan-out',
      });
      client.on('error', (err) => {
        log().error({ event: 'fan_out.connection_lost', error: describeError(err) }, 'fan-out connection lost');
        this.dropConnection(client);
      });
      client.on('end', () => this.dropConnection(client));
      client.on('notification', (msg) => this.onNotification(msg.channel, msg.payload ?? ''));
      await client.connect();
      await client.query(`LISTEN ${CONTROL}`);
      await client.query(`LISTEN ${this.channel}`);
      this.client = client;
      this.sweeper ??= setInterval(() => this.dropExpiredWatches(), KEEP_EVERY_MS);
      this.sweeper.unref();
      return client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private dropConnection(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    // Watches served over the lost connection cannot continue: their watchers fall back to the
    // database (they see no frames, poll the run, and reattach).
    for (const [w, out] of this.outgoing) {
      out.detach();
      this.outgoing.delete(w);
    }
  }

  /** Sends one NOTIFY; every send of the instance goes through one connection, in order. */
  private notify(channel: string, message: Control | Direct): Promise<void> {
    const payload = JSON.stringify(message);
    const next = this.chain.then(async () => {
      if (this.closed) return;
      const client = await this.connection();
      await client.query('SELECT pg_notify($1, $2)', [channel, payload]);
    });
    this.chain = next.catch((err: unknown) =>
      log().error({ event: 'fan_out.notify_failed', error: describeError(err) }, 'fan-out notify failed'),
    );
    return next;
  }

  private onNotification(channel: string, payload: string): void {
    let msg: Control | Direct;
    try {
      msg = JSON.parse(payload) as Control | Direct;
    } catch {
      return;
    }
    if (channel === CONTROL) this.onControl(msg as Control);
    else if (channel === this.channel) this.onDirect(msg as Direct);
  }

  private onControl(msg: Control): void {
    if (msg.t === 'watch') {
      const run = liveRun(msg.run);
      if (!run || msg.from === this.instanceId) return;
      void this.notify(`iaa_${msg.from}`, { t: 'ack', w: msg.w });
      const watcher = this.remoteWatcher(msg.from, msg.w);
      const detach = run.attach(msg.after, watcher);
      if (!run.isEnded) this.outgoing.set(msg.w, { runId: msg.run, detach, keptAt: Date.now() });
    } else if (msg.t === 'keep') {
      const out = this.outgoing.get(msg.w);
      if (out) out.keptAt = Date.now();
    } else if (msg.t === 'unwatch') {
      const out = this.outgoing.get(msg.w);
      if (out) {
        out.detach();
        this.outgoing.delete(msg.w);
      }
    } else if (msg.t === 'cancel') {
      const run = liveRun(msg.run);
      if (!run || msg.from === this.instanceId) return;
      run.stop('user');
      void this.notify(`iaa_${msg.from}`, { t: 'cancelled', c: msg.c });
    } else if (msg.t === 'released') {
      if (msg.from !== this.instanceId) this.releasedListener?.();
    }
  }

  private onDirect(msg: Direct): void {
    if (msg.t === 'cancelled') {
      this.cancels.get(msg.c)?.();
      return;
    }
    const inc = this.incoming.get(msg.w);
    if (!inc) return;
    if (msg.t === 'ack') inc.acked();
    else if (msg.t === 'frames') for (const f of msg.f) inc.sink.frame(f);
    else if (msg.t === 'part') {
      inc.partial += msg.s;
      if (msg.last) {
        const frame = inc.partial;
        inc.partial = '';
        inc.sink.frame(frame);
      }
    } else if (msg.t === 'end') {
      this.incoming.delete(msg.w);
      inc.sink.end();
    }
  }

  /** Forwards a local run's frames to a watcher on another instance, batched per event-loop turn. */
  private remoteWatcher(to: string, w: string): Watcher {
    const channel = `iaa_${to}`;
    let batch: string[] = [];
    let size = 0;
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      if (!batch.length) return;
      const frames = batch;
      batch = [];
      size = 0;
      void this.sendFrames(channel, w, frames);
    };
    return {
      send: (frame) => {
        batch.push(frame);
        size += bytes(frame);
        if (size > PAYLOAD_BYTES) flush();
        else if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      },
      end: () => {
        flush();
        this.outgoing.delete(w);
        void this.notify(channel, { t: 'end', w });
      },
    };
  }

  private async sendFrames(channel: string, w: string, frames: string[]): Promise<void> {
    let group: string[] = [];
    let size = 0;
    const overhead = bytes(JSON.stringify({ t: 'frames', w, f: [] }));
    for (const frame of frames) {
      // JSON escaping can grow a frame: measure it as it will be sent.
      const encoded = bytes(JSON.stringify(frame)) + 1;
      if (overhead + encoded > PAYLOAD_BYTES) {
        if (group.length) void this.notify(channel, { t: 'frames', w, f: group });
        group = [];
        size = 0;
        this.sendParts(channel, w, frame);
        continue;
      }
      if (overhead + size + encoded > PAYLOAD_BYTES) {
        void this.notify(channel, { t: 'frames', w, f: group });
        group = [];
        size = 0;
      }
      group.push(frame);
      size += encoded;
    }
    if (group.length) await this.notify(channel, { t: 'frames', w, f: group });
  }

  /** A frame too long for one notification, in pieces (reassembled in order by the receiver). */
  private sendParts(channel: string, w: string, frame: string): void {
    // Characters, not bytes: a piece of at most 1,500 characters stays under the limit even when
    // every character needs escaping or several UTF-8 bytes.
    const piece = 1_500;
    for (let i = 0; i < frame.length; i += piece) {
      void this.notify(channel, { t: 'part', w, s: frame.slice(i, i + piece), last: i + piece >= frame.length });
    }
  }

  private dropExpiredWatches(): void {
    const now = Date.now();
    for (const [w, out] of this.outgoing) {
      if (now - out.keptAt > WATCH_TTL_MS) {
        out.detach();
        this.outgoing.delete(w);
      }
    }
  }

  async listen(): Promise<void> {
    await this.connection();
  }

  async watch(runId: string, after: number, sink: RemoteSink, waitMs = 1_000): Promise<RemoteWatch> {
    await this.connection();
    const w = `w${randomBytes(6).toString('hex')}`;
    let acked = false;
    let onAck: () => void = () => undefined;
    const ackReceived = new Promise<void>((resolve) => (onAck = resolve));
    this.incoming.set(w, {
      sink,
      acked: () => {
        acked = true;
        onAck();
      },
      partial: '',
    });
    const keep = setInterval(() => void this.notify(CONTROL, { t: 'keep', run: runId, w }), KEEP_EVERY_MS);
    keep.unref();
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      clearInterval(keep);
      if (this.incoming.delete(w)) void this.notify(CONTROL, { t: 'unwatch', run: runId, w });
    };
    await this.notify(CONTROL, { t: 'watch', run: runId, after, from: this.instanceId, w });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([ackReceived, new Promise<void>((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    if (!acked) close();
    return { acked, close };
  }

  async cancel(runId: string, waitMs = 2_000): Promise<boolean> {
    await this.connection();
    const c = `c${randomBytes(6).toString('hex')}`;
    let timer: NodeJS.Timeout | undefined;
    const acked = new Promise<boolean>((resolve) => {
      this.cancels.set(c, () => resolve(true));
      timer = setTimeout(() => resolve(false), waitMs);
    });
    await this.notify(CONTROL, { t: 'cancel', run: runId, from: this.instanceId, c });
    const ok = await acked;
    clearTimeout(timer);
    this.cancels.delete(c);
    return ok;
  }

  async released(): Promise<void> {
    await this.notify(CONTROL, { t: 'released', from: this.instanceId });
  }

  onReleased(listener: () => void): void {
    this.releasedListener = listener;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const out of this.outgoing.values()) out.detach();
    this.outgoing.clear();
    for (const inc of this.incoming.values()) inc.sink.end();
    this.incoming.clear();
    await this.chain.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}

interface Holder {
  fanOut?: FanOut;
}
const holder: Holder = processWide<Holder>('__inAppAgentFanOut', () => ({}));

registerGauge('inAppAgent.remoteWatches', () => {
  const f = holder.fanOut;
  return f instanceof PgFanOut ? f.outgoingCount + f.incomingCount : 0;
});

/** The process's fan-out: PostgreSQL's LISTEN/NOTIFY when a database URL is set, none otherwise. */
export function fanOut(databaseUrl: string | undefined): FanOut {
  holder.fanOut ??= databaseUrl ? new PgFanOut(databaseUrl) : NO_FAN_OUT;
  return holder.fanOut;
}

/** Closes the process's fan-out connection (shutdown, tests). */
export async function closeFanOut(): Promise<void> {
  const f = holder.fanOut;
  holder.fanOut = undefined;
  await f?.close();
}
