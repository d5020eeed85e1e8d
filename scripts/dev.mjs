// `npm run dev`: migrate and seed the database (embedded PGlite under .data/pglite unless
// DATABASE_URL is set), then `next dev` on http://127.0.0.1:3000 (PORT, HOST override).
import { runApp } from './run-app.mjs';

await runApp({ mode: 'dev' });
