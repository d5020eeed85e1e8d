// scripts/cpu-profile-top.ts, run as a person runs it: the top rows of a CPU profile (self time in a
// window) and of a sampling heap profile (bytes allocated), by function and by package or file.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(path.join(os.tmpdir(), 'profile-top-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0, columnNumber: 0 });
const ZOD = 'file:///app/node_modules/zod/index.js';
const APP = 'file:///app/src/server/db.ts';

function top(file: string, ...args: string[]): string {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/cpu-profile-top.ts', file, ...args], {
    encoding: 'utf8',
  });
  expect(res.status, res.stderr).toBe(0);
  return res.stdout;
}

/** The value of the row naming `what` in the table after `title`. */
function row(out: string, title: string, what: string): number {
  const table = out.slice(out.indexOf(title));
  const line = table.split('\n').find((l) => l.endsWith(what) || l.includes(`  ${what}  `));
  if (!line) throw new Error(`no row ${what} under ${title}:\n${out}`);
  return Number(line.trim().split(/\s+/)[0]);
}

describe('cpu-profile-top', () => {
  it('adds up a heap profile by what allocated, in KB', () => {
    const file = path.join(dir, 'a.heapprofile');
    writeFileSync(
      file,
      JSON.stringify({
        head: {
          callFrame: frame('(root)', ''),
          selfSize: 0,
          children: [
            { callFrame: frame('parse', ZOD), selfSize: 3 * 1024, children: [] },
            {
              callFrame: frame('query', APP),
              selfSize: 1024,
              children: [{ callFrame: frame('parse', ZOD), selfSize: 2 * 1024, children: [] }],
            },
          ],
        },
        samples: [],
      }),
    );
    const out = top(file);
    expect(out).toContain('allocated in the profile: 6.0 KB');
    expect(row(out, 'packages / files by allocated', 'zod')).toBe(5);
    expect(row(out, 'packages / files by allocated', 'src/server/db.ts')).toBe(1);
  });

  it('adds up the CPU samples of a window by self time, in ms', () => {
    const file = path.join(dir, 'a.cpuprofile');
    writeFileSync(
      file,
      JSON.stringify({
        nodes: [
          { id: 1, callFrame: frame('(root)', '') },
          { id: 2, callFrame: frame('parse', ZOD) },
          { id: 3, callFrame: frame('query', APP) },
        ],
        startTime: 0,
        // 4 ms of parse, then 2 ms of query, then 10 ms of parse outside the window asked for.
        samples: [2, 3, 2, 1],
        timeDeltas: [0, 4000, 2000, 10000],
      }),
    );
    const out = top(file, '--from', '0', '--to', '5');
    expect(out).toContain('busy time in the window: 6.0 ms');
    expect(row(out, 'packages / files by self time', 'zod')).toBe(4);
    expect(row(out, 'packages / files by self time', 'src/server/db.ts')).toBe(2);
  });
});
