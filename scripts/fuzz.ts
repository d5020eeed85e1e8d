/**
 * `npm run fuzz`: sends malformed requests to the assistant's route, its attachment upload route,
 * tRPC, the MCP endpoint and the next-auth routes, and prints a JSON report: answers by status, and
 * every 500 with its request. Exits 1 when any request was answered 500, a stream ended with
 * INTERNAL_ERROR, a request that sent all it declared got no answer, or (in-process target) an
 * attachment was stored half (a row whose chunks do not add up to its size and hash).
 *
 * Uploads: truncated and byte-damaged images, bodies over the size limit (and Content-Lengths that
 * lie about them), archives and other binaries, decompression bombs (headers claiming huge images),
 * invalid UTF-8 and NUL bytes in text, HTML and SVG, with odd names and content types.
 *
 * Target: the app's route handlers on a real HTTP server in this process (tests/helpers/http.ts)
 * with a fresh in-memory PGlite and a project of its own; or a running app at FUZZ_BASE_URL (it
 * signs in as FUZZ_EMAIL / FUZZ_PASSWORD, default the demo owner, and creates a project key).
 *
 * Requests are written on raw sockets, so anything goes: invalid UTF-8, NUL bytes, malformed
 * percent-encoding in paths and cookies, odd methods and content types, huge and deeply nested
 * JSON. Random but reproducible: FUZZ_SEED (default 1), FUZZ_REQUESTS (default 10000),
 * FUZZ_CONCURRENCY (default 8), FUZZ_TIMEOUT_MS per request (default 60000; an assistant run streams).
 * FUZZ_VERBOSE=1 keeps the server log (refusals are logged; the report is the output that matters).
 */
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import fc from 'fast-check';

const SEED = Number(process.env.FUZZ_SEED ?? 1);
const TOTAL = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY ?? 8);
const TIMEOUT_MS = Number(process.env.FUZZ_TIMEOUT_MS ?? 60_000);

// ------------------------------------------------------------------------------------------------
// The target
// ------------------------------------------------------------------------------------------------

interface Target {
  baseUrl: string;
  projectId: string;
  /** A valid session cookie (`name=value`) of a project member. */
  cookie: string;
  /** A valid project API key secret. */
  mcpSecret: string;
  /** The stored attachments, and those whose bytes do not add up (in-process target only). */
  attachments?(): Promise<{ stored: number; storedHalf: string[] }>;
  close(): Promise<void>;
}

/** The largest upload the in-process target takes (small, so oversized bodies are cheap to send). */
const LOCAL_MAX_UPLOAD = 256 * 1024;

async function localTarget(): Promise<Target> {
  Object.assign(process.env, {
    NODE_ENV: 'test',
    PGLITE_DIR: 'memory://',
    AUTO_SEED: '0',
    // Limits would answer most requests 429 after a while; the point is to reach the code behind.
    TRPC_MUTATIONS_PER_MINUTE: '100000',
    AGENT_RATE_LIMIT_PER_MINUTE: '10000',
    AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
    MCP_CALLS_PER_KEY_PER_MINUTE: '1000000',
    AGENT_MODEL_PROVIDER: 'demo',
    AGENT_ATTACHMENT_MAX_BYTES: String(LOCAL_MAX_UPLOAD),
  });
  delete process.env.DATABASE_URL;
  const { startTestServer } = await import('../tests/helpers/http');
  const { createProject } = await import('../tests/helpers/fixtures');
  const { createProjectKey } = await import('@/server/api-keys');
  const { KEY_SCOPES } = await import('@/features/mcp/key-scopes');
  const { getPrisma, closeDb } = await import('@/server/db');
  const { stopStaleSweep } = await import('@/features/in-app-agent/server/persistence');
  const server = await startTestServer();
  process.env.NEXTAUTH_URL = server.url;
  (await import('@/server/env')).resetEnvCache();
  const project = await createProject('Fuzz');
  const key = await createProjectKey(await getPrisma(), {
    projectId: project.id,
    name: 'fuzz',
    createdById: project.users.OWNER.id,
    scopes: KEY_SCOPES,
  });
  return {
    baseUrl: server.url,
    projectId: project.id,
    cookie: project.users.MEMBER.cookie,
    mcpSecret: key.secret,
    async attachments() {
      const prisma = await getPrisma();
      const rows = await prisma.agentAttachment.findMany({
        select: { id: true, size: true, sha256: true, chunkCount: true },
      });
      const storedHalf: string[] = [];
      for (const row of rows) {
        const chunks = await prisma.agentAttachmentChunk.findMany({
          where: { attachmentId: row.id },
          orderBy: { index: 'asc' },
          select: { data: true },
        });
        const bytes = Buffer.concat(chunks.map((c) => Buffer.from(c.data)));
        const hash = createHash('sha256').update(bytes).digest('hex');
        if (chunks.length !== row.chunkCount || bytes.length !== row.size || hash !== row.sha256)
          storedHalf.push(row.id);
      }
      return { stored: rows.length, storedHalf };
    },
    async close() {
      await server.close();
      stopStaleSweep();
      await closeDb();
    },
  };
}

/** A running app: sign in through next-auth, find a project, create a key (the user must own it). */
async function remoteTarget(baseUrl: string): Promise<Target> {
  const email = process.env.FUZZ_EMAIL ?? 'owner@example.com';
  const password = process.env.FUZZ_PASSWORD ?? 'demo-password';
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const csrfCookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const signIn = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: csrfCookie },
    body: new URLSearchParams({ csrfToken, email, password, json: 'true' }),
  });
  const cookie = signIn.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.includes('session-token'));
  if (!cookie) throw new Error(`Could not sign in to ${baseUrl} as ${email} (status ${signIn.status}).`);
  const trpc = async (path: string, input: unknown, method: 'GET' | 'POST' = 'GET') => {
    const wire = encodeURIComponent(JSON.stringify({ json: input }));
    const res = await fetch(`${baseUrl}/api/trpc/${path}${method === 'GET' ? `?input=${wire}` : ''}`, {
      method,
      headers: { cookie, origin: baseUrl, 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: JSON.stringify({ json: input }) } : {}),
    });
    const answer = (await res.json()) as {
      result?: { data: { json: unknown } };
      error?: { json?: { message?: string } };
    };
    if (!answer.result)
      throw new Error(`${path} answered ${res.status}: ${answer.error?.json?.message ?? 'no result'}`);
    return answer.result.data.json;
  };
  const projects = (await trpc('tracker.projects.list', undefined)) as Array<{ id: string; role: string }>;
  const own = projects.find((p) => p.role === 'OWNER' || p.role === 'ADMIN') ?? projects[0];
  if (!own) throw new Error(`${email} has no project.`);
  // Every scope, as the in-process target's key has: the fuzzer reaches every tool.
  const { KEY_SCOPES } = await import('@/features/mcp/key-scopes');
  const key = (await trpc(
    'tracker.apiKeys.create',
    { projectId: own.id, name: `fuzz ${Date.now()}`, scopes: KEY_SCOPES },
    'POST',
  )) as { secret: string };
  return { baseUrl, projectId: own.id, cookie, mcpSecret: key.secret, close: async () => undefined };
}

// ------------------------------------------------------------------------------------------------
// Generation
// ------------------------------------------------------------------------------------------------

/** A small seeded PRNG (mulberry32): the same seed sends the same requests. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = prng(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const chance = (p: number) => rand() < p;
const int = (max: number) => Math.floor(rand() * max);

/** Random JSON values and strings from fast-check, drawn once (reproducible with the seed). */
const JSON_VALUES = fc.sample(fc.jsonValue({ maxDepth: 4 }), { seed: SEED, numRuns: 400 });
const STRINGS = fc.sample(fc.string({ unit: 'binary', maxLength: 40 }), { seed: SEED + 1, numRuns: 400 });
const randomString = () => pick(STRINGS);
const randomJson = () => pick(JSON_VALUES);

const BAD_PERCENT = ['%E0%A4%A', '%', '%zz', '%C0%80', '%ED%A0%80', '%FF', '%00', '%%41', '%u0041'];
const NASTY_TEXT = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff\ud800',
  '\u202e',
  '\ufeff',
  '\u0007\u001b[31m',
  'x'.repeat(5000),
  '../../etc/passwd',
  '\'; DROP TABLE "Issue"; --',
  '<script>alert(1)</script>',
  '%E0%A4%A',
  '{{7*7}}',
  '🙂'.repeat(100),
];
const nasty = () => (chance(0.5) ? pick(NASTY_TEXT) : randomString());
const nastyValue = (): unknown =>
  pick<() => unknown>([
    nasty,
    () => int(2) - 1e308 * int(3),
    () => -1,
    () => 2 ** 53 + 1,
    () => 1.5,
    () => null,
    () => true,
    () => [],
    () => ({}),
    randomJson,
    () => ({ __proto__: { polluted: true }, constructor: { prototype: { x: 1 } } }),
  ])();

/** Percent-encodes any string; a lone surrogate becomes the (invalid) UTF-8 bytes of one. */
function encode(text: string): string {
  return text
    .split(/([\ud800-\udfff])/)
    .map((part) => (/^[\ud800-\udfff]$/.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

function deepJson(depth: number, open = pick(['[', '{"a":'])): string {
  const close = open === '[' ? ']' : '}';
  return `${open.repeat(depth)}1${close.repeat(depth)}`;
}

/** Byte-level damage to an encoded body: invalid UTF-8, NUL, truncation, a BOM. */
function damage(body: Buffer): Buffer {
  // Half the bodies stay well-formed bytes (their damage is in the values).
  if (chance(0.5)) return body;
  switch (int(7)) {
    case 0:
      return Buffer.concat([body, Buffer.from([0xff, 0xfe, 0xc0, 0x80])]);
    case 1: {
      const at = int(body.length + 1);
      return Buffer.concat([body.subarray(0, at), Buffer.from([0x00]), body.subarray(at)]);
    }
    case 2:
      return body.subarray(0, int(body.length + 1));
    case 3:
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]);
    case 4:
      return Buffer.concat([
        body.subarray(0, int(body.length + 1)),
        Buffer.from([0xe2, 0x82]),
        body.subarray(int(body.length + 1)),
      ]);
    case 5:
      return Buffer.from(
        body.toString('latin1').replace(/"/g, () => (chance(0.1) ? '\\u0000"' : '"')),
        'latin1',
      );
    default:
      return body;
  }
}

/** Replaces or drops one field at a random path of a JSON value. */
function mutate(value: unknown, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== 'object') return chance(0.7) ? nastyValue() : value;
  // An array whose `__proto__` an earlier mutation replaced is no longer iterable: copied by index.
  const copy: Record<string, unknown> | unknown[] = Array.isArray(value)
    ? Array.from(value as ArrayLike<unknown>)
    : { ...(value as Record<string, unknown>) };
  const keys = Object.keys(copy);
  if (keys.length === 0 || chance(0.15)) {
    (copy as Record<string, unknown>)[pick(['extra', '__proto__', 'constructor', nasty()])] = nastyValue();
    return copy;
  }
  const k = pick(keys);
  if (chance(0.2)) delete (copy as Record<string, unknown>)[k];
  else (copy as Record<string, unknown>)[k] = mutate((copy as Record<string, unknown>)[k], depth + 1);
  return copy;
}

interface FuzzRequest {
  area: 'agent' | 'attachments' | 'trpc' | 'mcp' | 'auth';
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

const METHODS = ['POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'TRACE', 'FOO'];
const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json, text/html',
  '',
  '\u00ff\u00fe',
  `application/${'x'.repeat(3000)}`,
];

function cookieHeader(t: Target): string | null {
  // Half the requests carry a valid session, so they reach the code behind authentication.
  if (chance(0.5)) return t.cookie;
  return pick<() => string | null>([
    () => null,
    () => `next-auth.session-token=${pick(BAD_PERCENT)}`,
    () => `next-auth.session-token.0=${pick(BAD_PERCENT)}; next-auth.session-token.1=abc`,
    () => `${t.cookie}; junk=${pick(BAD_PERCENT)}`,
    () => `next-auth.session-token=${randomBytes(int(3000) + 1).toString('base64url')}`,
    () => `next-auth.session-token=${t.cookie.split('=')[1]!.slice(0, 40)}`,
    () => `__Secure-next-auth.session-token="${pick(BAD_PERCENT)}"`,
    () => Array.from({ length: 300 }, (_, i) => `c${i}=${pick(BAD_PERCENT)}`).join('; '),
    () => `=; ;;; =${pick(BAD_PERCENT)}`,
    () => `next-auth.session-token=\u00ff\u00fe\u00fd`,
  ])();
}

function commonHeaders(t: Target, contentType: string | null): Array<[string, string]> {
  const h: Array<[string, string]> = [];
  if (contentType !== null) h.push(['content-type', contentType]);
  const cookie = cookieHeader(t);
  if (cookie !== null) h.push(['cookie', cookie]);
  if (chance(0.8))
    h.push([
      'origin',
      chance(0.7) ? t.baseUrl : pick(['null', 'http://evil.example', 'not a url', `${t.baseUrl}${pick(BAD_PERCENT)}`]),
    ]);
  if (chance(0.1)) h.push(['sec-fetch-site', pick(['cross-site', 'same-origin', 'none', '\u00ff'])]);
  if (chance(0.1))
    h.push(['x-forwarded-for', pick(['1.2.3.4', 'garbage', '::ffff:1.2.3.4, 5.6.7.8', ', ,', '\u00ff'])]);
  if (chance(0.05)) h.push(['x-forwarded-host', pick(['evil.example', '', '\u00ff'])]);
  if (chance(0.05)) h.push(['content-length', pick(['-1', 'abc', '99999999999', '1e3', ' 5'])]);
  return h;
}

function jsonBody(value: unknown): Buffer {
  let text: string;
  if (chance(0.05)) text = deepJson(int(20_000) + 100);
  else if (chance(0.02)) text = JSON.stringify({ pad: 'x'.repeat(600 * 1024 + int(600 * 1024)) });
  else text = JSON.stringify(chance(0.8) ? mutate(value) : value) ?? 'null';
  return damage(Buffer.from(text, 'utf8'));
}

function agentRequest(t: Target): FuzzRequest {
  const valid = {
    threadId: 'new',
    runId: 'r',
    messages: [
      { id: 'm', role: 'user', content: pick(['list open issues', 'summarize the project', 'hello', 'show issue 1']) },
    ],
    tools: [],
    context: [],
    forwardedProps: { pageContext: { route: '/projects', title: 'Issues', issueNumber: 1, selection: 'x' } },
  };
  const variants = [
    valid,
    { ...valid, threadId: nasty() },
    { ...valid, messages: [{ id: 'm', role: 'user', content: [{ type: 'text', text: nasty() }] }] },
    {
      ...valid,
      resume: [{ interruptId: nasty(), status: 'resolved', payload: { approved: true, args: nastyValue() } }],
    },
    {
      ...valid,
      threadId: `c_${nasty()}`,
      resume: [{ interruptId: 'apr_x', status: pick(['resolved', 'cancelled', nasty()]) }],
    },
    { ...valid, forwardedProps: { pageContext: nastyValue() } },
    {
      ...valid,
      messages: [
        {
          id: 'm',
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            ...Array.from({ length: int(8) }, () => ({
              type: pick(['image', 'document', 'file', nasty()]),
              source: chance(0.8) ? { type: pick(['file', 'url', 'data']), value: attachmentId() } : nastyValue(),
              ...(chance(0.2)
                ? { attachmentId: attachmentId(), mediaType: 'image/png', name: nasty(), size: nastyValue() }
                : {}),
            })),
          ],
        },
      ],
    },
  ];
  const projectPath = pick([
    encode(t.projectId),
    encode(t.projectId),
    pick(BAD_PERCENT),
    'p_nope',
    encode(nasty()).slice(0, 300),
    `${t.projectId}${pick(BAD_PERCENT)}`,
  ]);
  return {
    area: 'agent',
    method: chance(0.9) ? 'POST' : pick(METHODS),
    path: `/api/projects/${projectPath}/in-app-agent${chance(0.05) ? `?${pick(BAD_PERCENT)}` : ''}`,
    headers: commonHeaders(t, chance(0.85) ? 'application/json' : pick(CONTENT_TYPES)),
    body: jsonBody(pick(variants)),
  };
}

// ------------------------------------------------------------------------------------------------
// Attachments: uploads and the routes of one attachment
// ------------------------------------------------------------------------------------------------

/** A PNG chunk (length, type, data, CRC). */
function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  let c = ~0;
  for (const byte of body) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(~c >>> 0);
  return Buffer.concat([len, body, crc]);
}

/** Headers claiming huge images over a few bytes of data: decompression bombs. */
function bombs(): Buffer[] {
  const ihdr = (w: number, h: number) => {
    const b = Buffer.alloc(13);
    b.writeUInt32BE(w, 0);
    b.writeUInt32BE(h, 4);
    b[8] = 8;
    b[9] = 2;
    return b;
  };
  const png = (w: number, h: number) =>
    Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      pngChunk('IHDR', ihdr(w, h)),
      pngChunk('IDAT', Buffer.alloc(32)),
      pngChunk('IEND', Buffer.alloc(0)),
    ]);
  const gif = Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0]),
    Buffer.alloc(20),
  ]);
  // A JPEG whose frame header (SOF0) says 65,500 x 65,500.
  const jpeg = Buffer.from([
    0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0xff, 0xdc, 0xff, 0xdc, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03,
    0x11, 0x01, 0xff, 0xd9,
  ]);
  return [png(100_000, 100_000), png(30_000, 30_000), png(8_000, 7_000), png(0, 5), gif, jpeg];
}

/** Real images to damage and cut (made once, with the same library the server decodes with). */
const SAMPLE_IMAGES: Buffer[] = await (async () => {
  const sharp = (await import('sharp')).default;
  const base = () => sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } });
  return [
    await base().png().toBuffer(),
    await base().jpeg().toBuffer(),
    await base().webp().toBuffer(),
    await base().gif().toBuffer(),
  ];
})();
const BOMBS = bombs();

function uploadBody(): Buffer {
  const image = pick(SAMPLE_IMAGES);
  return pick<() => Buffer>([
    () => image,
    () => image.subarray(0, int(image.length)), // truncated
    () => {
      const copy = Buffer.from(image);
      for (let i = 0; i < 1 + int(8); i++) copy[8 + int(copy.length - 8)] = int(256);
      return copy; // damaged
    },
    () => pick(BOMBS),
    () => Buffer.alloc(LOCAL_MAX_UPLOAD + 1 + int(64 * 1024), 0x61), // oversized
    () => Buffer.concat([Buffer.from('PK\u0003\u0004', 'latin1'), randomBytes(int(200))]), // an archive
    () => Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46]), randomBytes(int(200))]), // an executable
    () => randomBytes(int(2000)),
    () => Buffer.from([0x68, 0x69, 0xc3, 0x28, 0xe2, 0x82, 0x0a]), // invalid UTF-8
    () => Buffer.from(`text with a NUL\u0000 in it ${nasty()}`, 'utf8'),
    () => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(nasty(), 'utf8')]),
    () => Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'),
    () => Buffer.from('<!doctype html><script>alert(1)</script>'),
    () => Buffer.from('%PDF-1.4\n1 0 obj<</Type /Page>>endobj\n'), // a cut-off PDF
    () => Buffer.alloc(0),
    () => damage(Buffer.from(JSON.stringify(randomJson()) ?? 'null')),
  ])();
}

/** Attachment ids: made up, malformed, or of the right shape. */
const attachmentId = () =>
  pick([
    `att_${'0'.repeat(24)}`,
    'att_nope',
    encode(nasty()).slice(0, 200),
    pick(BAD_PERCENT),
    `att_${randomBytes(12).toString('hex')}`,
  ]);

function attachmentRequest(t: Target): FuzzRequest {
  const project = chance(0.9)
    ? encode(t.projectId)
    : pick([pick(BAD_PERCENT), 'p_nope', encode(nasty()).slice(0, 300)]);
  const base = `/api/projects/${project}/in-app-agent/attachments`;
  if (chance(0.2)) {
    return {
      area: 'attachments',
      method: pick(['GET', 'DELETE', 'GET', pick(METHODS)]),
      path: `${base}/${attachmentId()}${chance(0.3) ? '?download=1' : ''}`,
      headers: commonHeaders(t, null),
      body: Buffer.alloc(0),
    };
  }
  const name = chance(0.7)
    ? encodeURIComponent(pick(['photo.jpg', 'shot.png', 'notes.txt', 'data.csv', 'a.pdf', 'x.svg', '']))
    : chance(0.5)
      ? encode(nasty()).slice(0, 600)
      : pick(BAD_PERCENT);
  return {
    area: 'attachments',
    method: chance(0.9) ? 'POST' : pick(METHODS),
    path: `${base}${chance(0.9) ? `?name=${name}` : ''}`,
    headers: commonHeaders(
      t,
      pick(['application/octet-stream', 'image/png', 'image/svg+xml', 'text/html', ...CONTENT_TYPES]),
    ),
    body: uploadBody(),
  };
}

const PROCEDURES = [
  'tracker.projects.list',
  'tracker.projects.get',
  'tracker.issues.list',
  'tracker.issues.get',
  'tracker.issues.search',
  'tracker.issues.create',
  'tracker.issues.update',
  'tracker.issues.assign',
  'tracker.issues.close',
  'tracker.comments.add',
  'tracker.members.add',
  'tracker.members.changeRole',
  'tracker.settings.setWebhook',
  'tracker.apiKeys.list',
  'mcp.audit.list',
  'agent.conversations.list',
  'agent.conversations.get',
  'agent.conversations.rename',
  'agent.feedback.set',
  'agent.review.list',
  'nope.nothing',
];

function trpcInput(t: Target): unknown {
  const base = {
    projectId: chance(0.8) ? t.projectId : nasty(),
    number: chance(0.7) ? 1 : nastyValue(),
    title: 'Fuzzed',
    body: nasty(),
    query: nasty(),
    conversationId: nasty(),
    status: pick(['OPEN', 'CLOSED', nasty()]),
    labels: [nasty()],
    assigneeId: nasty(),
    email: nasty(),
    role: pick(['MEMBER', nasty()]),
    url: pick(['http://127.0.0.1:1/hook', nasty()]),
    cursor: nasty(),
    limit: nastyValue(),
  };
  return mutate(base);
}

function trpcRequest(t: Target): FuzzRequest {
  const batch = chance(0.3);
  const paths = batch
    ? Array.from({ length: chance(0.1) ? 30 + int(500) : 1 + int(4) }, () => pick(PROCEDURES))
    : [pick(PROCEDURES)];
  const wire = (v: unknown) =>
    chance(0.85) ? { json: v } : chance(0.5) ? { json: v, meta: { values: nastyValue() } } : nastyValue();
  const input = batch ? Object.fromEntries(paths.map((_, i) => [String(i), wire(trpcInput(t))])) : wire(trpcInput(t));
  const method = chance(0.9) ? pick(['GET', 'POST']) : pick(METHODS);
  let query = batch ? '?batch=1' : '';
  if (method === 'GET' || chance(0.1)) {
    const encoded = chance(0.1)
      ? pick(BAD_PERCENT)
      : chance(0.05)
        ? encode(deepJson(2000))
        : encode(JSON.stringify(input) ?? '');
    query += `${query ? '&' : '?'}input=${encoded}`;
  }
  const pathPart = paths.map((p) => (chance(0.05) ? `${p}${pick(BAD_PERCENT)}` : p)).join(',');
  return {
    area: 'trpc',
    method,
    path: `/api/trpc/${pathPart}${query}`,
    headers: commonHeaders(t, chance(0.8) ? 'application/json' : pick(CONTENT_TYPES)),
    body: method === 'GET' || method === 'HEAD' ? Buffer.alloc(0) : jsonBody(input),
  };
}

const MCP_METHODS = [
  'initialize',
  'tools/list',
  'tools/call',
  'ping',
  'resources/list',
  'notifications/initialized',
  'nope',
];
const TOOLS = [
  'list_issues',
  'get_issue',
  'search_issues',
  'create_issue',
  'update_issue',
  'add_comment',
  'close_issue',
  'notify_webhook',
  'nope',
];

function mcpMessage(): unknown {
  const method = pick(MCP_METHODS);
  const params =
    method === 'tools/call'
      ? {
          name: chance(0.9) ? pick(TOOLS) : nasty(),
          arguments: mutate({ number: 1, title: 'x', query: 'x', body: 'x', page: 1, message: 'hi' }),
          _meta: chance(0.3)
            ? { 'in-app-agent/toolCallId': nasty(), 'in-app-agent/override': nastyValue() }
            : undefined,
        }
      : method === 'initialize'
        ? {
            protocolVersion: pick(['2025-06-18', '2025-03-26', nasty()]),
            capabilities: {},
            clientInfo: { name: 'fuzz', version: '1' },
          }
        : chance(0.5)
          ? {}
          : nastyValue();
  const msg: Record<string, unknown> = { jsonrpc: '2.0', id: chance(0.9) ? int(1000) : nastyValue(), method, params };
  if (method.startsWith('notifications/')) delete msg.id;
  return mutate(msg);
}

function mcpRequest(t: Target): FuzzRequest {
  const headers: Array<[string, string]> = [];
  headers.push(['content-type', chance(0.85) ? 'application/json' : pick(CONTENT_TYPES)]);
  if (chance(0.85))
    headers.push([
      'accept',
      chance(0.85) ? 'application/json, text/event-stream' : pick(['application/json', '*/*', '\u00ff']),
    ]);
  headers.push([
    'authorization',
    pick([
      `Bearer ${t.mcpSecret}`,
      `Bearer ${t.mcpSecret}`,
      `Bearer ${t.mcpSecret}`,
      'Bearer sk_AAAAAAAAAAAAAAAA_notarealsecretnotarealsecretnota',
      `Basic ${Buffer.from(`${nasty()}:${nasty()}`).toString('base64')}`,
      'Basic ###',
      `Bearer ${randomBytes(int(4000) + 1).toString('base64')}`,
      '',
      'Bearer',
      `Bearer ${t.mcpSecret}\u00ff`,
    ]),
  ]);
  if (chance(0.2)) headers.push(['mcp-protocol-version', pick(['2025-06-18', '1999-01-01', '\u00ff', ''])]);
  if (chance(0.2)) headers.push(['cookie', cookieHeader(t) ?? 'a=b']);
  const body = chance(0.3) ? Array.from({ length: int(20) }, mcpMessage) : mcpMessage();
  return {
    area: 'mcp',
    method: chance(0.9) ? 'POST' : pick(METHODS),
    path: `/api/public/mcp${chance(0.05) ? `?${pick(BAD_PERCENT)}` : ''}`,
    headers,
    body: jsonBody(body),
  };
}

function authRequest(t: Target): FuzzRequest {
  const action = pick([
    'csrf',
    'session',
    'providers',
    'callback/credentials',
    'signin/credentials',
    'signout',
    'error',
    pick(BAD_PERCENT),
    'callback/github',
  ]);
  const form = new URLSearchParams({
    csrfToken: nasty(),
    email: nasty(),
    password: nasty(),
    json: 'true',
    callbackUrl: pick(['/projects', 'http://evil.example', nasty()]),
  });
  const json = chance(0.5);
  return {
    area: 'auth',
    method: pick(['GET', 'POST', 'POST', pick(METHODS)]),
    path: `/api/auth/${action}${chance(0.1) ? `?error=${pick(BAD_PERCENT)}&callbackUrl=${pick(BAD_PERCENT)}` : ''}`,
    headers: commonHeaders(t, json ? 'application/json' : 'application/x-www-form-urlencoded'),
    body: json ? jsonBody(Object.fromEntries(form)) : damage(Buffer.from(form.toString())),
  };
}

function nextRequest(t: Target): FuzzRequest {
  const r = rand();
  if (r < 0.25) return agentRequest(t);
  if (r < 0.4) return attachmentRequest(t);
  if (r < 0.65) return trpcRequest(t);
  if (r < 0.95) return mcpRequest(t);
  return authRequest(t);
}

// ------------------------------------------------------------------------------------------------
// Sending (raw sockets)
// ------------------------------------------------------------------------------------------------

interface Outcome {
  status: number | 'timeout' | 'connection-error';
  /** The start of the answer's body, for the report of a 500. */
  bodyStart: string;
  /** A stream that ended with RUN_ERROR INTERNAL_ERROR (a 500 in disguise). */
  streamInternalError: boolean;
}

function send(baseUrl: string, r: FuzzRequest): Promise<Outcome> {
  const url = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let settled = false;
    const done = (o: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(o);
    };
    const timer = setTimeout(() => done({ status: 'timeout', bodyStart: '', streamInternalError: false }), TIMEOUT_MS);
    const finish = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1];
      if (!status) return done({ status: 'connection-error', bodyStart: '', streamInternalError: false });
      const bodyAt = text.indexOf('\r\n\r\n');
      done({
        status: Number(status),
        bodyStart: bodyAt < 0 ? '' : text.slice(bodyAt + 4, bodyAt + 304),
        streamInternalError: /"type":"RUN_ERROR"[^\n]*"code":"INTERNAL_ERROR"/.test(text),
      });
    };
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', finish);
    socket.on('close', finish);
    socket.on('error', () =>
      chunks.length ? finish() : done({ status: 'connection-error', bodyStart: '', streamInternalError: false }),
    );
    const lines = [`${r.method} ${r.path} HTTP/1.1`, `host: ${url.host}`, 'connection: close'];
    const explicitLength = r.headers.some(([k]) => k === 'content-length');
    for (const [k, v] of r.headers) lines.push(`${k}: ${v}`);
    if (!explicitLength) lines.push(`content-length: ${r.body.length}`);
    socket.write(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), r.body]));
  });
}

/** The request as the report shows it: readable, capped, bytes escaped. */
function describe(r: FuzzRequest) {
  const show = (s: string, max: number) =>
    JSON.stringify(s.length > max ? `${s.slice(0, max)}…(${s.length} chars)` : s).slice(1, -1);
  return {
    area: r.area,
    method: r.method,
    path: show(r.path, 300),
    headers: Object.fromEntries(r.headers.map(([k, v]) => [k, show(v, 200)])),
    body: show(r.body.toString('latin1'), 600),
    bodyBytes: r.body.length,
  };
}

// ------------------------------------------------------------------------------------------------
// Main
// ------------------------------------------------------------------------------------------------

const started = Date.now();
const target = process.env.FUZZ_BASE_URL
  ? await remoteTarget(process.env.FUZZ_BASE_URL.replace(/\/+$/, ''))
  : await localTarget();
const byStatus: Record<string, number> = {};
const byArea: Record<string, Record<string, number>> = {};
const errors500: Array<ReturnType<typeof describe> & { answer: string }> = [];
const streamInternalErrors: Array<ReturnType<typeof describe>> = [];
/**
 * Requests left unanswered for TIMEOUT_MS. One that declared a Content-Length larger than what it
 * sent is waited for, as HTTP requires (the server's request timeout ends it): those are counted
 * apart, as the client's doing; any other timeout is a finding.
 */
const timeouts: Array<ReturnType<typeof describe>> = [];
let timeoutsShortBody = 0;
let sent = 0;

async function worker(): Promise<void> {
  while (sent < TOTAL) {
    sent += 1;
    const r = nextRequest(target);
    const o = await send(target.baseUrl, r);
    const key = String(o.status);
    byStatus[key] = (byStatus[key] ?? 0) + 1;
    const area = (byArea[r.area] ??= {});
    area[key] = (area[key] ?? 0) + 1;
    if (o.status === 500) errors500.push({ ...describe(r), answer: JSON.stringify(o.bodyStart).slice(1, -1) });
    if (o.streamInternalError) streamInternalErrors.push(describe(r));
    if (o.status === 'timeout') {
      const declared = Number(r.headers.find(([k]) => k === 'content-length')?.[1]);
      if (Number.isFinite(declared) && declared > r.body.length) timeoutsShortBody += 1;
      else timeouts.push(describe(r));
    }
  }
}

// The app logs what it refuses; the report is the output that matters here.
const quiet = process.env.FUZZ_VERBOSE === '1' ? undefined : console.error;
if (quiet) console.error = () => undefined;
let attachments: { stored: number; storedHalf: string[] } | null = null;
try {
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  attachments = (await target.attachments?.()) ?? null;
} finally {
  if (quiet) console.error = quiet;
  await target.close();
}

const report = {
  target: process.env.FUZZ_BASE_URL ?? 'in-process route handlers on a fresh in-memory PGlite',
  seed: SEED,
  requests: sent,
  durationSeconds: Math.round((Date.now() - started) / 100) / 10,
  byStatus,
  byArea,
  count500: errors500.length,
  countStreamInternalErrors: streamInternalErrors.length,
  timeoutsWaitingForDeclaredBody: timeoutsShortBody,
  countOtherTimeouts: timeouts.length,
  ...(attachments ? { attachmentsStored: attachments.stored, attachmentsStoredHalf: attachments.storedHalf } : {}),
  errors500: errors500.slice(0, 50),
  streamInternalErrors: streamInternalErrors.slice(0, 20),
  timeouts: timeouts.slice(0, 20),
};
console.log(JSON.stringify(report, null, 2));
process.exit(
  errors500.length || streamInternalErrors.length || timeouts.length || attachments?.storedHalf.length ? 1 : 0,
);
