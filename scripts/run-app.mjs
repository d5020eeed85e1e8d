// Shared by `npm run dev` (scripts/dev.mjs) and `npm start` (scripts/start.mjs): prepare the
// database in a separate process that closes it again, then hand the terminal to Next.js.
//
// Environment: PORT (default 3000), HOST (default 127.0.0.1), NEXTAUTH_URL (default: the printed
// URL), plus everything src/server/env.ts validates. Extra command-line arguments go to Next.js.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function fail(message) {
  process.stderr.write(`\n${message}\n\n`);
  process.exit(1);
}

/** Resolves once the port can be bound on the host, fails with a clear message otherwise. */
function checkPortFree(port, host) {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', (err) => {
      if (err.code === 'EADDRINUSE') {
        fail(
          `Port ${port} on ${host} is already in use (is the app already running?). Stop it or set PORT=<another port>.`,
        );
      }
      fail(`Cannot listen on ${host}:${port}: ${err.message}`);
    });
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve()));
  });
}

function runNode(args, env, { capture = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: root,
      env,
      stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    });
    let out = '';
    if (capture) child.stdout.on('data', (d) => (out += d));
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), out }));
  });
}

/**
 * @param {{ mode: 'dev' | 'start' }} opts
 */
export async function runApp({ mode }) {
  const nodeEnv = mode === 'dev' ? 'development' : 'production';
  if (process.env.NODE_ENV && process.env.NODE_ENV !== nodeEnv) {
    process.stderr.write(
      `Note: NODE_ENV=${process.env.NODE_ENV} ignored; \`${mode === 'dev' ? 'npm run dev' : 'npm start'}\` runs in ${nodeEnv} mode.\n`,
    );
  }
  const port = Number(process.env.PORT || 3000);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    fail(`PORT must be an integer between 1 and 65535 (got "${process.env.PORT}").`);
  const host = process.env.HOST || '127.0.0.1';
  const browserHost = host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  const url = `http://${browserHost}:${port}`;

  if (mode === 'start' && !existsSync(path.join(root, '.next', 'BUILD_ID'))) {
    fail('No production build found. Run `npm run build` first, then `npm start`.');
  }
  await checkPortFree(port, host);

  // NEXT_MANUAL_SIG_HANDLE: Next.js leaves SIGTERM/SIGINT to the app, which drains its running
  // answers before it exits (src/server/shutdown.ts) instead of closing at once.
  const env = { ...process.env, NODE_ENV: nodeEnv, PORT: String(port), NEXT_MANUAL_SIG_HANDLE: 'true' };
  if (!env.NEXTAUTH_URL) env.NEXTAUTH_URL = url;

  // 1. Database: migrate and seed in a separate process that closes the database when done.
  const tsx = require.resolve('tsx/cli');
  const prep = await runNode([tsx, 'scripts/prepare-db.ts', '--json'], env, { capture: true });
  if (prep.code !== 0)
    fail(`Not starting Next.js: the database preparation stopped (exit ${prep.code}), see the message above.`);
  let summary;
  try {
    summary = JSON.parse(prep.out.trim().split('\n').pop() ?? '');
  } catch {
    fail(`Unexpected output from the database preparation:\n${prep.out}`);
  }

  // 2. Tell the user where to go and how to sign in.
  const lines = [
    '',
    `  Tracker (${mode === 'dev' ? 'development' : 'production'}) → ${url}`,
    `  Database: ${summary.database} (${summary.location})` +
      `${summary.migrationsApplied.length ? `, ${summary.migrationsApplied.length} migration(s) applied` : ''}` +
      `${summary.seeded ? ', demo project created' : ''}`,
  ];
  if (summary.demo) {
    lines.push(`  Sign in at ${url}/login with any demo account, password "${summary.demo.password}":`);
    for (const u of summary.demo.users) lines.push(`    ${u.role.padEnd(6)}  ${u.email}`);
  } else if (summary.demoPresent) {
    lines.push(
      `  Sign in at ${url}/login. This database holds the demo project: remove its demo accounts before real use.`,
    );
  } else if (mode === 'start') {
    lines.push(`  Sign in at ${url}/login. No demo data (production seeds only with AUTO_SEED=1).`);
  } else {
    lines.push('  No demo data in this database (`npm run db:seed` adds it).');
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);

  // 3. Next.js, started only after the preparation process has exited.
  const next = require.resolve('next/dist/bin/next');
  const args = [next, mode, '--hostname', host, '--port', String(port), ...process.argv.slice(2)];
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit' });
  // Signals go to the app, which drains and exits with its own code; this process waits for it.
  const forward = (sig) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
  };
  process.on('SIGINT', () => forward('SIGINT'));
  process.on('SIGTERM', () => forward('SIGTERM'));
  child.once('exit', (code, signal) => process.exit(code ?? (signal === 'SIGINT' || signal === 'SIGTERM' ? 0 : 1)));
}
