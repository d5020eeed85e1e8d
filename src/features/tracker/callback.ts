/**
 * A same-site path to return to after signing in; anything else becomes /projects. Absolute URLs
 * (next-auth sends those) are reduced to their path when their host is one of `sameHosts`. Up to
 * 3,000 characters: an MCP client's consent page carries its sealed authorization request.
 */
export function safeCallbackPath(raw: string | string[] | undefined | null, sameHosts: readonly string[] = []): string {
  let v = Array.isArray(raw) ? raw[0] : raw;
  if (!v || typeof v !== 'string' || v.length > 3000) return '/projects';
  if (/^https?:\/\//i.test(v)) {
    try {
      const u = new URL(v);
      if (!sameHosts.includes(u.host)) return '/projects';
      v = `${u.pathname}${u.search}`;
    } catch {
      return '/projects';
    }
  }
  if (!v.startsWith('/') || v.startsWith('//') || v.startsWith('/\\') || /[\u0000-\u001f]/.test(v)) return '/projects';
  if (v.startsWith('/login') || v.startsWith('/api/')) return '/projects';
  return v;
}
