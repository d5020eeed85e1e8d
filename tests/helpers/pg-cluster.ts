// A throw-away PostgreSQL 15 cluster this test owns (initdb into a temp dir, a free loopback
// port), so a test can stop and start the server (database outages) without touching the shared
// one. Runs the server binaries as the `postgres` user when the test runs as root (PostgreSQL
// refuses to run as root). Removed by `destroy()`.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

export interface PgCluster {
  /** `postgresql://postgres@127.0.0.1:<port>/postgres` */
  url: string;
  port: number;
  stop(mode?: 'fast' | 'immediate'): void;
  start(): void;
  destroy(): void;
}

export function pgBinariesAvailable(): boolean {
  return existsSync(path.join(PG_BIN, 'initdb')) && existsSync(path.join(PG_BIN, 'pg_ctl'));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function asPostgres(bin: string, args: string[]): void {
  const isRoot = process.getuid?.() === 0;
  const cmd = isRoot ? 'runuser' : path.join(PG_BIN, bin);
  const full = isRoot ? ['-u', 'postgres', '--', path.join(PG_BIN, bin), ...args] : args;
  const res = spawnSync(cmd, full, { encoding: 'utf8', timeout: 60_000 });
  if (res.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${res.status}): ${res.stderr}${res.stdout}`);
}

export async function startPgCluster(): Promise<PgCluster> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'test-pg-'));
  chmodSync(dir, 0o755);
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres:', dir]);
  const data = path.join(dir, 'data');
  const port = await freePort();
  asPostgres('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--no-sync']);
  const opts = [
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
    '-c fsync=off -c synchronous_commit=off -c full_page_writes=off',
  ].join(' ');
  const start = () =>
    asPostgres('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', '-o', opts, 'start']);
  const stop = (mode: 'fast' | 'immediate' = 'fast') =>
    asPostgres('pg_ctl', ['-D', data, '-m', mode, '-w', '-t', '60', 'stop']);
  start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop,
    destroy() {
      try {
        if (existsSync(path.join(data, 'postmaster.pid'))) stop('immediate');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
