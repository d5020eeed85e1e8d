/**
 * Runs before every request (pages, API routes, files) but two: adds the security headers of
 * `src/server/security-headers.ts`. A page gets a fresh nonce in its Content-Security-Policy; the
 * policy is also set on the request, which is where Next.js reads the nonce to put on its scripts
 * (this needs pages rendered per request: the root layout is dynamic).
 *
 * Not before the assistant's run start and its uploads: before a request with a body, Next.js
 * copies the body for the proxy, which delays a run's first byte (about 2 ms) and cuts an upload
 * off at the copy's limit (10 MB). Those two routes add the same headers themselves
 * (`withSecurityHeaders`); the matcher leaves them out only for a project id that is a plain token.
 *
 * A path whose percent-escapes do not decode (`%zz`, a lone `%`, bytes that are not UTF-8) is
 * refused here with 400 `MALFORMED_PATH`: past the proxy, Next.js fails to decode it as a route's
 * parameter and answers 500 with no line in its log.
 */
import { NextResponse, type NextRequest } from 'next/server';
import {
  commonSecurityHeaders,
  isPagePath,
  newNonce,
  pageContentSecurityPolicy,
  policyContext,
  resourceContentSecurityPolicy,
} from '@/server/security-headers';

/** The path has a percent-escape that does not decode to UTF-8. */
function malformedPath(pathname: string): boolean {
  try {
    decodeURIComponent(pathname);
    return false;
  } catch {
    return true;
  }
}

const MALFORMED_PATH_MESSAGE = 'The address has a percent-escape that does not decode (it must be UTF-8).';

/** 400 `MALFORMED_PATH`: JSON for the API, a line of text for a page. */
function malformedPathResponse(page: boolean): NextResponse {
  return page
    ? new NextResponse(`${MALFORMED_PATH_MESSAGE}\n`, {
        status: 400,
        headers: { 'content-type': 'text/plain; charset=utf-8' },
      })
    : NextResponse.json({ error: { code: 'MALFORMED_PATH', message: MALFORMED_PATH_MESSAGE } }, { status: 400 });
}

export function proxy(request: NextRequest): NextResponse {
  const ctx = policyContext(request);
  const { pathname } = request.nextUrl;
  let response: NextResponse;
  let policy: string;
  if (malformedPath(pathname)) {
    policy = resourceContentSecurityPolicy();
    response = malformedPathResponse(isPagePath(pathname));
  } else if (isPagePath(pathname)) {
    const nonce = newNonce();
    policy = pageContentSecurityPolicy(nonce, ctx);
    const requestHeaders = new Headers(request.headers);
    requestHeaders.set('content-security-policy', policy);
    requestHeaders.set('x-nonce', nonce);
    response = NextResponse.next({ request: { headers: requestHeaders } });
  } else {
    policy = resourceContentSecurityPolicy();
    response = NextResponse.next();
  }
  response.headers.set('content-security-policy', policy);
  for (const [name, value] of Object.entries(commonSecurityHeaders(ctx))) response.headers.set(name, value);
  return response;
}

export const config = {
  // (A literal: Next.js reads it from the source.)
  matcher: ['/((?!api/projects/[A-Za-z0-9_-]+/in-app-agent(?:/attachments)?$).*)'],
};
