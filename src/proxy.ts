/**
 * Runs before every request (pages, API routes, files) but two: adds the security headers of
 * `src/server/security-headers.ts`. A page gets a fresh nonce in its Content-Security-Policy; the
 * policy is also set on the request, which is where Next.js reads the nonce to put on its scripts
 * (this needs pages rendered per request: the root layout is dynamic).
 *
 * Not before the assistant's run start and its uploads: before a request with a body, Next.js
 * copies the body for the proxy, which delays a run's first byte (about 2 ms) and cuts an upload
 * off at the copy's limit (10 MB). Those two routes add the same headers themselves
 * (`withSecurityHeaders`).
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

export function proxy(request: NextRequest): NextResponse {
  const ctx = policyContext(request);
  let response: NextResponse;
  let policy: string;
  if (isPagePath(request.nextUrl.pathname)) {
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
  matcher: ['/((?!api/projects/[^/]+/in-app-agent(?:/attachments)?$).*)'],
};
