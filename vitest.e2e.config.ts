import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import { e2eServerCount } from './tests/e2e/servers';

const root = path.dirname(fileURLToPath(import.meta.url));
// Tests import server modules outside Next: `server-only` is Next's no-op copy here.
const serverOnly = path.join(root, 'node_modules/next/dist/compiled/server-only/empty.js');

export default defineConfig({
  resolve: { alias: { '@': path.join(root, 'src'), 'server-only': serverOnly } },
  test: {
    include: ['tests/e2e/**/*.test.ts'],
    globalSetup: ['tests/e2e/global-setup.ts'],
    pool: 'forks',
    // One worker per app server (tests/e2e/servers.ts): files side by side, a server one at a time.
    maxWorkers: e2eServerCount(),
    fileParallelism: e2eServerCount() > 1,
    testTimeout: 90_000,
    hookTimeout: 180_000,
  },
});
