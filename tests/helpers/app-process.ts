// One app instance in a child process, for tests about several instances on one PostgreSQL
// database: the real route handlers on a real HTTP server (as tests/helpers/http.ts serves them),
// with a short heartbeat and stale sweep so that a killed instance is noticed within seconds, and
// the same process set-up as the production server (src/instrumentation.ts): graceful shutdown on
// SIGTERM/SIGINT and the periodic housekeeping. Prints `READY <url>` when it listens.
// Environment: everything src/server/env.ts reads.
import { createAgentRoutes } from '@/features/in-app-agent/server/handler';
import { startHousekeeping } from '@/server/housekeeping';
import { installShutdownHandlers } from '@/server/shutdown';
import { startTestServer } from './http';

const staleSweepMs = Number(process.env.TEST_STALE_SWEEP_MS ?? 500);
const routes = createAgentRoutes({
  heartbeatMs: Number(process.env.TEST_HEARTBEAT_MS ?? 500),
  watchPollMs: Number(process.env.TEST_WATCH_POLL_MS ?? 200),
});
installShutdownHandlers();
startHousekeeping({ staleSweepMs });
const server = await startTestServer({ agentRoutes: routes });
process.stdout.write(`READY ${server.url}\n`);
