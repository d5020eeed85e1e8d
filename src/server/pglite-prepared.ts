/**
 * Prepared statements on the embedded database, for the statements sent past the ORM
 * (`Database.queryRows`/`execute`: every run's membership, open, event writes and finish).
 *
 * Why: PGlite's `query()` parses, analyses and plans the statement again on every call, in six
 * protocol round trips into the database, all on this thread. The run's statements are a small
 * fixed set of texts, so each is parsed once (a named statement) and every later call only binds
 * and executes it, in one round trip. `npm run bench` on PGlite measures the difference.
 *
 * Correctness rules kept here:
 * - A statement runs under the client's transaction lock, as `query()` does: it never runs between
 *   the statements of someone else's transaction (the ORM's interactive transactions).
 * - Statements run back to back for at most SLICE_MS; the next one first yields one turn of the
 *   event loop with the lock held (see `run`).
 * - Parameters are serialized for the types the database inferred at preparation, with the
 *   client's own serializers (as `query()` does); rows are parsed with the client's parsers.
 * - At most MAX_PREPARED texts are kept prepared; a text past that runs as a plain `query()`.
 */
import 'server-only';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type PGlite, parse, protocol } from '@electric-sql/pglite';

const MAX_PREPARED = 256;
/**
 * How long statements may run back to back before the event loop gets a turn (ms). One turn per
 * statement kept a burst of run opens from holding the thread, but while many answers stream a turn
 * is long, and the statements queued behind the lock (every run's checkpoint and end) then ran one
 * per turn: with 50 long answers at once, an answer's end waited up to 2 s after its last word.
 * Measured in process (50 answers of 1,000 deltas at once, and the 100-run burst of `npm run
 * bench`, alternated): longest wait 1.7–2.1 s with a turn per statement, 1.0–1.4 s with 2 ms,
 * 0.26–0.29 s with 4 ms, 0.20–0.31 s with 8 ms; the burst's added chunk delay p99 35–45 ms with a
 * turn per statement, 52–69 ms with 2 to 8 ms. See docs/performance.md.
 */
const SLICE_MS = 8;

interface Prepared {
  name: string;
  paramTypes: number[];
}

export interface PreparedResult<T> {
  rows: T[];
  affectedRows: number;
}

const concat = (parts: Uint8Array[]): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

/** Runs statements on `client` as named prepared statements (see the module comment). */
export function preparedStatements(client: PGlite) {
  const prepared = new Map<string, Prepared>();
  const { serialize } = protocol;
  /** Until when the statements under way may go on without a turn of the event loop. */
  let sliceEnds = 0;

  async function prepare(text: string): Promise<Prepared> {
    const name = `iaa_${prepared.size + 1}`;
    const { messages } = await client.execProtocol(
      concat([serialize.parse({ name, text, types: [] }), serialize.describe({ type: 'S', name }), serialize.sync()]),
    );
    const statement = { name, paramTypes: parse.parseDescribeStatementResults(messages) };
    prepared.set(text, statement);
    return statement;
  }

  return async function run<T>(text: string, values: readonly unknown[]): Promise<PreparedResult<T>> {
    if (!prepared.has(text) && prepared.size >= MAX_PREPARED) {
      const res = await client.query<T>(text, values as unknown[]);
      return { rows: res.rows, affectedRows: res.affectedRows ?? 0 };
    }
    await client.waitReady;
    return client._runExclusiveTransaction(async () => {
      // A turn of the event loop with the lock held when the slice is used up, then the statement:
      // statements waiting for the lock (a burst of runs) run at most SLICE_MS back to back, with
      // every stream's timers and sockets served in between, never in one long stretch of
      // microtasks; and while the loop is busy they are not held to one statement per turn.
      if (performance.now() >= sliceEnds) {
        await nextTurn();
        sliceEnds = performance.now() + SLICE_MS;
      }
      const statement = prepared.get(text) ?? (await prepare(text));
      const params = values.map((value, i) => {
        if (value === null || value === undefined) return null;
        const serializer = client.serializers[statement.paramTypes[i]!];
        return serializer ? serializer(value) : String(value);
      });
      const { messages } = await client.execProtocol(
        concat([
          serialize.bind({ statement: statement.name, values: params }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        ]),
      );
      const [result] = parse.parseResults(messages, client.parsers);
      return { rows: (result?.rows ?? []) as T[], affectedRows: result?.affectedRows ?? 0 };
    });
  };
}
