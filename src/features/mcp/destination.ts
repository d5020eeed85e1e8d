/**
 * Where the product's outgoing requests may go (server-side request forgery guard), shared by the
 * webhook delivery (webhook.ts) and the fetch of OAuth client metadata documents
 * (oauth/metadata-document.ts). An address is public, private (loopback, private networks, carrier-
 * grade NAT) or forbidden (cloud metadata, link-local, "this network", multicast, reserved). Names are
 * judged at connect time, inside the DNS lookup of that very connection (`guardedLookup`), so a name
 * that resolves differently a second time cannot slip through.
 */
import 'server-only';
import dns from 'node:dns';
import net from 'node:net';

/** Host names of cloud metadata services: refused whatever they resolve to. */
const METADATA_HOSTS: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.com',
  'instance-data',
  'instance-data.ec2.internal',
]);

export type AddressClass = 'public' | 'private' | 'forbidden';

type Range = readonly [base: bigint, prefix: number, bits: 32 | 128];

function v4(a: number, b: number, c: number, d: number): bigint {
  return (BigInt(a) << 24n) | (BigInt(b) << 16n) | (BigInt(c) << 8n) | BigInt(d);
}

const V4_FORBIDDEN: Range[] = [
  [v4(0, 0, 0, 0), 8, 32], // "this network"
  [v4(169, 254, 0, 0), 16, 32], // link-local, incl. 169.254.169.254 (metadata)
  [v4(100, 100, 100, 200), 32, 32], // Alibaba Cloud metadata
  [v4(192, 0, 0, 0), 24, 32], // IETF protocol assignments (incl. 192.0.0.192 Oracle metadata)
  [v4(224, 0, 0, 0), 4, 32], // multicast
  [v4(240, 0, 0, 0), 4, 32], // reserved and broadcast
];
const V4_PRIVATE: Range[] = [
  [v4(127, 0, 0, 0), 8, 32],
  [v4(10, 0, 0, 0), 8, 32],
  [v4(172, 16, 0, 0), 12, 32],
  [v4(192, 168, 0, 0), 16, 32],
  [v4(100, 64, 0, 0), 10, 32], // carrier-grade NAT
  [v4(198, 18, 0, 0), 15, 32], // benchmarking
];
const V6_FORBIDDEN: Range[] = [
  [0n, 128, 128], // ::
  [0xfe80n << 112n, 10, 128], // link-local
  [0xff00n << 112n, 8, 128], // multicast
  [(0xfd00n << 112n) | (0x0ec2n << 96n) | 0x254n, 128, 128], // AWS metadata (fd00:ec2::254)
];
const V6_PRIVATE: Range[] = [
  [1n, 128, 128], // ::1
  [0xfc00n << 112n, 7, 128], // unique local
  [0xfec0n << 112n, 10, 128], // site-local (deprecated)
];

function inRange(value: bigint, [base, prefix, bits]: Range): boolean {
  const shift = BigInt(bits - prefix);
  return value >> shift === base >> shift;
}

function parseV4(ip: string): bigint | null {
  const parts = ip.split('.');
  if (parts.length !== 4) return null;
  let out = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return null;
    out = (out << 8n) | BigInt(Number(p));
  }
  return out;
}

function parseV6(ip: string): bigint | null {
  let text = ip.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  // A trailing dotted IPv4 part (::ffff:1.2.3.4) becomes two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const x = parseV4(dotted[1]!);
    if (x === null) return null;
    text = `${text.slice(0, dotted.index)}${(x >> 16n).toString(16)}:${(x & 0xffffn).toString(16)}`;
  }
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const groups = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  let out = 0n;
  for (const g of groups) {
    if (!/^[0-9a-f]{1,4}$/.test(g)) return null;
    out = (out << 16n) | BigInt(parseInt(g, 16));
  }
  return out;
}

function classifyV4(x: bigint): AddressClass {
  if (V4_FORBIDDEN.some((r) => inRange(x, r))) return 'forbidden';
  if (V4_PRIVATE.some((r) => inRange(x, r))) return 'private';
  return 'public';
}

/** Where an IP address points: the public internet, a private network, or somewhere never allowed. */
export function classifyAddress(ip: string): AddressClass {
  const family = net.isIP(ip);
  if (family === 4) {
    const x = parseV4(ip);
    return x === null ? 'forbidden' : classifyV4(x);
  }
  if (family !== 6) return 'forbidden';
  const x = parseV6(ip);
  if (x === null) return 'forbidden';
  // IPv4 carried in IPv6 is judged as IPv4: mapped (::ffff:0:0/96), compatible (::/96), NAT64
  // (64:ff9b::/96) and 6to4 (2002::/16).
  const low32 = x & 0xffffffffn;
  if (x >> 32n === 0xffffn || (x >> 32n === 0n && x > 1n)) return classifyV4(low32);
  if (x >> 32n === 0x64ff9bn << 64n) return classifyV4(low32);
  if (x >> 112n === 0x2002n) return classifyV4((x >> 80n) & 0xffffffffn);
  if (V6_FORBIDDEN.some((r) => inRange(x, r))) return 'forbidden';
  if (V6_PRIVATE.some((r) => inRange(x, r))) return 'private';
  return 'public';
}

/** Whether the host of a URL (`URL.hostname`) names a cloud metadata service, whatever it resolves to. */
export function isMetadataHost(hostname: string): boolean {
  return METADATA_HOSTS.has(bareHost(hostname));
}

/** A URL's hostname without IPv6 brackets and a trailing dot, lower-cased. */
export function bareHost(hostname: string): string {
  return hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/** Thrown (through the connection's lookup) when a destination is refused. */
class RefusedDestination extends Error {
  readonly code = 'EREFUSEDDESTINATION';
}

/**
 * A DNS lookup for `http(s).request` that refuses the connection (RefusedDestination) unless
 * `allowed` accepts every address the name resolves to.
 */
export function guardedLookup(allowed: (ip: string) => boolean, message: string): net.LookupFunction {
  return (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      if (addresses.length === 0 || addresses.some((a) => !allowed(a.address))) {
        return callback(new RefusedDestination(message), '', 0);
      }
      if (options.all) return callback(null, addresses);
      return callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** Whether an error of a request is (or was caused by) a refused destination. */
export function isRefusedDestination(err: unknown): boolean {
  return err instanceof RefusedDestination || (err as { cause?: unknown } | null)?.cause instanceof RefusedDestination;
}
