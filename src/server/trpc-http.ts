/**
 * The HTTP guards in front of the tRPC handler, applied before tRPC parses anything: a body cap
 * (TRPC_MAX_BODY_BYTES, declared Content-Length first, then while streaming), a batch size cap
 * (TRPC_MAX_BATCH_SIZE procedures per request) and a JSON nesting cap. A refused request gets the
 * error envelope tRPC clients understand (one entry per procedure of a batch), with a stable
 * `appCode`: PAYLOAD_TOO_LARGE (413), BATCH_TOO_LARGE (400), JSON_TOO_DEEP (400). Never a 500.
 */
import 'server-only';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import superjson from 'superjson';
import { jsonTooDeep } from '@/features/mcp/body';
import { readBodyCapped } from '@/server/request-body';
import { TRPC_MAX_BATCH_SIZE, TRPC_MAX_BODY_BYTES, TRPC_MAX_JSON_DEPTH } from '@/lib/trpc/limits';

export const TRPC_ENDPOINT = '/api/trpc';

interface TrpcRefusal {
  status: number;
  code: TRPC_ERROR_CODE_KEY;
  appCode: string;
  message: string;
}

/** The procedure paths a tRPC URL names (`a.b,c.d?batch=1` is a batch of two). */
function procedurePaths(url: URL): { paths: string[]; isBatch: boolean } {
  const path = url.pathname.startsWith(`${TRPC_ENDPOINT}/`) ? url.pathname.slice(TRPC_ENDPOINT.length + 1) : '';
  const isBatch = url.searchParams.get('batch') === '1';
  return { paths: isBatch ? path.split(',') : [path], isBatch };
}

/** A refusal in tRPC's own response format (superjson-serialized error shapes). */
function trpcErrorResponse(url: URL, refusal: TrpcRefusal, headers: Record<string, string> = {}): Response {
  const { paths, isBatch } = procedurePaths(url);
  const entry = (path: string | undefined) => ({
    error: superjson.serialize({
      message: refusal.message,
      code: TRPC_ERROR_CODES_BY_KEY[refusal.code],
      data: { code: refusal.code, httpStatus: refusal.status, path, appCode: refusal.appCode, issues: null },
    }),
  });
  // A batch gets one entry per call (capped, so an oversized batch cannot make the answer large).
  const body = isBatch ? paths.slice(0, TRPC_MAX_BATCH_SIZE).map((p) => entry(p)) : entry(paths[0]);
  return new Response(JSON.stringify(body), {
    status: refusal.status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers },
  });
}

const TOO_LARGE: TrpcRefusal = {
  status: 413,
  code: 'PAYLOAD_TOO_LARGE',
  appCode: 'PAYLOAD_TOO_LARGE',
  message: `The request is too large (over ${TRPC_MAX_BODY_BYTES / 1024} KiB).`,
};
const TOO_DEEP: TrpcRefusal = {
  status: 400,
  code: 'BAD_REQUEST',
  appCode: 'JSON_TOO_DEEP',
  message: `The input is nested deeper than ${TRPC_MAX_JSON_DEPTH} levels.`,
};

/**
 * Checks a tRPC request. Returns a refusal Response, or the request to hand to tRPC (with its body
 * already read, within the cap).
 */
export async function guardTrpcRequest(req: Request): Promise<{ refused: Response } | { req: Request }> {
  const url = new URL(req.url);
  const { paths, isBatch } = procedurePaths(url);
  if (isBatch && paths.length > TRPC_MAX_BATCH_SIZE) {
    return {
      refused: trpcErrorResponse(url, {
        status: 400,
        code: 'BAD_REQUEST',
        appCode: 'BATCH_TOO_LARGE',
        message: `Send at most ${TRPC_MAX_BATCH_SIZE} calls per request.`,
      }),
    };
  }
  const input = url.searchParams.get('input');
  if (input !== null && jsonTooDeep(input, TRPC_MAX_JSON_DEPTH)) return { refused: trpcErrorResponse(url, TOO_DEEP) };
  if (req.method !== 'POST') return { req };

  const body = await readBodyCapped(req, TRPC_MAX_BODY_BYTES);
  if (!body.ok) {
    return body.reason === 'too_large'
      ? { refused: trpcErrorResponse(url, TOO_LARGE, { connection: 'close' }) }
      : {
          refused: trpcErrorResponse(url, {
            status: 400,
            code: 'BAD_REQUEST',
            appCode: 'INVALID_REQUEST',
            message: 'The request body could not be read.',
          }),
        };
  }
  if (jsonTooDeep(body.text, TRPC_MAX_JSON_DEPTH)) return { refused: trpcErrorResponse(url, TOO_DEEP) };
  const headers = new Headers(req.headers);
  headers.delete('content-length');
  return { req: new Request(url, { method: req.method, headers, body: body.text, signal: req.signal }) };
}

/** The Retry-After a failed call asks for (rate limits), as the route's response header. */
export function retryAfterHeader(errors: ReadonlyArray<{ cause?: unknown }>): Record<string, string> {
  let seconds = 0;
  for (const e of errors) {
    const s = (e.cause as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
    if (typeof s === 'number' && s > seconds) seconds = s;
  }
  return seconds > 0 ? { 'retry-after': String(Math.ceil(seconds)) } : {};
}
