// The README and docs/*.md against the repository: every `npm run` script they name exists, every
// relative link and anchor resolves, every repository path in backticks exists, and every
// environment variable they name is read by the app (src/server/env.ts, or the start scripts) or is
// one of the documented variables of the tests and tools. Each problem is reported with its page
// and line. The commands of blocks marked runnable are run by tests/integration/docs/commands.test.ts.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from '@/server/env';
import { docPages, inlineCode, links, type Page, readPage, ROOT } from '../helpers/markdown';

const PAGES = docPages().map(readPage);
// The assistant module's own map links into docs/ and back: its links are checked too.
const MODULE_README = readPage('src/features/in-app-agent/README.md');

const SCRIPTS = Object.keys(
  (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts,
);

/** Folders a repository path in backticks starts with; `agent/`, `server/` and `components/` are the module's. */
const MODULE = 'src/features/in-app-agent';
const PATH_ROOTS: Record<string, string[]> = {
  src: [''],
  tests: [''],
  scripts: [''],
  bench: [''],
  prisma: [''],
  docs: [''],
  deploy: [''],
  '.ci': [''],
  public: [''],
  agent: [],
  server: [`${MODULE}/`, 'src/'],
  components: [`${MODULE}/`],
};

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'generated') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) walk(full, out);
    else if (/\.(ts|tsx|mjs|js|sh|prisma|sql|json)$/.test(name) || dir.endsWith('.ci')) out.push(full);
  }
  return out;
}

const CODE_FILES = [
  ...['src', 'scripts', 'tests', '.ci', 'deploy', 'prisma'].flatMap((d) => walk(path.join(ROOT, d))),
  ...readdirSync(ROOT)
    .filter((f) => /\.(ts|mjs|json)$/.test(f) && f !== 'package-lock.json')
    .map((f) => path.join(ROOT, f)),
];
const CODE = CODE_FILES.map((f) => readFileSync(f, 'utf8'));
/** Every UPPER_SNAKE word of the code: error codes, constants, enum values, variables. */
const CODE_WORDS = new Set(CODE.flatMap((text) => text.match(/\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g) ?? []));

/** What the app reads: its validated settings and what the start scripts read (PORT, HOST). */
const runApp = readFileSync(path.join(ROOT, 'scripts/run-app.mjs'), 'utf8');
const APP_VARIABLES = new Set([
  ...ENV_VARIABLES,
  ...[...runApp.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]!),
]);

/** Variables the tests, scripts and CI read from the environment (not the app's settings). */
const TOOL_CODE = CODE_FILES.filter((f) =>
  /[\\/](scripts|tests|\.ci)[\\/]|vitest\.[\w.]+\.ts$|next\.config\.ts$/.test(f),
).map((f) => readFileSync(f, 'utf8'));
const READ_BY_TOOLS = new Set(
  TOOL_CODE.flatMap((text) =>
    [...text.matchAll(/\b(?:process\.)?env\.([A-Z][A-Z0-9_]*)|process\.env\[['"]([A-Z][A-Z0-9_]*)['"]\]/g)].map(
      (m) => (m[1] ?? m[2])!,
    ),
  ),
);

/** The documented variables of the tests and tools: the table of docs/configuration.md. */
const configuration = PAGES.find((p) => p.file === 'docs/configuration.md');
function toolVariables(page: Page | undefined): Map<string, number> {
  const found = new Map<string, number>();
  if (!page) return found;
  const lines = page.prose.split('\n');
  const start = lines.findIndex((l) => /^## Variables of the tests and tools/.test(l));
  if (start < 0) return found;
  for (let i = start + 1; i < lines.length && !lines[i]!.startsWith('## '); i++) {
    const first = /^\| ([^|]+) \|/.exec(lines[i]!)?.[1] ?? '';
    for (const m of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) found.set(m[1]!, i + 1);
  }
  return found;
}
const TOOL_VARIABLES = toolVariables(configuration);

const ENV_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;
const ASSIGNMENT = /(?:^|[\s;&|(])(?:export\s+)?([A-Z][A-Z0-9_]*)=/g;

function npmScripts(page: Page): Array<{ script: string; line: number }> {
  const found: Array<{ script: string; line: number }> = [];
  page.text.split('\n').forEach((text, i) => {
    for (const m of text.matchAll(/\bnpm run(?:\s+-{1,2}[a-z-]+)*\s+([\w:.-]+)/g))
      found.push({ script: m[1]!, line: i + 1 });
    for (const m of text.matchAll(/\bnpm (start|test)\b/g)) found.push({ script: m[1]!, line: i + 1 });
  });
  return found;
}

function pathCandidates(value: string): string[] | undefined {
  if (!/^[\w.@[\]-]+(?:\/[\w.@[\]-]*)+$/.test(value)) return undefined;
  const first = value.split('/')[0]!;
  if (first === 'agent') return [`${MODULE}/${value.slice('agent/'.length)}`];
  const prefixes = PATH_ROOTS[first];
  return prefixes?.map((p) => `${p}${value}`);
}

function checkPage(page: Page, problems: string[], opts: { paths: boolean; variables: boolean }): void {
  const at = (line: number, what: string) => problems.push(`${page.file}:${line}: ${what}`);

  for (const { script, line } of npmScripts(page)) {
    if (!SCRIPTS.includes(script)) at(line, `\`npm run ${script}\`: package.json has no script "${script}"`);
  }

  for (const { value, line } of links(page)) {
    if (/^[a-z][a-z+.-]*:/i.test(value)) continue; // http:, https:, mailto:
    const [target = '', anchor] = value.split('#');
    const file = target ? path.normalize(path.join(path.dirname(page.file), decodeURIComponent(target))) : page.file;
    if (!existsSync(path.join(ROOT, file))) {
      at(line, `link to ${value}: ${file} does not exist`);
      continue;
    }
    if (anchor === undefined || !file.endsWith('.md')) continue;
    const linked = file === page.file ? page : readPage(file);
    if (!linked.anchors.has(anchor)) at(line, `link to ${value}: ${file} has no heading with the anchor #${anchor}`);
  }

  const code = inlineCode(page);
  if (opts.paths) {
    for (const { value, line } of code) {
      const candidates = pathCandidates(value.replace(/\/$/, ''));
      if (candidates && !candidates.some((c) => existsSync(path.join(ROOT, c)))) {
        at(line, `\`${value}\` looks like a path of the repository, but there is no ${candidates.join(' or ')}`);
      }
    }
  }

  if (!opts.variables) return;
  const assigned: Array<{ name: string; line: number }> = [];
  for (const { value, line } of code) for (const m of value.matchAll(ASSIGNMENT)) assigned.push({ name: m[1]!, line });
  for (const fence of page.fences.filter((f) => /^(bash|sh|shell|console)\b/.test(f.info))) {
    const block = fence.lines.join('\n');
    fence.lines.forEach((text, i) => {
      for (const m of text.matchAll(ASSIGNMENT)) {
        const name = m[1]!;
        // A shell variable of the block (`URL=…` alone on its line, used later as `$URL`) is no setting.
        const shellOnly =
          new RegExp(`^\\s*${name}=("[^"]*"|'[^']*'|\\S+)\\s*$`).test(text) &&
          new RegExp(`\\$\\{?${name}\\b`).test(block);
        if (!shellOnly) assigned.push({ name, line: fence.line + 1 + i });
      }
    });
  }
  for (const { name, line } of assigned) {
    if (!APP_VARIABLES.has(name) && !TOOL_VARIABLES.has(name)) {
      at(
        line,
        `${name}= is set, but the app does not read ${name} and it is no documented variable of the tests and tools`,
      );
    }
  }
  for (const { value, line } of code) {
    if (!ENV_NAME.test(value) || APP_VARIABLES.has(value) || TOOL_VARIABLES.has(value)) continue;
    if (READ_BY_TOOLS.has(value)) {
      at(line, `\`${value}\` is read by a test or script but missing from "Variables of the tests and tools"`);
    } else if (!CODE_WORDS.has(value)) {
      at(
        line,
        `\`${value}\` is no variable the app reads, no documented test or tool variable, and no name in the code`,
      );
    }
  }
}

describe('the documentation', () => {
  it('reads the README and the pages of docs/', () => {
    expect(PAGES.map((p) => p.file)).toEqual(expect.arrayContaining(['README.md', 'docs/configuration.md']));
    expect(PAGES.length).toBeGreaterThan(5);
    expect(TOOL_VARIABLES.size).toBeGreaterThan(10);
    expect(CODE_WORDS.has('RUN_STALE')).toBe(true);
  });

  it('names only existing scripts, links, anchors, paths and variables', () => {
    const problems: string[] = [];
    for (const page of PAGES) checkPage(page, problems, { paths: true, variables: true });
    checkPage(MODULE_README, problems, { paths: false, variables: false });
    expect(problems).toEqual([]);
  });

  it('lists only variables of the tests and tools that a test or script reads', () => {
    const unread = [...TOOL_VARIABLES.keys()].filter(
      (name) => APP_VARIABLES.has(name) || !TOOL_CODE.some((text) => new RegExp(`\\b${name}\\b`).test(text)),
    );
    expect(unread).toEqual([]);
  });
});
