/**
 * `npm run bench:storages`: what each `AsyncLocalStorage` a process has in use costs a streamed
 * answer on this Node version. On Node 20 a storage in use (one that has run a function once) stays
 * in a list that the promise hooks walk for every promise the process creates: each adds a call and
 * a property to every promise, whether or not the promise belongs to the storage's request. The
 * product's production server has seven in use (Next.js's request storages, two more of React's
 * page rendering once a page was served, the log's request context, the runtime's retry count), the
 * Next.js floor of `npm run bench:next` four, the plain Node floor one (see docs/performance.md).
 *
 * The workload is that floor's answer (bench/next-floor/floor.ts: the bare Mastra agent streamed as
 * AG-UI, no HTTP in between) from a scripted model served by a child process, so the measured
 * process's CPU is the agent's and the stream's alone. Each round measures, for every count of extra
 * storages in use (STORAGES_EXTRA, default 0,3,6: one, four and seven in all), one long answer
 * (20,000 text deltas, an instant model) and 40 short ones (five deltas), the storages taken out of
 * use again after; the order flips every round. Prints JSON: per count, CPU per text delta and per
 * short answer (medians of the rounds), and each against no extra storage.
 */
import { spawn } from 'node:child_process';
import { AsyncLocalStorage } from 'node:async_hooks';
import { createRequire } from 'node:module';
import { startFakeOpenAI } from '../tests/helpers/fake-models';
import { median, r2 } from './lib/stats';

const LONG_DELTAS = 20_000;
const SHORT_ANSWERS = 40;
const SHORT = ['A short ', 'answer ', 'in five ', 'text ', 'deltas.'];

if (process.argv[2] === '--model') {
  // The child: the scripted model, until its parent goes.
  const long = Array.from({ length: LONG_DELTAS }, (_, i) => `w${i} `);
  const model = await startFakeOpenAI(
    (body) => {
      const messages = (body.messages ?? []) as Array<{ role: string; content?: unknown }>;
      const last = messages.at(-1)?.content;
      return { text: typeof last === 'string' && last.includes('long') ? long : SHORT };
    },
    { keepAliveMs: 10 * 60_000 },
  );
  console.log(model.url);
  process.stdin.resume();
  process.stdin.on('end', () => void model.close().then(() => process.exit(0)));
} else {
  const rounds = Number(process.env.STORAGES_ROUNDS ?? 5);
  const counts = (process.env.STORAGES_EXTRA ?? '0,3,6').split(',').map(Number);
  if (counts.some((n) => !Number.isInteger(n) || n < 0))
    throw new Error('STORAGES_EXTRA: counts of storages, e.g. 0,3,6');

  const require = createRequire(import.meta.url);
  const child = spawn(process.execPath, [require.resolve('tsx/cli'), new URL(import.meta.url).pathname, '--model'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const modelUrl = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the model's process ended (${code})`)));
    child.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
  });
  process.env.OPENAI_COMPATIBLE_BASE_URL = modelUrl;
  process.env.OPENAI_COMPATIBLE_MODEL = 'bench';
  const { floorEvents } = await import('../bench/next-floor/floor');

  /** CPU (user + system) in ms of one function's run, and the text deltas it streamed. */
  const cpuOf = async (fn: () => Promise<number>) => {
    const c0 = process.cpuUsage();
    const deltas = await fn();
    const c = process.cpuUsage(c0);
    return { ms: (c.user + c.system) / 1000, deltas };
  };
  const answer = async (prompt: string) => {
    let deltas = 0;
    for await (const frame of floorEvents(prompt)) if (frame.includes('TEXT_MESSAGE_CONTENT')) deltas++;
    return deltas;
  };
  const shortAnswers = async () => {
    let deltas = 0;
    for (let i = 0; i < SHORT_ANSWERS; i++) deltas += await answer('bench: short');
    return deltas;
  };

  // Warm-up: module loading, the JIT, the runtime's own storage taken into use.
  for (let i = 0; i < 20; i++) await answer('bench: short');
  await answer('bench: long');

  const perDelta: Record<number, number[]> = Object.fromEntries(counts.map((n) => [n, []]));
  const perShort: Record<number, number[]> = Object.fromEntries(counts.map((n) => [n, []]));
  for (let round = 0; round < rounds; round++) {
    for (const n of round % 2 ? [...counts].reverse() : counts) {
      const storages = Array.from({ length: n }, () => new AsyncLocalStorage<number>());
      for (const s of storages) s.run(1, () => undefined);
      const long = await cpuOf(() => answer('bench: long'));
      if (long.deltas !== LONG_DELTAS) throw new Error(`the long answer had ${long.deltas} deltas`);
      const short = await cpuOf(shortAnswers);
      if (short.deltas !== SHORT_ANSWERS * SHORT.length)
        throw new Error(`the short answers had ${short.deltas} deltas`);
      for (const s of storages) s.disable();
      perDelta[n]!.push((long.ms * 1000) / LONG_DELTAS);
      perShort[n]!.push(short.ms / SHORT_ANSWERS);
    }
  }
  child.stdin!.end();

  const base = counts[0]!;
  const result = {
    node: process.version,
    rounds,
    note: "extra storages in use beyond the runtime's own one; ratios against the first count",
    byExtraStorages: counts.map((n) => ({
      extraStorages: n,
      storagesInUse: n + 1,
      cpuUsPerTextDelta: r2(median(perDelta[n]!)),
      cpuMsPerShortAnswer: r2(median(perShort[n]!)),
      perTextDeltaRatio: r2(median(perDelta[n]!) / median(perDelta[base]!)),
      perShortAnswerRatio: r2(median(perShort[n]!) / median(perShort[base]!)),
    })),
  };
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}
