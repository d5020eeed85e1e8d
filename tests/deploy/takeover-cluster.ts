// A cluster for the takeover suite and the chaos script: production instances (`npm start`, each
// its own process group) on one fresh PostgreSQL database, behind nginx with deploy/nginx.conf (its
// listen and server lines rewritten for these ports), answering with a scripted model on the
// OpenAI-compatible wire. Instances are killed (-9), stopped (SIGSTOP) and started again by the tests.
// Needs the production build (`npm run build`), nginx, and a PostgreSQL server (DATABASE_URL names
// any database of it; the cluster creates and drops its own).
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const root = path.resolve(import.meta.dirname, '../..');
const NGINX = process.env.NGINX ?? '/usr/sbin/nginx';
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface ClusterNode {
  index: number;
  port: number;
  url: string;
  logFile: string;
  /** The process group of its `npm start` (null while it is down). */
  pgid: number | null;
}

export interface ClusterOptions {
  /** A database URL of the PostgreSQL server to use (a fresh database is created on it). */
  serverUrl: string;
  modelUrl: string;
  instances?: number;
  basePort?: number;
  proxyPort?: number;
  env?: Record<string, string>;
}

export async function waitUntil<T>(what: string, probe: () => Promise<T | null | undefined | false>, ms = 60_000) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => null);
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(100);
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The process group of a process (from /proc), or null when it is gone. */
function groupOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid pgrp ...: the command may hold spaces, so read after the last ')'.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(rest[2]);
  } catch {
    return null;
  }
}

export class Cluster {
  readonly nodes: ClusterNode[];
  readonly proxyUrl: string;
  readonly databaseUrl: string;
  private readonly dir: string;
  private readonly dbName: string;
  private nginxStarted = false;

  constructor(private readonly opts: ClusterOptions) {
    const base = opts.basePort ?? 3101;
    this.dir = mkdtempSync(path.join(os.tmpdir(), 'takeover-'));
    this.nodes = Array.from({ length: opts.instances ?? 3 }, (_, index) => ({
      index,
      port: base + index,
      url: `http://127.0.0.1:${base + index}`,
      logFile: path.join(this.dir, `app-${base + index}.log`),
      pgid: null,
    }));
    this.proxyUrl = `http://127.0.0.1:${opts.proxyPort ?? 8181}`;
    this.dbName = `takeover_${Date.now()}_${process.pid}`;
    const url = new URL(opts.serverUrl);
    url.pathname = `/${this.dbName}`;
    this.databaseUrl = url.toString();
  }

  private admin(): pg.Client {
    const url = new URL(this.opts.serverUrl);
    url.pathname = '/postgres';
    return new pg.Client({ connectionString: url.toString() });
  }

  /** Creates the database, starts every instance (the first prepares the database) and nginx. */
  async start(): Promise<void> {
    const admin = this.admin();
    await admin.connect();
    await admin.query(`CREATE DATABASE "${this.dbName}"`);
    await admin.end();
    await this.startNode(this.nodes[0]!);
    await Promise.all(this.nodes.slice(1).map((n) => this.startNode(n)));
    await this.startNginx();
  }

  env(node: ClusterNode): NodeJS.ProcessEnv {
    return {
      ...process.env,
      PORT: String(node.port),
      DATABASE_URL: this.databaseUrl,
      NEXTAUTH_URL: this.proxyUrl,
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: this.opts.modelUrl,
      OPENAI_COMPATIBLE_MODEL: 'scripted-model',
      AGENT_MODEL_MAX_RETRIES: '0',
      AGENT_RATE_LIMIT_PER_MINUTE: '1000',
      AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: '1',
      SHUTDOWN_DRAIN_SECONDS: '5',
      LOG_LEVEL: 'info',
      AUTO_SEED: '0',
      ...this.opts.env,
    };
  }

  /** Starts (or starts again) one instance with the production command; resolves once it is ready. */
  startNode(node: ClusterNode): Promise<void> {
    return this.startNodeWith(node, this.env(node));
  }

  /** The same, with this environment (an instance on the embedded database). */
  async startNodeWith(node: ClusterNode, env: NodeJS.ProcessEnv): Promise<void> {
    const out = openSync(node.logFile, 'a');
    const child = spawn('npm', ['start'], {
      cwd: root,
      env,
      stdio: ['ignore', out, out],
      detached: true,
    });
    closeSync(out);
    child.unref();
    node.pgid = child.pid!;
    await waitUntil(
      `instance ${node.port} to be ready`,
      async () => (await fetch(`${node.url}/api/ready`)).status === 200,
      120_000,
    );
  }

  /** Sends `signal` to the instance's process group; -9 waits until every process is gone. */
  async signal(node: ClusterNode, signal: NodeJS.Signals): Promise<void> {
    if (node.pgid === null) return;
    process.kill(-node.pgid, signal);
    if (signal === 'SIGKILL') {
      const pgid = node.pgid;
      await waitUntil(`instance ${node.port} to die`, async () => !groupAlive(pgid), 30_000);
      node.pgid = null;
    }
  }

  /** The instance whose process owns the run now (from the run's lease: `host:pid:…`). */
  async ownerOf(runId: string, db: pg.Client): Promise<ClusterNode> {
    return waitUntil(`the owner of ${runId}`, async () => {
      const { rows } = await db.query<{ owner: string | null }>('SELECT "owner" FROM "AgentRun" WHERE "id" = $1', [
        runId,
      ]);
      const pid = Number(rows[0]?.owner?.split(':')[1]);
      if (!pid) return null;
      const pgid = groupOf(pid);
      return this.nodes.find((n) => n.pgid !== null && n.pgid === pgid) ?? null;
    });
  }

  /** Starts every instance that is down again (between scenarios). */
  async heal(): Promise<void> {
    await Promise.all(this.nodes.filter((n) => n.pgid === null).map((n) => this.startNode(n)));
  }

  log(node: ClusterNode): string {
    return readFileSync(node.logFile, 'utf8');
  }

  private nginxArgs(): string[] {
    return ['-p', this.dir, '-c', path.join(this.dir, 'nginx.conf')];
  }

  private async startNginx(): Promise<void> {
    const recipe = readFileSync(path.join(root, 'deploy/nginx.conf'), 'utf8');
    const servers = this.nodes.map((n) => `    server 127.0.0.1:${n.port} max_fails=1 fail_timeout=5s;`).join('\n');
    const conf = recipe
      .replace(/^\s*server 127\.0\.0\.1:\d+ max_fails=1 fail_timeout=5s;\n/gm, '')
      .replace('upstream tracker {', `upstream tracker {\n${servers}`)
      .replace('listen 127.0.0.1:8080;', `listen ${new URL(this.proxyUrl).host};`);
    if (!conf.includes(servers) || /^\s*server 127\.0\.0\.1:300[12]/m.test(conf))
      throw new Error('deploy/nginx.conf changed shape');
    writeFileSync(path.join(this.dir, 'nginx.conf'), conf);
    await import('node:fs/promises').then((fs) => fs.mkdir(path.join(this.dir, 'logs'), { recursive: true }));
    await new Promise<void>((resolve, reject) => {
      const p = spawn(NGINX, this.nginxArgs(), { stdio: 'inherit' });
      p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`nginx exited with ${code}`))));
    });
    this.nginxStarted = true;
    await waitUntil('nginx', async () => (await fetch(`${this.proxyUrl}/api/ready`)).status === 200);
  }

  /** Stops nginx and every instance, drops the database and the directory. */
  async stop(): Promise<void> {
    if (this.nginxStarted) {
      await new Promise<void>((resolve) => {
        const p = spawn(NGINX, [...this.nginxArgs(), '-s', 'quit'], { stdio: 'ignore' });
        p.on('exit', () => resolve());
      });
    }
    for (const n of this.nodes) {
      if (n.pgid === null) continue;
      try {
        process.kill(-n.pgid, 'SIGCONT');
        process.kill(-n.pgid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    await sleep(500);
    const admin = this.admin();
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "${this.dbName}" WITH (FORCE)`);
    await admin.end();
    if (!process.env.KEEP_TAKEOVER_LOGS) rmSync(this.dir, { recursive: true, force: true });
  }
}
