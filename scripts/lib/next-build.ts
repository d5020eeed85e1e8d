/**
 * The production build's command, from its one source: package.json's `build` script (`next build`
 * and its flags). The tests and benches that build the app when its build is missing or stale run
 * the same command, and the bench builds its Next.js floor with it too (a floor built like the
 * product). See docs/performance.md, "What changed", on why the build uses webpack.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);

/** `next`'s arguments for the production build of the app in `root` (`['build', '--webpack']`). */
export function nextBuildArgs(root: string): string[] {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts?: { build?: string } };
  const script = pkg.scripts?.build ?? '';
  if (!/^next build(\s+--[a-z][a-z-]*)*$/.test(script))
    throw new Error(`package.json's build script is not \`next build [--flag …]\`: ${JSON.stringify(script)}`);
  return script.split(/\s+/).slice(1);
}

/**
 * Runs the production build in `dir` with `next`'s arguments of the app in `root` (the floor's copy
 * builds with the product's flags). Throws when it fails.
 */
export function runNextBuild(
  root: string,
  opts: { dir?: string; stdio: 'inherit' | ['ignore', NodeJS.WriteStream, NodeJS.WriteStream] },
): void {
  const res = spawnSync(process.execPath, [require.resolve('next/dist/bin/next'), ...nextBuildArgs(root)], {
    cwd: opts.dir ?? root,
    stdio: opts.stdio,
    env: { ...process.env, NODE_ENV: 'production', NEXT_TELEMETRY_DISABLED: '1' },
  });
  if (res.status !== 0) throw new Error(`next build failed (exit ${res.status ?? res.signal})`);
}
