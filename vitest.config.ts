import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const root = path.dirname(fileURLToPath(import.meta.url));
// Tests import server modules outside Next: `server-only` is Next's no-op copy here.
const serverOnly = path.join(root, 'node_modules/next/dist/compiled/server-only/empty.js');

const include = ['tests/unit/**/*.test.ts', 'tests/integration/**/*.test.ts'];
// Files that test what a process does once (its boot, the periodic sweeps, the tracer and the
// log's destination, registered at first use), and files that mock a module (the mock would stay
// for the next files): each gets a process of its own. Every other file
// shares its worker's loaded modules with the files before it (loading the app's modules again
// per file cost about a third of the suite's time); tests/setup/database.ts gives each file the
// environment the worker started with and a database of its own.
const ownProcess = [
  'tests/integration/in-app-agent/integrity.test.ts',
  'tests/integration/in-app-agent/restart.test.ts',
  'tests/integration/in-app-agent/runtime.test.ts',
  'tests/integration/in-app-agent/tracing.test.ts',
  'tests/integration/in-app-agent/waiting.test.ts',
  'tests/integration/ops/log.test.ts',
  'tests/unit/in-app-agent/components/markdown-blocks.test.ts',
];

// The documentation's commands run in a clean environment on the embedded defaults, whatever the
// suite's database: on PostgreSQL (TEST_DATABASE_URL) they would only run again.
const skipped = process.env.TEST_DATABASE_URL ? ['tests/integration/docs/**'] : [];

export default defineConfig({
  resolve: { alias: { '@': path.join(root, 'src'), 'server-only': serverOnly } },
  test: {
    projects: [
      { extends: true, test: { name: 'shared', include, exclude: [...ownProcess, ...skipped], isolate: false } },
      { extends: true, test: { name: 'own-process', include: ownProcess } },
    ],
    globalSetup: ['tests/setup/global.ts'],
    setupFiles: ['tests/setup/database.ts'],
    pool: 'forks',
    // Most files wait on sockets, child processes and the database, not on the CPU: three at a
    // time on two cores (vitest's default would be one). TEST_WORKERS overrides.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 3),
    testTimeout: 30_000,
    hookTimeout: 60_000,
    env: { NODE_ENV: 'test' },
  },
});
