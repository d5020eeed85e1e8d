/**
 * `npm run check:lift`: the assistant module (src/features/in-app-agent) can be lifted into another
 * product with only what its seam declares.
 *
 * 1. Imports: every import specifier of every module file (`import`, `import type`, `export … from`,
 *    `import()`, `require()`) is read with the TypeScript scanner. Host paths (`@/…` outside the
 *    module) may appear only in the seam: `host.ts` (server) and `host-client.ts` (browser). A
 *    relative import must stay inside the folder, and nothing the browser loads may reach `host.ts`.
 *    Any other use fails the check with the file, the line and the path. The module README's
 *    "Host interfaces" table must list exactly the seam's names, each with the path it comes from.
 * 2. A scratch Next.js app in a temp dir holds the module folder, the host files the seam's paths
 *    lead to (followed from the seam's imports, so no list here can drift; the Prisma client is
 *    copied as generated) and nothing else: no product pages, no other features. A host path the
 *    seam does not reach is absent, so an import the scan missed fails to resolve there too. Its
 *    pages mount the module's public entry points: the three routes of `createAgentRoutes()`, the
 *    feedback export, the tRPC router and the panel with its provider. It gets the project's
 *    compiler options (strict, same `@/` alias), its next.config, and the project's node_modules
 *    through a symlink (no install). `tsc --noEmit` and `next build` must pass there.
 *
 * Why the host's own files rather than a stand-in host: a stand-in would be a second, hand-kept
 * implementation of every seam name that could drift from the real one; the host's files are what
 * the seam actually promises, and the scan is what pins the module to the seam. What another
 * product must provide is the seam's list (module README, "Host interfaces").
 *
 * Options: `--keep` keeps the scratch app and prints its path; `--scan-only` stops after step 1.
 * The temp dir is removed on exit, also on failure or Ctrl-C.
 */
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import ts from 'typescript';

const ROOT = path.resolve(import.meta.dirname, '..');
const SRC = path.join(ROOT, 'src');
const MODULE_DIR = 'features/in-app-agent';
const MODULE = path.join(SRC, MODULE_DIR);
/** The seam: the only module files that may name host paths. `host.ts` is server only. */
const SEAM_SERVER = path.join(MODULE, 'host.ts');
const SEAM_CLIENT = path.join(MODULE, 'host-client.ts');
/** Generated host code, copied whole when the seam leads into it. */
const GENERATED = path.join(SRC, 'generated/prisma');
const EXTENSIONS = ['.ts', '.tsx', '.mts', '.js', '.mjs', '.json', '.css'];

const args = new Set(process.argv.slice(2));
const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(tsx?|mts)$/.test(name) ? [full] : [];
  });
}

interface Specifier {
  text: string;
  line: number;
}

/** Every module specifier the file names, with its line (1-based). */
function specifiersOf(file: string): Specifier[] {
  const source = readFileSync(file, 'utf8');
  const info = ts.preProcessFile(source, true, true);
  const lineOf = (pos: number) => source.slice(0, pos).split('\n').length;
  return info.importedFiles.map((f) => ({ text: f.fileName, line: lineOf(f.pos) }));
}

/** The file a relative or `@/` specifier names, or undefined for a package or a missing file. */
function resolveLocal(from: string, specifier: string): string | undefined {
  let base: string;
  if (specifier.startsWith('@/')) base = path.join(SRC, specifier.slice(2));
  else if (specifier.startsWith('.')) base = path.resolve(path.dirname(from), specifier);
  else return undefined;
  const stem = base.replace(/\.(js|mjs)$/, '');
  const candidates = [base, ...EXTENSIONS.map((e) => stem + e), ...EXTENSIONS.map((e) => path.join(base, `index${e}`))];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

const inside = (dir: string, file: string) => !path.relative(dir, file).startsWith('..');
const isHostPath = (s: string) => s.startsWith('@/') && !s.startsWith(`@/${MODULE_DIR}/`) && s !== `@/${MODULE_DIR}`;

// --- 1. Imports --------------------------------------------------------------------------------
function scanImports(): string[] {
  const problems: string[] = [];
  const files = sourceFiles(MODULE);
  const edges = new Map<string, string[]>();
  for (const file of files) {
    const seam = file === SEAM_SERVER || file === SEAM_CLIENT;
    const targets: string[] = [];
    for (const { text, line } of specifiersOf(file)) {
      const where = `${rel(file)}:${line}`;
      if (isHostPath(text)) {
        if (!seam)
          problems.push(`${where} imports the host path '${text}': import it through host.ts or host-client.ts`);
        continue;
      }
      const target = resolveLocal(file, text);
      if (text.startsWith('.') && (!target || !inside(MODULE, target))) {
        problems.push(`${where} imports '${text}', which is not a file of the module`);
        continue;
      }
      if (target) targets.push(target);
    }
    edges.set(file, targets);
  }
  // Browser code: every 'use client' file and what it imports inside the module.
  const isClient = (f: string) =>
    /^\s*(\/\/[^\n]*\n|\/\*[\s\S]*?\*\/\s*)*['"]use client['"]/.test(readFileSync(f, 'utf8'));
  const stack = files.filter(isClient);
  const parent = new Map<string, string>();
  const seen = new Set(stack);
  while (stack.length) {
    const file = stack.pop()!;
    for (const next of edges.get(file) ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      parent.set(next, file);
      stack.push(next);
    }
  }
  if (seen.has(SEAM_SERVER)) {
    const chain: string[] = [];
    for (let f: string | undefined = SEAM_SERVER; f; f = parent.get(f)) chain.unshift(rel(f));
    problems.push(`browser code reaches the server seam: ${chain.join(' → ')}`);
  }
  return problems;
}

/** `name → host path` of everything the seam re-exports (`export { a, type B } from '@/…'`). */
function seamExports(): { names: Map<string, string>; problems: string[] } {
  const names = new Map<string, string>();
  const problems: string[] = [];
  for (const file of [SEAM_SERVER, SEAM_CLIENT]) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    for (const statement of source.statements) {
      if (ts.isImportDeclaration(statement) && !statement.importClause) continue; // `import 'server-only'`
      const from =
        ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)
          ? statement.moduleSpecifier.text
          : undefined;
      const clause = ts.isExportDeclaration(statement) ? statement.exportClause : undefined;
      if (!from || !clause || !ts.isNamedExports(clause)) {
        const line = source.getLineAndCharacterOfPosition(statement.getStart()).line + 1;
        problems.push(`${rel(file)}:${line}: the seam only re-exports named things from host paths`);
        continue;
      }
      for (const element of clause.elements) names.set(element.name.text, from);
    }
  }
  return { names, problems };
}

/** The seam and the README's "Host interfaces" table (`| \`name\` | \`path\` | … |`) name the same things. */
function checkReadme(seam: Map<string, string>): string[] {
  const readme = readFileSync(path.join(MODULE, 'README.md'), 'utf8');
  const section = readme.split(/^## /m).find((part) => part.startsWith('Host interfaces'));
  if (!section) return [`${rel(MODULE)}/README.md has no "Host interfaces" section`];
  const listed = new Map<string, string>();
  for (const match of section.matchAll(/^\| `([^`]+)` \| `([^`]+)` \|/gm)) listed.set(match[1]!, match[2]!);
  const problems: string[] = [];
  for (const [name, from] of seam) {
    if (listed.get(name) !== from) problems.push(`README "Host interfaces" lacks the row \`${name}\` | \`${from}\``);
  }
  for (const [name, from] of listed) {
    if (seam.get(name) !== from)
      problems.push(`README "Host interfaces" lists \`${name}\` from \`${from}\`, which the seam does not export`);
  }
  return problems;
}

// --- 2. The host files the seam leads to -------------------------------------------------------
function hostClosure(): string[] {
  const found = new Set<string>();
  const stack = [SEAM_SERVER, SEAM_CLIENT];
  let generated = false;
  while (stack.length) {
    const file = stack.pop()!;
    for (const { text } of specifiersOf(file)) {
      const target = resolveLocal(file, text);
      if (!target) {
        if (text.startsWith('.') || text.startsWith('@/')) throw new Error(`${rel(file)}: cannot resolve '${text}'`);
        continue;
      }
      if (inside(MODULE, target)) continue;
      if (inside(GENERATED, target)) {
        generated = true;
        continue;
      }
      if (found.has(target)) continue;
      found.add(target);
      if (/\.(tsx?|mts)$/.test(target)) stack.push(target);
    }
  }
  const files = [...found].sort();
  return generated ? [...files, GENERATED] : files;
}

function scratchApp(dir: string, host: string[]): void {
  const src = path.join(dir, 'src');
  cpSync(MODULE, path.join(src, MODULE_DIR), { recursive: true });
  for (const file of host) cpSync(file, path.join(src, path.relative(SRC, file)), { recursive: true });

  const nodeModules = realpathSync(path.join(ROOT, 'node_modules'));
  symlinkSync(nodeModules, path.join(dir, 'node_modules'), 'dir');
  writeFileSync(
    path.join(dir, 'package.json'),
    `${JSON.stringify({ name: 'lift-check', private: true, type: 'module' })}\n`,
  );

  // The project's compiler options (strictness included) with only the `@/` alias: Next resolves
  // `server-only` itself.
  const { config, error } = ts.readConfigFile(path.join(ROOT, 'tsconfig.json'), ts.sys.readFile);
  if (error) throw new Error(ts.flattenDiagnosticMessageText(error.messageText, '\n'));
  const tsconfig = {
    compilerOptions: { ...config.compilerOptions, paths: { '@/*': ['./src/*'] } },
    include: ['next-env.d.ts', '**/*.ts', '**/*.tsx', '.next/types/**/*.ts'],
    exclude: ['node_modules'],
  };
  writeFileSync(path.join(dir, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`);
  writeFileSync(path.join(dir, 'tsconfig.build.json'), `${JSON.stringify({ extends: './tsconfig.json' })}\n`);
  // The project's next.config; Turbopack must see the real node_modules, which may live elsewhere.
  const nextConfig = readFileSync(path.join(ROOT, 'next.config.mjs'), 'utf8');
  const turbopackRoot = commonAncestor(realpathSync(dir), nodeModules);
  const withRoot = nextConfig.replace(
    /^const nextConfig = \{$/m,
    `const nextConfig = {\n  turbopack: { root: ${JSON.stringify(turbopackRoot)} },`,
  );
  if (withRoot === nextConfig) throw new Error('next.config.mjs: cannot find `const nextConfig = {`');
  writeFileSync(path.join(dir, 'next.config.mjs'), withRoot);

  const files: Record<string, string> = {
    'src/app/layout.tsx': `import type { ReactNode } from 'react';

export default function Layout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>{children}</body>
    </html>
  );
}
`,
    'src/app/page.tsx': `import { Panel } from './panel';

export const dynamic = 'force-dynamic';

export default function Page() {
  return <Panel projectId="p1" userId="u1" />;
}
`,
    'src/app/panel.tsx': `'use client';
import { AssistantPanel, AssistantToggle, InAppAgentProvider } from '@/features/in-app-agent/components';
import { makeTrpcClient, TRPCProvider } from '@/lib/trpc/client';
import { useState } from 'react';

export function Panel({ projectId, userId }: { projectId: string; userId: string }) {
  const [client] = useState(() => makeTrpcClient());
  return (
    <TRPCProvider client={client}>
      <InAppAgentProvider projectId={projectId} userId={userId}>
        <AssistantToggle />
        <AssistantPanel />
      </InAppAgentProvider>
    </TRPCProvider>
  );
}
`,
    'src/app/api/projects/[projectId]/in-app-agent/route.ts': routeFile('POST', 'start'),
    'src/app/api/projects/[projectId]/in-app-agent/runs/[runId]/events/route.ts': routeFile('GET', 'events'),
    'src/app/api/projects/[projectId]/in-app-agent/runs/[runId]/cancel/route.ts': routeFile('POST', 'cancel'),
    'src/app/api/projects/[projectId]/in-app-agent/feedback-export/route.ts': `import { createFeedbackExportHandler } from '@/features/in-app-agent/server/feedback-export';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const GET = createFeedbackExportHandler();
`,
    'src/app/api/projects/[projectId]/in-app-agent/attachments/route.ts': `import { createAttachmentRoutes } from '@/features/in-app-agent/server/attachment-routes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const POST = createAttachmentRoutes().upload;
`,
    'src/app/api/projects/[projectId]/in-app-agent/attachments/[attachmentId]/route.ts': `import { createAttachmentRoutes } from '@/features/in-app-agent/server/attachment-routes';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

const routes = createAttachmentRoutes();
export const GET = routes.serve;
export const DELETE = routes.remove;
`,
    'src/app/api/trpc/[trpc]/route.ts': `import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { agentRouter } from '@/features/in-app-agent/server/router';
import { createTrpcContext, router } from '@/server/trpc';

export const dynamic = 'force-dynamic';

const appRouter = router({ agent: agentRouter });

function handler(req: Request): Promise<Response> {
  return fetchRequestHandler({ endpoint: '/api/trpc', req, router: appRouter, createContext: () => createTrpcContext(req) });
}

export { handler as GET, handler as POST };
`,
  };
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  }
}

function routeFile(method: string, route: string): string {
  return `import { createAgentRoutes } from '@/features/in-app-agent/server/handler';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

export const ${method} = createAgentRoutes().${route};
`;
}

function commonAncestor(a: string, b: string): string {
  const pa = a.split(path.sep);
  const pb = b.split(path.sep);
  let i = 0;
  while (i < pa.length && i < pb.length && pa[i] === pb[i]) i++;
  return pa.slice(0, i).join(path.sep) || path.sep;
}

function run(label: string, command: string, commandArgs: string[], cwd: string): void {
  const t0 = Date.now();
  console.log(`\n> ${label}`);
  execFileSync(command, commandArgs, {
    cwd,
    stdio: 'inherit',
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1', NEXT_BUILD_SKIP_TYPECHECK: '1' },
  });
  console.log(`  ${label}: ok (${((Date.now() - t0) / 1000).toFixed(1)}s)`);
}

// --- main --------------------------------------------------------------------------------------
const started = Date.now();
const seam = seamExports();
const problems = [...scanImports(), ...seam.problems, ...checkReadme(seam.names)];
if (problems.length) {
  console.error(`check:lift FAILED: the module's host imports and its seam disagree (${problems.length}):`);
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
console.log(
  `Imports: every host path of ${rel(MODULE)} goes through host.ts or host-client.ts (${seam.names.size} names, all in its README).`,
);
if (args.has('--scan-only')) process.exit(0);

const host = hostClosure();
const dir = mkdtempSync(path.join(os.tmpdir(), 'lift-check-'));
const cleanup = () => {
  if (!args.has('--keep')) rmSync(dir, { recursive: true, force: true });
};
process.on('exit', cleanup);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => process.exit(130));

try {
  scratchApp(dir, host);
  console.log(
    `Scratch app: ${args.has('--keep') ? dir : 'a temp dir'} with ${rel(MODULE)} and ${host.length} host paths:`,
  );
  console.log(`  ${host.map(rel).join(' ')}`);
  const bin = (name: string) => path.join(ROOT, 'node_modules/.bin', name);
  run('tsc --noEmit (scratch app)', bin('tsc'), ['--noEmit', '-p', '.'], dir);
  run('next build (scratch app)', bin('next'), ['build'], dir);
} catch (err) {
  const status = (err as { status?: number }).status;
  console.error(
    `\ncheck:lift FAILED: the module does not build with only its seam's host files${status ? ` (exit ${status})` : ''}.`,
  );
  if (!status) console.error(err);
  process.exit(1);
}
console.log(`\ncheck:lift passed in ${((Date.now() - started) / 1000).toFixed(1)}s.`);
