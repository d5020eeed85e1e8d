/**
 * The client's network address, for per-address limits. A Next.js route handler does not see the
 * socket, so the only source is what a reverse proxy adds to the request: the addresses appended to
 * `X-Forwarded-For`. Those headers are client-controlled unless a proxy we trust wrote them, so they
 * are read only when TRUST_PROXY says how many proxies append to X-Forwarded-For (the address is
 * the TRUST_PROXY-th entry from the right, the one the outermost trusted proxy saw). Without
 * TRUST_PROXY the address is unknown (null) and only per-account limits apply.
 *
 * `X-Real-IP` is used only when X-Forwarded-For is absent (a proxy that sets only X-Real-IP).
 * IPv6 addresses are reduced to their /64 network: one host usually holds a whole /64, so
 * counting single addresses would let it rotate through 2^64 of them.
 */
import 'server-only';
import { isIP } from 'node:net';

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | null {
  if (headers instanceof Headers) return headers.get(name);
  const v = headers[name] ?? headers[name.toLowerCase()];
  return Array.isArray(v) ? v.join(',') : (v ?? null);
}

/** Expands an IPv6 address to 8 groups of 4 hex digits (input already checked by isIP). */
function expandIPv6(ip: string): string[] {
  const [head = '', tail] = ip.toLowerCase().split('::') as [string, string | undefined];
  const parse = (s: string) => (s ? s.split(':') : []);
  let left = parse(head);
  let right = tail === undefined ? [] : parse(tail);
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two groups.
  const last = (tail === undefined ? left : right).at(-1);
  if (last?.includes('.')) {
    const [a, b, c, d] = last.split('.').map(Number) as [number, number, number, number];
    const groups = [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
    if (tail === undefined) left = [...left.slice(0, -1), ...groups];
    else right = [...right.slice(0, -1), ...groups];
  }
  const missing = 8 - left.length - right.length;
  return [...left, ...Array<string>(tail === undefined ? 0 : missing).fill('0'), ...right].map((g) =>
    g.padStart(4, '0'),
  );
}

/** The address as a limit key component: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 as its /64. */
function normalizeAddress(raw: string): string | null {
  let ip = raw.trim();
  if (ip.startsWith('[') && ip.includes(']')) ip = ip.slice(1, ip.indexOf(']'));
  // "1.2.3.4:5678" (some load balancers add the port)
  if (/^\d{1,3}(\.\d{1,3}){3}:\d{1,5}$/.test(ip)) ip = ip.slice(0, ip.lastIndexOf(':'));
  const version = isIP(ip);
  if (version === 4) return ip;
  if (version !== 6) return null;
  const groups = expandIPv6(ip);
  if (groups.slice(0, 5).every((g) => g === '0000') && groups[5] === 'ffff') {
    const n = parseInt(groups[6]! + groups[7]!, 16);
    return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
  }
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/**
 * The client address according to the `trustedProxies` nearest proxies, or null when no proxy is
 * trusted or the headers hold no usable address.
 */
export function clientAddress(headers: HeaderSource, trustedProxies: number): string | null {
  if (trustedProxies <= 0) return null;
  const forwarded = header(headers, 'x-forwarded-for');
  if (forwarded !== null) {
    const hops = forwarded
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const entry = hops[hops.length - trustedProxies];
    return entry === undefined ? null : normalizeAddress(entry);
  }
  const real = header(headers, 'x-real-ip');
  return real ? normalizeAddress(real) : null;
}
