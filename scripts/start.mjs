// `npm start`: migrate the database like `npm run dev`, then `next start` on the production build
// (`npm run build` first). Production mode requires NEXTAUTH_SECRET and MCP_OVERRIDE_SECRET, and
// seeds the demo project (well-known logins) only when AUTO_SEED=1 is set explicitly (see docs/configuration.md).
import { runApp } from './run-app.mjs';

await runApp({ mode: 'start' });
