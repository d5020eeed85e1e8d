// What the data-access tests look for: the shapes of a database call in source text, and the
// files to scan. Shared by the product's test (tests/unit/data-access.test.ts) and the assistant
// module's own (tests/unit/in-app-agent/data-access.test.ts).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const MODEL_CALL =
  'findUnique|findUniqueOrThrow|findFirst|findFirstOrThrow|findMany|create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|upsert|delete|deleteMany|count|aggregate|groupBy';

/**
 * The shapes of a query: a Prisma model call, raw query or transaction, raw SQL on a session or
 * driver client, a raw session, or a statement sent straight to the driver (`db.queryRows(`).
 */
const QUERIES: readonly RegExp[] = [
  new RegExp(
    `\\b(?:prisma|tx|db)\\s*\\.\\s*(?:\\$queryRaw|\\$executeRaw|\\$queryRawUnsafe|\\$executeRawUnsafe|\\$transaction|[a-z]\\w*\\s*\\.\\s*(?:${MODEL_CALL})\\s*[(<])`,
  ),
  /\b(?:session|client)\s*\.\s*(?:query|exec)\s*[(<]/,
  /\.\s*withSession\s*\(/,
  /\.\s*(?:queryRows|execute)\s*[(<]/,
];

/** Every .ts/.tsx file below `dir`. */
export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.tsx?$/.test(name) ? [full] : [];
  });
}

/** Every line of `source` that runs a query, as "line: text". */
export function queriesIn(source: string): string[] {
  return source
    .split('\n')
    .map((line, i) => [i + 1, line] as const)
    .filter(([, line]) => QUERIES.some((q) => q.test(line)))
    .map(([n, line]) => `${n}: ${line.trim()}`);
}

/** The files below `root` (paths relative to it) that run queries but are not in `storage`. */
export function offendersIn(root: string, storage: Readonly<Record<string, string>>, files: string[]) {
  const offenders: Record<string, string[]> = {};
  for (const relative of files) {
    if (relative in storage) continue;
    const found = queriesIn(readFileSync(path.join(root, relative), 'utf8'));
    if (found.length) offenders[relative] = found;
  }
  return offenders;
}

/** The listed storage modules that run no query (a stale list). */
export function idleStorage(root: string, storage: Readonly<Record<string, string>>): string[] {
  return Object.keys(storage).filter((relative) => !queriesIn(readFileSync(path.join(root, relative), 'utf8')).length);
}

/** A path below `root`, with forward slashes. */
export const relativeTo = (root: string, file: string) => path.relative(root, file).split(path.sep).join('/');
