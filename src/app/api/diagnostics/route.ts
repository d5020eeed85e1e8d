import { timingSafeEqual } from 'node:crypto';
import { readDiagnostics } from '@/server/diagnostics';
import { env } from '@/server/env';

/**
 * Process diagnostics for operators and the soak benchmark; off (404) unless DIAGNOSTICS_TOKEN is
 * set, and then only for requests carrying it. `?gc=1` collects garbage first when the process
 * runs with `--expose-gc` (so memory figures show what is retained, not what is pending).
 */
export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

const notFound = () => new Response('Not found', { status: 404, headers: { 'cache-control': 'no-store' } });

export function GET(req: Request): Response {
  const token = env().DIAGNOSTICS_TOKEN;
  if (!token) return notFound();
  const sent = Buffer.from((req.headers.get('authorization') ?? '').replace(/^Bearer\s+/i, ''));
  const expected = Buffer.from(token);
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) return notFound();
  const gc = (globalThis as { gc?: () => void }).gc;
  if (new URL(req.url).searchParams.get('gc') === '1' && gc) gc();
  return Response.json(readDiagnostics(), { headers: { 'cache-control': 'no-store' } });
}
