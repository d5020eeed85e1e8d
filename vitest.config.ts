import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const root = path.dirname(fileURLToPath(import.meta.url));
// Tests import server modules outside Next: `server-only` is Next's no-op copy here.
const serverOnly = path.join(root, 'node_modules/next/dist/compiled/server-only/empty.js');

export default defineConfig({
  resolve: { alias: { '@': path.join(root, 'src'), 'server-only': serverOnly } },
  test: {
    include: ['tests/unit/**/*.test.ts', 'tests/integration/**/*.test.ts'],
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
