/**
 * Link safety for model-written markdown. Only http(s), mailto and relative URLs survive; anything
 * else (javascript:, data:, vbscript:, file:, custom schemes) is dropped so the link renders as
 * inert text. Browsers ignore tabs, newlines and control characters inside a URL's scheme
 * ("java\tscript:"), so those are stripped before the scheme is read.
 */

export type SafeHref =
  | { kind: 'internal'; href: string }
  | { kind: 'external'; href: string }
  | { kind: 'mailto'; href: string };

const SCHEME = /^([a-z][a-z0-9+.-]*):/i;
// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u0020\u007f-\u009f\u00ad\u200b-\u200f\u2028\u2029\ufeff]/g;

/** Classifies a URL from untrusted text; null when it must not become a link. */
export function classifyHref(raw: string | null | undefined): SafeHref | null {
  if (typeof raw !== 'string') return null;
  const trimmed = raw.trim();
  if (!trimmed || trimmed.length > 2048) return null;
  const compact = trimmed.replace(INVISIBLE, '');
  // A backslash is read as a slash by browsers ("/\evil.com" is protocol-relative): refuse it.
  if (compact.includes('\\')) return null;
  const scheme = SCHEME.exec(compact)?.[1]?.toLowerCase();
  if (scheme) {
    if (scheme === 'http' || scheme === 'https') {
      try {
        const url = new URL(compact);
        return { kind: 'external', href: url.href };
      } catch {
        return null;
      }
    }
    if (scheme === 'mailto') return { kind: 'mailto', href: compact };
    return null;
  }
  // No scheme before the first "/", "?" or "#": relative. A colon earlier than those would be a
  // scheme the regex did not accept (e.g. "1javascript:"), which browsers may still interpret.
  const firstSep = compact.search(/[/?#]/);
  const colon = compact.indexOf(':');
  if (colon !== -1 && (firstSep === -1 || colon < firstSep)) return null;
  if (compact.startsWith('//')) {
    try {
      const url = new URL(`https:${compact}`);
      return { kind: 'external', href: url.href };
    } catch {
      return null;
    }
  }
  return { kind: 'internal', href: trimmed };
}

/** For react-markdown's `urlTransform`: the safe URL, or null to drop the attribute. */
export function safeUrlTransform(url: string): string | null {
  return classifyHref(url)?.href ?? null;
}

/** A same-origin path the app may navigate to (navigate events); null otherwise. */
export function internalPath(href: unknown): string | null {
  if (typeof href !== 'string') return null;
  const c = classifyHref(href);
  if (c?.kind !== 'internal' || !c.href.startsWith('/')) return null;
  return c.href;
}
