/**
 * Runs in the browser before the app becomes interactive.
 *
 * zod compiles object parsers with `new Function` when the page allows eval, and finds out by
 * trying once. The Content-Security-Policy (src/server/security-headers.ts) allows no eval, so that
 * probe would be refused and reported as a violation on every page. In the browser zod runs
 * without the compiled fast path instead (the inputs parsed here are small).
 */
import { z } from 'zod';

z.config({ jitless: true });
