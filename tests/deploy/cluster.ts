// The deployment under test (started by `.ci/run`'s deploy step with the recipe of
// docs/operations.md, "Several instances"): two production instances (`npm start` on ports 3001
// and 3002, each its own process group, its pid in `$DEPLOY_DIR/app-<port>.pid`, its output in
// `$DEPLOY_DIR/app-<port>.log`) behind nginx with deploy/nginx.conf on DEPLOY_PROXY_URL. The
// tests stop an instance the way a process manager does (SIGTERM to its process group) and start
// it again with the same command.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const proxyUrl = process.env.DEPLOY_PROXY_URL ?? 'http://127.0.0.1:8080';
const dir = process.env.DEPLOY_DIR ?? '';
const root = path.resolve(import.meta.dirname, '../..');

export interface Instance {
  port: number;
  url: string;
  logFile: string;
  pidFile: string;
}

export const instances: Instance[] = [3001, 3002].map((port) => ({
  port,
  url: `http://127.0.0.1:${port}`,
  logFile: path.join(dir, `app-${port}.log`),
  pidFile: path.join(dir, `app-${port}.pid`),
}));

export function deployConfigured(): boolean {
  return dir !== '' && instances.every((i) => existsSync(i.pidFile));
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | null | undefined | false>,
  timeoutMs = 60_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

export async function isReady(url: string): Promise<boolean> {
  const res = await fetch(`${url}/api/ready`).catch(() => null);
  return res?.status === 200;
}

/** Which instance logged that it started this run (each instance's JSON log names its runs). */
export function instanceRunning(runId: string): Instance {
  const found = instances.find((i) => readFileSync(i.logFile, 'utf8').includes(`"runId":"${runId}"`));
  if (!found) throw new Error(`no instance logged run ${runId}`);
  return found;
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the instance's process group (as systemd does); resolves once every process exited. */
export async function stopInstance(instance: Instance, timeoutMs = 60_000): Promise<void> {
  const pgid = Number(readFileSync(instance.pidFile, 'utf8').trim());
  process.kill(-pgid, 'SIGTERM');
  await waitFor(`instance ${instance.port} to exit`, async () => !groupAlive(pgid), timeoutMs);
}

/** Starts the instance again with the recipe's command (`npm start`, its own process group). */
export async function startInstance(instance: Instance): Promise<void> {
  const out = openSync(instance.logFile, 'a');
  const child = spawn('npm', ['start'], {
    cwd: root,
    env: { ...process.env, PORT: String(instance.port) },
    stdio: ['ignore', out, out],
    detached: true,
  });
  closeSync(out);
  writeFileSync(instance.pidFile, String(child.pid));
  child.unref();
  await waitFor(`instance ${instance.port} to be ready`, () => isReady(instance.url), 90_000);
}
