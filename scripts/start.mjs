// `npm start`: migrate and seed the database like `npm run dev`, then `next start` on the
// production build (`npm run build` first). Production mode requires NEXTAUTH_SECRET and
// MCP_OVERRIDE_SECRET (see README "Configuration").
import { runApp } from './run-app.mjs';

await runApp({ mode: 'start' });
