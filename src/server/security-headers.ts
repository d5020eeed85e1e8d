/**
 * The security headers of every response, in ONE place: a host product embedding the assistant
 * adjusts them here (an analytics script host, an image CDN, a longer HSTS...). `src/proxy.ts`
 * applies them to every request, with a fresh nonce per page.
 *
 * - Pages: a Content-Security-Policy that runs only the app's own scripts. Next.js puts the nonce of
 *   the request's policy on its framework and page scripts, and 'strict-dynamic' lets those load
 *   the chunks they need; nothing else runs (no inline script, no eval in production, no other
 *   host). Styles allow 'unsafe-inline': React renders `style` attributes (the panel's width, for
 *   one) which a nonce cannot cover, and Tailwind's stylesheet is the app's own; CSS cannot run
 *   script, and with img-src, font-src and connect-src limited to 'self' injected CSS cannot send
 *   data anywhere either.
 * - API responses and files (JSON, event streams, images): `default-src 'none'`, nothing in them
 *   may run or load anything.
 * - Everywhere: no framing by any site (`frame-ancestors 'none'` and X-Frame-Options DENY, for
 *   older browsers): an approval card is exactly what a clickjacking page would put under a fake
 *   button. No MIME sniffing, no referrer to other sites, and HSTS when served over https.
 */
import 'server-only';
import { env } from './env';

export interface SecurityPolicy {
  /** Extra sources per page CSP directive, e.g. { 'script-src': ['https://plausible.io'] }. */
  extraSources: Partial<
    Record<'script-src' | 'style-src' | 'img-src' | 'font-src' | 'connect-src' | 'frame-src', readonly string[]>
  >;
  /** Who may frame the app's pages: [] means nobody (and X-Frame-Options: DENY). */
  frameAncestors: readonly string[];
  referrerPolicy: string;
  /** Strict-Transport-Security max-age over https; 0 sends no HSTS. */
  hstsMaxAgeSeconds: number;
  hstsIncludeSubDomains: boolean;
  permissionsPolicy: string;
}

const SECURITY_POLICY: SecurityPolicy = {
  extraSources: {},
  frameAncestors: [],
  // Full URL to the app's own pages (Origin headers stay intact), nothing to other sites.
  referrerPolicy: 'same-origin',
  hstsMaxAgeSeconds: 31_536_000,
  hstsIncludeSubDomains: false,
  permissionsPolicy: 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

export interface PolicyContext {
  /** Development mode: React needs eval for its error overlays and stack reconstruction. */
  dev: boolean;
  /** The request reached the app over https (directly or through a trusted proxy). */
  https: boolean;
}

function directives(entries: Array<[string, readonly string[]]>): string {
  return entries.map(([name, values]) => (values.length ? `${name} ${values.join(' ')}` : name)).join('; ');
}

function frameAncestors(policy: SecurityPolicy): string[] {
  return policy.frameAncestors.length ? [...policy.frameAncestors] : ["'none'"];
}

/** The Content-Security-Policy of an HTML page rendered with `nonce`. */
export function pageContentSecurityPolicy(
  nonce: string,
  ctx: PolicyContext,
  policy: SecurityPolicy = SECURITY_POLICY,
): string {
  const extra = (d: keyof SecurityPolicy['extraSources']) => policy.extraSources[d] ?? [];
  return directives([
    ['default-src', ["'self'"]],
    [
      'script-src',
      ["'self'", `'nonce-${nonce}'`, "'strict-dynamic'", ...(ctx.dev ? ["'unsafe-eval'"] : []), ...extra('script-src')],
    ],
    ['style-src', ["'self'", "'unsafe-inline'", ...extra('style-src')]],
    ['img-src', ["'self'", 'data:', 'blob:', ...extra('img-src')]],
    ['font-src', ["'self'", ...extra('font-src')]],
    ['connect-src', ["'self'", ...extra('connect-src')]],
    ['frame-src', extra('frame-src').length ? [...extra('frame-src')] : ["'none'"]],
    ['object-src', ["'none'"]],
    ['base-uri', ["'self'"]],
    ['form-action', ["'self'"]],
    ['frame-ancestors', frameAncestors(policy)],
    ...(ctx.https ? ([['upgrade-insecure-requests', []]] as Array<[string, string[]]>) : []),
  ]);
}

/** The Content-Security-Policy of everything that is not a page: nothing may run or load. */
export function resourceContentSecurityPolicy(policy: SecurityPolicy = SECURITY_POLICY): string {
  return directives([
    ['default-src', ["'none'"]],
    ['frame-ancestors', frameAncestors(policy)],
    ['base-uri', ["'none'"]],
    ['form-action', ["'none'"]],
  ]);
}

/** The headers every response carries, besides its Content-Security-Policy. */
export function commonSecurityHeaders(
  ctx: PolicyContext,
  policy: SecurityPolicy = SECURITY_POLICY,
): Record<string, string> {
  const headers: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    'referrer-policy': policy.referrerPolicy,
    'permissions-policy': policy.permissionsPolicy,
    'cross-origin-opener-policy': 'same-origin',
  };
  if (policy.frameAncestors.length === 0) headers['x-frame-options'] = 'DENY';
  if (ctx.https && policy.hstsMaxAgeSeconds > 0) {
    headers['strict-transport-security'] =
      `max-age=${policy.hstsMaxAgeSeconds}${policy.hstsIncludeSubDomains ? '; includeSubDomains' : ''}`;
  }
  return headers;
}

/**
 * Whether a path is an HTML page (or the React Server Component payload of one), as opposed to an
 * API route or a file. next-auth's own HTML pages under /api/auth (sign-out confirmation, errors)
 * count as pages: they have inline styles. Discovery documents under /.well-known are JSON.
 */
export function isPagePath(pathname: string): boolean {
  if (pathname.startsWith('/api/auth/')) return true;
  if (pathname.startsWith('/api/') || pathname.startsWith('/_next/') || pathname.startsWith('/.well-known/'))
    return false;
  // Files (icon.svg, robots.txt, chunks) have an extension in their last segment; pages do not.
  return !/\.[A-Za-z0-9]+$/.test(pathname);
}

/** A fresh nonce: 128 random bits, base64. */
export function newNonce(): string {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return btoa(String.fromCharCode(...bytes));
}

/**
 * https: the request itself, or the public URL (NEXTAUTH_URL), or what a trusted proxy says
 * (X-Forwarded-Proto, only with TRUST_PROXY). HSTS sent over plain http is ignored by browsers.
 */
function servedOverHttps(request: Request): boolean {
  const settings = env();
  if (new URL(request.url).protocol === 'https:') return true;
  if (settings.NEXTAUTH_URL?.startsWith('https://')) return true;
  if (settings.TRUST_PROXY > 0)
    return (request.headers.get('x-forwarded-proto') ?? '').split(',')[0]?.trim() === 'https';
  return false;
}

/** What a request's policies depend on: development mode, and whether it was served over https. */
export function policyContext(request: Request): PolicyContext {
  return { dev: process.env.NODE_ENV === 'development', https: servedOverHttps(request) };
}

/** The headers of a response that is not a page: its policy and the common ones. */
function resourceSecurityHeaders(request: Request): Record<string, string> {
  return {
    'content-security-policy': resourceContentSecurityPolicy(),
    ...commonSecurityHeaders(policyContext(request)),
  };
}

/**
 * A route handler whose answers carry the security headers of a resource, for the routes the proxy
 * does not run before (see `config` in `src/proxy.ts`); a header the route set itself is kept (an
 * attachment's stricter policy, for one).
 */
export function withSecurityHeaders<Rest extends unknown[]>(
  handler: (request: Request, ...rest: Rest) => Promise<Response>,
): (request: Request, ...rest: Rest) => Promise<Response> {
  return async (request, ...rest) => {
    const response = await handler(request, ...rest);
    const missing = Object.entries(resourceSecurityHeaders(request)).filter(([name]) => !response.headers.has(name));
    try {
      for (const [name, value] of missing) response.headers.set(name, value);
      return response;
    } catch {
      // Headers that cannot change (a redirect made with `Response.redirect`): the same answer anew.
      const headers = new Headers(response.headers);
      for (const [name, value] of missing) headers.set(name, value);
      return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
    }
  };
}
