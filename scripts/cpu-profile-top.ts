/**
 * The top costs of a V8 CPU profile (`.cpuprofile`, from `node --cpu-prof`, Chrome DevTools or the
 * benches' *_CPU_PROFILE options): self time by function and by package or file. Also of a sampling
 * heap profile (`.heapprofile`, from DevTools or `npm run bench:next` with BENCH_NEXT_CPU_PROFILE):
 * bytes allocated, by the same rows.
 *
 *   tsx scripts/cpu-profile-top.ts <file.cpuprofile> [--from <ms>] [--to <ms>] [--top <n>]
 *   tsx scripts/cpu-profile-top.ts <file.heapprofile> [--top <n>]
 *
 * --from / --to keep the samples of that window, in ms after the profile started (bench:next prints
 * the window of its measured short answers as `profileWindowMs`); --top (default 25) rows per table.
 * Idle time is left out; the shares are of the busy time in the window. Frames of bundled code are
 * mapped to their sources through the source map beside the bundle (a Next.js build writes them).
 */
import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const CallFrameSchema = z.object({
  functionName: z.string(),
  url: z.string(),
  lineNumber: z.number(),
  columnNumber: z.number(),
});
type CallFrame = z.infer<typeof CallFrameSchema>;
type HeapNode = { callFrame: CallFrame; selfSize: number; children: HeapNode[] };
const HeapNodeSchema: z.ZodType<HeapNode> = z.lazy(() =>
  z.object({ callFrame: CallFrameSchema, selfSize: z.number(), children: z.array(HeapNodeSchema) }),
);
const HeapProfileSchema = z.object({ head: HeapNodeSchema });

const ProfileSchema = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({
        functionName: z.string(),
        url: z.string(),
        lineNumber: z.number(),
        columnNumber: z.number(),
      }),
    }),
  ),
  startTime: z.number(),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});

function option(name: string): number | undefined {
  const i = process.argv.indexOf(name);
  if (i < 0) return undefined;
  const value = Number(process.argv[i + 1]);
  if (!Number.isFinite(value)) throw new Error(`${name} needs a number`);
  return value;
}

const file = process.argv[2];
if (!file || file.startsWith('--')) {
  console.error(
    'usage: tsx scripts/cpu-profile-top.ts <file.cpuprofile> [--from <ms>] [--to <ms>] [--top <n>]\n' +
      '       tsx scripts/cpu-profile-top.ts <file.heapprofile> [--top <n>]',
  );
  process.exit(2);
}
const from = (option('--from') ?? 0) * 1000;
const to = (option('--to') ?? Number.POSITIVE_INFINITY) * 1000;
const top = option('--top') ?? 25;
const json: unknown = JSON.parse(readFileSync(file, 'utf8'));
const heap = typeof json === 'object' && json !== null && 'head' in json;

/** Source maps of bundled files (a Next.js build writes one beside each chunk), by file. */
const maps = new Map<string, SourceMap | null>();
function sourceMapOf(url: string): SourceMap | null {
  if (!maps.has(url)) {
    let map: SourceMap | null = null;
    const file = url.startsWith('file://') ? fileURLToPath(url) : url;
    if (file.startsWith('/') && existsSync(`${file}.map`)) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
      } catch {
        map = null;
      }
    }
    maps.set(url, map);
  }
  return maps.get(url)!;
}

/** Where a frame's code was written: the original source through the bundle's source map, when there is one. */
function located(frame: { url: string; lineNumber: number; columnNumber: number }): { file: string; line: number } {
  const entry = sourceMapOf(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber);
  if (entry && 'originalSource' in entry && entry.originalSource)
    return { file: decodeURIComponent(entry.originalSource), line: entry.originalLine + 1 };
  return { file: frame.url, line: frame.lineNumber + 1 };
}

const PACKAGE = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/;

/**
 * What code belongs to: the npm package it was loaded from (or that a bundle's source map names), a
 * file of the app (from `src/`), a module of Node itself, or V8.
 */
function origin(url: string, file: string): string {
  if (!url) return '(V8 / native)';
  if (url.startsWith('node:')) return url;
  const pkg = PACKAGE.exec(url) ?? PACKAGE.exec(file);
  if (pkg) return pkg[1]!;
  const app = /(?:^|\/)(src\/.*)$/.exec(file);
  return app ? app[1]! : file.replace(/^file:\/\//, '');
}

/** What the profile weighs, frame by frame: CPU time (µs) of the samples in the window, or bytes allocated. */
function weighed(): Array<{ frame: CallFrame; weight: number }> {
  const out: Array<{ frame: CallFrame; weight: number }> = [];
  if (heap) {
    const walk = (n: HeapNode) => {
      if (n.selfSize > 0) out.push({ frame: n.callFrame, weight: n.selfSize });
      for (const c of n.children) walk(c);
    };
    walk(HeapProfileSchema.parse(json).head);
    return out;
  }
  const profile = ProfileSchema.parse(json);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i] ?? 0;
    const rel = t - profile.startTime;
    if (rel < from || rel > to) continue;
    // A sample stands for the time until the next one.
    const node = byId.get(profile.samples[i]!);
    if (!node || node.callFrame.functionName === '(idle)') continue;
    out.push({ frame: node.callFrame, weight: profile.timeDeltas[i + 1] ?? 0 });
  }
  return out;
}

const selfByFunction = new Map<string, number>();
const selfByOrigin = new Map<string, number>();
let busy = 0;
for (const { frame, weight } of weighed()) {
  const { file, line } = located(frame);
  const where = origin(frame.url, file);
  const detail = where === file || file.endsWith(where) ? '' : ` ${file.replace(/^.*node_modules\//, '')}`;
  const key = `${frame.functionName || '(anonymous)'}  ${where}${detail}${file ? `:${line}` : ''}`;
  selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + weight);
  selfByOrigin.set(where, (selfByOrigin.get(where) ?? 0) + weight);
  busy += weight;
}

// CPU time in ms (the profile's µs / 1000), allocation in KB.
const unit = heap ? { name: 'KB', per: 1024, what: 'allocated' } : { name: 'ms', per: 1000, what: 'self time' };
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title}`);
  console.log(`self ${unit.name}   share  what`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${(v / unit.per).toFixed(1).padStart(8)}  ${((100 * v) / busy).toFixed(1).padStart(5)}%  ${k}`);
};
console.log(
  heap
    ? `allocated in the profile: ${(busy / unit.per).toFixed(1)} KB (${file})`
    : `busy time in the window: ${(busy / unit.per).toFixed(1)} ms (${file})`,
);
print(`top ${top} functions by ${unit.what}`, selfByFunction);
print(`top ${top} packages / files by ${unit.what}`, selfByOrigin);
