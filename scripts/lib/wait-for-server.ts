/**
 * Waits until a server the script started answers `url` (any status below 500), or fails: when the
 * process exited first (with the end of its log, when there is one) or after `timeoutMs`. Used by
 * the bench scripts that start production servers.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

export async function waitForServer(
  url: string,
  server: ChildProcess,
  opts: { log?: string; timeoutMs?: number } = {},
): Promise<void> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (server.exitCode !== null || server.signalCode !== null) {
      throw new Error(`${url}: the server exited (${server.signalCode ?? server.exitCode})${logTail(opts.log)}`);
    }
    try {
      const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${url} did not answer within ${timeoutMs / 1000} s${logTail(opts.log)}`);
}

function logTail(log: string | undefined): string {
  return log ? `:\n${readFileSync(log, 'utf8').slice(-3000)}` : '';
}
