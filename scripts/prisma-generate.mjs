// Runs `prisma generate` offline. The generated client (prisma-client generator, driver adapters,
// query compiler in Wasm) needs no engine binary, but the CLI insists that a schema-engine path
// exists before it generates; any existing file satisfies that check, it is never executed.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const env = { ...process.env, PRISMA_HIDE_UPDATE_MESSAGE: '1', CHECKPOINT_DISABLE: '1' };
if (!env.PRISMA_SCHEMA_ENGINE_BINARY) env.PRISMA_SCHEMA_ENGINE_BINARY = process.execPath;
const cli = require.resolve('prisma/build/index.js');
const res = spawnSync(process.execPath, [cli, 'generate'], { stdio: 'inherit', env });
process.exit(res.status ?? 1);
