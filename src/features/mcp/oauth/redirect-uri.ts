/**
 * Redirect URIs of OAuth clients: which ones a client may register, and whether the one an
 * authorization request names is registered.
 *
 * Accepted for registration: `https` URLs; `http` only on a loopback host (`localhost`,
 * `127.0.0.1`, `[::1]`: native apps, RFC 8252 §7.3); an app's private-use scheme (`cursor://…`,
 * `vscode://…`, `com.example.app:/…`, RFC 8252 §7.1). Refused: fragments, user info, schemes a
 * browser runs or reads (`javascript:`, `data:`, `file:`, `blob:`...), plain http elsewhere.
 *
 * Matching is exact, character for character, except that a loopback `http` redirect matches on
 * any port (the app picks a free one when it starts). `localhost` and `127.0.0.1` stay different
 * hosts. Free of server code (unit-tested on its own).
 */

export const MAX_REDIRECT_URI_CHARS = 2000;

const LOOPBACK_HOSTS: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Schemes a browser would run, read from the device, or hand to a mail or phone app. */
const REFUSED_SCHEMES: ReadonlySet<string> = new Set([
  'javascript:',
  'vbscript:',
  'data:',
  'blob:',
  'file:',
  'filesystem:',
  'about:',
  'view-source:',
  'mailto:',
  'tel:',
  'sms:',
  'ftp:',
  'ws:',
  'wss:',
]);

type RedirectUriKind = 'https' | 'loopback' | 'private-use';
export type RedirectUriCheck = { ok: true; kind: RedirectUriKind } | { ok: false; reason: string };

function parse(uri: string): URL | null {
  if (uri.length === 0 || uri.length > MAX_REDIRECT_URI_CHARS) return null;
  // Control characters and spaces would be silently dropped or escaped by the URL parser.
  if (/[\u0000-\u0020\u007f]/.test(uri)) return null;
  try {
    return new URL(uri);
  } catch {
    return null;
  }
}

/** Whether a client may register `uri` as a redirect URI, and what kind it is. */
export function checkRedirectUri(uri: string): RedirectUriCheck {
  const url = parse(uri);
  if (!url) return { ok: false, reason: 'is not an absolute URI' };
  if (uri.includes('#')) return { ok: false, reason: 'must not contain a fragment' };
  if (url.username || url.password) return { ok: false, reason: 'must not contain user information' };
  const scheme = url.protocol;
  if (scheme === 'https:') return url.hostname ? { ok: true, kind: 'https' } : { ok: false, reason: 'has no host' };
  if (scheme === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname)
      ? { ok: true, kind: 'loopback' }
      : { ok: false, reason: 'uses http on a host that is not loopback (use https)' };
  }
  if (REFUSED_SCHEMES.has(scheme)) return { ok: false, reason: `uses the ${scheme} scheme` };
  if (!/^[a-z][a-z0-9+.-]*:$/.test(scheme)) return { ok: false, reason: 'has an invalid scheme' };
  if (!url.host && (url.pathname === '' || url.pathname === '/'))
    return { ok: false, reason: 'names neither a host nor a path' };
  return { ok: true, kind: 'private-use' };
}

/** Whether `requested` is one of `registered` (exact, or a loopback http URI on another port). */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  const req = parse(requested);
  if (req?.protocol !== 'http:' || !LOOPBACK_HOSTS.has(req.hostname) || requested.includes('#')) return false;
  return registered.some((r) => {
    const reg = parse(r);
    return (
      reg !== null &&
      reg.protocol === 'http:' &&
      reg.hostname === req.hostname &&
      reg.pathname === req.pathname &&
      reg.search === req.search &&
      !reg.username &&
      !req.username &&
      !reg.password &&
      !req.password
    );
  });
}

/** The host a redirect goes to, for the consent page ("localhost", "claude.ai", or the app's scheme). */
export function redirectHost(uri: string): string {
  const url = parse(uri);
  if (!url) return uri.slice(0, 100);
  if (url.protocol === 'https:' || url.protocol === 'http:') return url.host;
  return `${url.protocol}//${url.host}`;
}
