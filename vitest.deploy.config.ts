import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { defineConfig } from 'vitest/config';

const root = path.dirname(fileURLToPath(import.meta.url));
// Tests import server modules outside Next: `server-only` is Next's no-op copy here.
const serverOnly = path.join(root, 'node_modules/next/dist/compiled/server-only/empty.js');

// The deployment suite: two production instances behind nginx, started by `.ci/run` (see
// tests/deploy/cluster.ts). Not part of `npm test`.
export default defineConfig({
  resolve: { alias: { '@': path.join(root, 'src'), 'server-only': serverOnly } },
  test: {
    include: ['tests/deploy/**/*.test.ts'],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
