// The structured log read in-process: from `captureLog()` until `stop()`, every line the process's
// logger writes is parsed into `lines` (instead of going to stdout).
import { Writable } from 'node:stream';
import { setLogDestination } from '@/server/log';

export interface CapturedLog {
  lines: Array<Record<string, unknown>>;
  /** The lines of one event (`{ event: name }`). */
  events(name: string): Array<Record<string, unknown>>;
  stop(): void;
}

export function captureLog(): CapturedLog {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line) lines.push(JSON.parse(line));
      done();
    },
  });
  setLogDestination(sink);
  return {
    lines,
    events: (name) => lines.filter((l) => l.event === name),
    stop: () => setLogDestination(undefined),
  };
}
