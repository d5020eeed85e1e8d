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
 * - It first yields one turn of the event loop with the lock held (see `run`).
 * - Parameters are serialized for the types the database inferred at preparation, with the
 *   client's own serializers (as `query()` does); rows are parsed with the client's parsers.
 * - At most MAX_PREPARED texts are kept prepared; a text past that runs as a plain `query()`.
 */
import 'server-only';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type PGlite, parse, protocol } from '@electric-sql/pglite';

const MAX_PREPARED = 256;

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
      // One turn of the event loop with the lock held, then the statement: statements waiting for
      // the lock (a burst of runs) each run in a turn of their own, with every stream's timers and
      // sockets served in between, instead of back to back in one stretch of microtasks.
      await nextTurn();
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
