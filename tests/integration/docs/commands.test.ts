// The commands of the documentation, run as written. Every fenced block whose info string is
// `bash runnable` in README.md or docs/*.md is run, line by line and in page order, in a copy of the
// working tree that looks like a fresh clone (what .gitignore lists is left out; node_modules is
// hard-linked in, so nothing is downloaded), with a clean environment: PATH and HOME, plus a free
// PORT and quiet npm and Next.js. The command text is never changed. A line that starts the app
// (`npm run dev`, `npm start`) must serve /api/health and /login, and is then stopped; any other
// line must exit 0. See docs/testing.md, "Documentation".
import { type ChildProcess, spawn } from 'node:child_process';
import {
  copyFileSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { docPages, readPage, ROOT } from '../../helpers/markdown';

/** The info string that marks a block as runnable. */
const RUNNABLE = /^(?:bash|sh)\s+runnable(?:\s|$)/;
/** A line that starts the app and keeps running. */
const STARTS_APP = /(?:^|[\s;&])npm (?:run dev|start)\b/;
const COMMAND_SECONDS = 90;
const APP_READY_SECONDS = 180;

interface Command {
  where: string;
  text: string;
}

function runnableCommands(): Command[] {
  const commands: Command[] = [];
  for (const file of docPages()) {
    for (const fence of readPage(file).fences.filter((f) => RUNNABLE.test(f.info))) {
      let pending = '';
      fence.lines.forEach((line, i) => {
        pending += line;
        if (pending.endsWith('\\')) {
          pending = `${pending.slice(0, -1)} `;
          return;
        }
        const text = pending.trim();
        pending = '';
        if (text && !text.startsWith('#')) commands.push({ where: `${file}:${fence.line + 1 + i}`, text });
      });
    }
  }
  return commands;
}

/** The accounts the README's "Demo accounts" table lists. */
function readmeDemoAccounts(): string[] {
  const text = readPage('README.md').prose;
  const section = text.slice(text.indexOf('## Demo accounts'));
  const table = section.slice(0, section.indexOf('\n## ') > 0 ? section.indexOf('\n## ') : undefined);
  return [...table.matchAll(/^\| `([^`]+@[^`]+)` \|/gm)].map((m) => m[1]!);
}

/** The patterns of .gitignore, as a fresh clone would lack them. */
function ignoredBy(): (rel: string) => boolean {
  const patterns = readFileSync(path.join(ROOT, '.gitignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.replace(/\/$/, ''));
  return (rel) => {
    const base = path.basename(rel);
    return patterns.some((p) => {
      if (p.includes('/')) return rel === p.replace(/^\//, '');
      if (p.startsWith('*')) return base.endsWith(p.slice(1));
      return base === p;
    });
  };
}

function copyTree(from: string, to: string, skip: (rel: string) => boolean, rel = ''): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const r = rel ? `${rel}/${entry.name}` : entry.name;
    if (entry.name === '.git' || skip(r)) continue;
    const src = path.join(from, entry.name);
    const dest = path.join(to, entry.name);
    if (entry.isDirectory()) copyTree(src, dest, skip, r);
    else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(src), dest);
    else copyFileSync(src, dest);
  }
}

/**
 * node_modules as hard links (a second or two, no space used). Files npm rewrites in place (the
 * top level's own files, such as .package-lock.json) are copied, so the working tree's stay as they are.
 */
function linkModules(from: string, to: string, top = true): void {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dest = path.join(to, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '.cache') linkModules(src, dest, false);
    } else if (entry.isSymbolicLink()) symlinkSync(readlinkSync(src), dest);
    else if (top) copyFileSync(src, dest);
    else linkSync(src, dest);
  }
}

/** A scratch folder on the working tree's file system (hard links cannot cross file systems). */
function scratchDir(): string {
  const probe = (base: string) => {
    const dir = mkdtempSync(path.join(base, 'docs-commands-'));
    try {
      linkSync(path.join(ROOT, 'package.json'), path.join(dir, '.probe'));
      rmSync(path.join(dir, '.probe'));
      return dir;
    } catch {
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
  };
  const local = path.join(ROOT, 'test-artifacts');
  mkdirSync(local, { recursive: true });
  return probe(os.tmpdir()) ?? (probe(local) as string);
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

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function start(text: string, cwd: string, env: Record<string, string>): Running {
  // Its own process group, so the command and everything it starts can be stopped together.
  // No NODE_ENV, as in a newcomer's shell (Next's types declare it always set).
  const child = spawn('bash', ['-c', text], {
    cwd,
    env: env as unknown as NodeJS.ProcessEnv,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

function stopGroup(r: Running, signal: NodeJS.Signals): void {
  if (r.child.pid === undefined || r.child.exitCode !== null || r.child.signalCode !== null) return;
  try {
    process.kill(-r.child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

async function stop(r: Running): Promise<void> {
  stopGroup(r, 'SIGTERM');
  const timer = setTimeout(() => stopGroup(r, 'SIGKILL'), 30_000);
  await r.exited;
  clearTimeout(timer);
}

function tail(text: string): string {
  return text.split('\n').slice(-40).join('\n');
}

async function answers(url: string): Promise<number | undefined> {
  try {
    const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(60_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return undefined;
  }
}

const running = new Set<Running>();
let scratch: string | undefined;

afterAll(async () => {
  await Promise.all([...running].map(stop));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the runnable blocks of the documentation', () => {
  const commands = runnableCommands();

  it('include the quick start', () => {
    expect(commands.map((c) => c.text)).toEqual(expect.arrayContaining(['npm install', 'npm run dev']));
    expect(readmeDemoAccounts()).toHaveLength(4);
  });

  it(
    'work as written on a fresh copy of the project',
    async () => {
      scratch = scratchDir();
      const cwd = path.join(scratch, 'project');
      copyTree(ROOT, cwd, ignoredBy());
      linkModules(path.join(ROOT, 'node_modules'), path.join(cwd, 'node_modules'));

      const port = await freePort();
      const env: Record<string, string> = {
        ...Object.fromEntries(
          ['PATH', 'HOME', 'USER', 'LANG', 'TMPDIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])),
        ),
        PORT: String(port),
        NEXT_TELEMETRY_DISABLED: '1',
        npm_config_audit: 'false',
        npm_config_fund: 'false',
        npm_config_update_notifier: 'false',
        npm_config_progress: 'false',
      };

      const appOutputs: string[] = [];
      for (const command of commands) {
        const r = start(command.text, cwd, env);
        running.add(r);
        if (STARTS_APP.test(command.text)) {
          const deadline = Date.now() + APP_READY_SECONDS * 1000;
          const ready = { health: false, login: false };
          let exit: number | null | undefined;
          void r.exited.then((code) => (exit = code));
          while (Date.now() < deadline && exit === undefined && !(ready.health && ready.login)) {
            if (!ready.health) ready.health = (await answers(`http://127.0.0.1:${port}/api/health`)) === 200;
            else ready.login = (await answers(`http://127.0.0.1:${port}/login`)) === 200;
            if (!(ready.health && ready.login)) await new Promise((res) => setTimeout(res, 500));
          }
          expect(
            ready,
            `${command.where}: \`${command.text}\` did not serve /api/health and /login on port ${port}` +
              `${exit === undefined ? ` within ${APP_READY_SECONDS} s` : ` (it exited with ${exit})`}:\n${tail(r.output())}`,
          ).toEqual({ health: true, login: true });
          appOutputs.push(r.output());
          await stop(r);
        } else {
          let timedOut = false;
          const timer = setTimeout(() => {
            timedOut = true;
            stopGroup(r, 'SIGKILL');
          }, COMMAND_SECONDS * 1000);
          const code = await r.exited;
          clearTimeout(timer);
          const why = timedOut ? `did not finish within ${COMMAND_SECONDS} s` : `exited with ${code}`;
          expect(code, `${command.where}: \`${command.text}\` ${why}:\n${tail(r.output())}`).toBe(0);
        }
        running.delete(r);
      }

      // The quick start prints the demo accounts the README lists.
      expect(appOutputs.length).toBeGreaterThan(0);
      for (const account of readmeDemoAccounts()) expect(appOutputs[0]).toContain(account);
    },
    (COMMAND_SECONDS * 4 + APP_READY_SECONDS + 60) * 1000,
  );
});
