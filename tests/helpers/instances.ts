// Starts app instances as separate processes (tests/helpers/app-process.ts) on the test file's
// database, and stops them (gracefully, or with kill -9).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface AppInstance {
  url: string;
  process: ChildProcess;
  /** Everything the instance wrote to stdout and stderr. */
  output: () => string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

const root = path.resolve(import.meta.dirname, '../..');

export async function startInstance(env: Record<string, string | undefined>): Promise<AppInstance> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(root, 'tests/helpers/app-process.ts')], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`instance did not start:\n${out}`)), 150_000);
    const onData = () => {
      const m = /READY (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`instance exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    process: child,
    output: () => out,
    kill: (signal = 'SIGTERM') =>
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
        child.once('exit', (code) => resolve(code));
        child.kill(signal);
      }),
  };
}
