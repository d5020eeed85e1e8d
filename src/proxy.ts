/**
 * Runs before every request (pages, API routes, files): adds the security headers of
 * `src/server/security-headers.ts`. A page gets a fresh nonce in its Content-Security-Policy; the
 * policy is also set on the request, which is where Next.js reads the nonce to put on its scripts
 * (this needs pages rendered per request: the root layout is dynamic).
 */
import { NextResponse, type NextRequest } from 'next/server';
import { env } from '@/server/env';
import {
  commonSecurityHeaders,
  isPagePath,
  newNonce,
  pageContentSecurityPolicy,
  resourceContentSecurityPolicy,
  type PolicyContext,
} from '@/server/security-headers';

/**
 * https: the request itself, or the public URL (NEXTAUTH_URL), or what a trusted proxy says
 * (X-Forwarded-Proto, only with TRUST_PROXY). HSTS sent over plain http is ignored by browsers.
 */
function servedOverHttps(request: NextRequest): boolean {
  const settings = env();
  if (request.nextUrl.protocol === 'https:') return true;
  if (settings.NEXTAUTH_URL?.startsWith('https://')) return true;
  if (settings.TRUST_PROXY > 0)
    return (request.headers.get('x-forwarded-proto') ?? '').split(',')[0]?.trim() === 'https';
  return false;
}

export function proxy(request: NextRequest): NextResponse {
  const ctx: PolicyContext = { dev: process.env.NODE_ENV === 'development', https: servedOverHttps(request) };
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
