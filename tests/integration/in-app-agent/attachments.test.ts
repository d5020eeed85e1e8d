// Attachments end to end over real HTTP and a real database: the upload route (what a file is comes
// from its bytes; a phone photo's GPS position is not stored; every refusal has its code and stores
// nothing), who may see an attachment, a message that attaches uploads (checked before the run
// opens, bound to the conversation, stored with the message, replayed), the image and PDF reaching
// both providers in their own wire formats (the fake servers check them), a model without vision
// refused before the run starts, and retention (deleted with the conversation, unsent uploads after
// a day).
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTACHMENT_ID_PATTERN } from '@/features/in-app-agent/attachments';
import type { AttachmentPart } from '@/features/in-app-agent/schema';
import { getDb, getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import { purgeExpired } from '@/server/retention';
import {
  attachmentUrl,
  bombPng,
  hasGpsExif,
  messageWithAttachments,
  phonePhoto,
  pngImage,
  tinyPdf,
  upload,
} from '../../helpers/attachments';
import { postAgent, textOf, userMessageBody } from '../../helpers/agent';
import { type FakeServer, startFakeBedrock, startFakeOpenAI } from '../../helpers/fake-models';
import { createProject, createUser, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { trpcClient } from '../../helpers/trpc';

let server: TestServer;
let project: TestProject;
let other: TestProject;

const MODEL_VARS = [
  'AGENT_MODEL_PROVIDER',
  'AWS_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'BEDROCK_BASE_URL',
  'BEDROCK_MODEL_ID',
  'OPENAI_COMPATIBLE_BASE_URL',
  'OPENAI_COMPATIBLE_MODEL',
  'AGENT_MODEL_VISION',
  'AGENT_MODEL_DOCUMENTS',
];

function useEnv(vars: Record<string, string>) {
  for (const k of MODEL_VARS) delete process.env[k];
  Object.assign(process.env, {
    AGENT_MODEL_MAX_RETRIES: '0',
    AGENT_RATE_LIMIT_PER_MINUTE: '1000',
    AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
    ...vars,
  });
  resetEnvCache();
}

beforeAll(async () => {
  useEnv({ AGENT_MODEL_PROVIDER: 'demo' });
  server = await startTestServer();
  project = await createProject('Attach');
  other = await createProject('Elsewhere');
});
afterAll(async () => {
  await server?.close();
});

const member = () => project.users.MEMBER;
const countAttachments = async () => (await getPrisma()).agentAttachment.count();

async function served(url: string, cookie: string) {
  const res = await fetch(url, { headers: { cookie } });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

describe('the upload route', () => {
  it('stores a phone photo re-encoded, upright and without its EXIF (no GPS position), and serves it inline', async () => {
    const photo = await phonePhoto(64, 48);
    expect(hasGpsExif(photo)).toBe(true);
    const res = await upload(server.url, project.id, member().cookie, photo, 'IMG_0001.jpg', {
      contentType: 'image/png',
    });
    expect(res.status).toBe(201);
    const part = res.attachment!;
    expect(part).toMatchObject({ type: 'image', mediaType: 'image/jpeg', name: 'IMG_0001.jpg', width: 64, height: 48 });
    expect(part.attachmentId).toMatch(ATTACHMENT_ID_PATTERN);

    // What is stored: the database's chunks, read back through the route.
    const prisma = await getPrisma();
    const chunks = await prisma.agentAttachmentChunk.findMany({ where: { attachmentId: part.attachmentId } });
    const stored = Buffer.concat(chunks.map((c) => Buffer.from(c.data)));
    expect(stored.byteLength).toBe(part.size);
    expect(hasGpsExif(stored)).toBe(false);
    expect(stored.includes(Buffer.from('PhoneMaker'))).toBe(false);

    const got = await served(attachmentUrl(server.url, project.id, part.attachmentId), member().cookie);
    expect(got.status).toBe(200);
    expect(got.bytes.equals(stored)).toBe(true);
    expect(got.headers.get('content-type')).toBe('image/jpeg');
    expect(got.headers.get('x-content-type-options')).toBe('nosniff');
    expect(got.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    expect(got.headers.get('content-disposition')).toMatch(/^inline; filename="IMG_0001.jpg"/);
    // Asked as a download, the same bytes as a file to save.
    const download = await fetch(`${attachmentUrl(server.url, project.id, part.attachmentId)}?download=1`, {
      headers: { cookie: member().cookie },
    });
    expect(download.headers.get('content-disposition')).toMatch(/^attachment;/);
  });

  it('scales a large image down to 2048 pixels a side, and writes one too heavy for a provider as JPEG', async () => {
    const plain = await sharp({ create: { width: 3000, height: 1000, channels: 3, background: '#abcdef' } })
      .png()
      .toBuffer();
    const res = await upload(server.url, project.id, member().cookie, plain, 'wide.png');
    expect(res.attachment).toMatchObject({ type: 'image', mediaType: 'image/png', width: 2048, height: 683 });
    // Noise does not compress: as PNG it would pass the 3.75 MB a Bedrock image may have.
    const noisy = await upload(server.url, project.id, member().cookie, await pngImage(3000, 1000), 'noise.png');
    expect(noisy.attachment).toMatchObject({ type: 'image', mediaType: 'image/jpeg', width: 2048, height: 683 });
    expect(noisy.attachment!.size).toBeLessThan(3_500_000);
  });

  it('decides the type from the bytes: a PNG named .txt is an image; HTML and SVG are text, never served inline', async () => {
    const png = await upload(server.url, project.id, member().cookie, await pngImage(10, 10), 'notes.txt', {
      contentType: 'text/plain',
    });
    expect(png.attachment).toMatchObject({ type: 'image', mediaType: 'image/png' });

    for (const [name, body] of [
      ['page.png', '<!doctype html><html><script>alert(1)</script></html>'],
      ['logo.svg', '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><rect width="1" height="1"/></svg>'],
    ] as const) {
      const res = await upload(server.url, project.id, member().cookie, body, name, { contentType: 'image/svg+xml' });
      expect(res.attachment).toMatchObject({ type: 'file', mediaType: 'text/plain', name });
      const got = await served(attachmentUrl(server.url, project.id, res.attachment!.attachmentId), member().cookie);
      expect(got.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(got.headers.get('content-disposition')).toMatch(/^attachment;/);
      expect(got.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
    }

    const json = await upload(server.url, project.id, member().cookie, '{"a": [1, 2]}', 'data.txt');
    expect(json.attachment).toMatchObject({ type: 'file', mediaType: 'application/json' });
    const csv = await upload(server.url, project.id, member().cookie, 'a,b\n1,2\n', 'table.csv');
    expect(csv.attachment).toMatchObject({ type: 'file', mediaType: 'text/csv' });
    const md = await upload(server.url, project.id, member().cookie, '# Title\n', 'README.md');
    expect(md.attachment).toMatchObject({ type: 'file', mediaType: 'text/markdown' });
  });

  it('refuses what it cannot take with a stable code, and stores nothing', async () => {
    const before = await countAttachments();
    const cookie = member().cookie;
    const png = await pngImage(40, 40);
    const cases: Array<[string, Promise<{ status: number; error?: { code: string } }>, number, string]> = [
      [
        'zip',
        upload(server.url, project.id, cookie, Buffer.from('PK\x03\x04rest-of-a-zip', 'latin1'), 'a.zip'),
        415,
        'ATTACHMENT_TYPE_NOT_ALLOWED',
      ],
      [
        'binary',
        upload(server.url, project.id, cookie, Buffer.from([1, 2, 0, 0, 5, 6, 7, 0]), 'a.bin'),
        415,
        'ATTACHMENT_TYPE_NOT_ALLOWED',
      ],
      [
        'truncated png',
        upload(server.url, project.id, cookie, png.subarray(0, png.length - 30), 'cut.png'),
        422,
        'ATTACHMENT_UNREADABLE',
      ],
      [
        'bomb',
        upload(server.url, project.id, cookie, bombPng(100_000, 100_000), 'bomb.png'),
        422,
        'ATTACHMENT_IMAGE_TOO_LARGE',
      ],
      [
        'invalid utf-8',
        upload(server.url, project.id, cookie, Buffer.from([0x68, 0x69, 0xc3, 0x28, 0x0a]), 'latin.csv'),
        422,
        'ATTACHMENT_UNREADABLE',
      ],
      ['empty', upload(server.url, project.id, cookie, Buffer.alloc(0), 'empty.txt'), 422, 'ATTACHMENT_UNREADABLE'],
      [
        'cut pdf',
        upload(server.url, project.id, cookie, tinyPdf().subarray(0, 60), 'cut.pdf'),
        422,
        'ATTACHMENT_UNREADABLE',
      ],
      [
        'too large',
        upload(server.url, project.id, cookie, Buffer.alloc(10 * 1024 * 1024 + 1, 0x61), 'big.txt'),
        413,
        'ATTACHMENT_TOO_LARGE',
      ],
      ['not a member', upload(server.url, other.id, cookie, png, 'x.png'), 404, 'PROJECT_NOT_FOUND'],
      [
        'cross-origin',
        upload(server.url, project.id, cookie, png, 'x.png', { origin: 'http://evil.example' }),
        403,
        'CROSS_ORIGIN',
      ],
      ['signed out', upload(server.url, project.id, '', png, 'x.png'), 401, 'UNAUTHENTICATED'],
    ];
    for (const [what, answer, status, code] of cases) {
      const res = await answer;
      expect({ what, status: res.status, code: res.error?.code }).toEqual({ what, status, code });
    }
    expect(await countAttachments()).toBe(before);
  });

  it('counts the size while reading: a body that declares less than it sends is refused as too large', async () => {
    const res = await upload(
      server.url,
      project.id,
      member().cookie,
      Buffer.alloc(10 * 1024 * 1024 + 4096, 0x61),
      'x.txt',
    );
    expect(res.error?.code).toBe('ATTACHMENT_TOO_LARGE');
    expect(res.error?.message).toMatch(/x\.txt is larger than 10\.5 MB/);
  });

  it('removes an upload not sent yet (its uploader only), and not one that was sent', async () => {
    const { attachment } = await upload(server.url, project.id, member().cookie, '# notes', 'n.md');
    const url = attachmentUrl(server.url, project.id, attachment!.attachmentId);
    const foreign = await fetch(url, {
      method: 'DELETE',
      headers: { cookie: project.users.ADMIN.cookie, origin: server.url },
    });
    expect(foreign.status).toBe(404);
    const removed = await fetch(url, { method: 'DELETE', headers: { cookie: member().cookie, origin: server.url } });
    expect(removed.status).toBe(204);
    expect((await served(url, member().cookie)).status).toBe(404);
  });
});

describe('a message with attachments (demo model)', () => {
  it('is checked, bound to its conversation, stored with the message, answered and replayed', async () => {
    const image = (await upload(server.url, project.id, member().cookie, await pngImage(320, 200), 'shot.png'))
      .attachment!;
    const notes = (await upload(server.url, project.id, member().cookie, 'line one\nline two', 'notes.txt'))
      .attachment!;
    const res = await postAgent(
      server.url,
      project.id,
      member().cookie,
      messageWithAttachments('What is this?', [image, notes]),
    );
    expect(res.status).toBe(200);
    expect(textOf(res.events)).toContain(
      'I received an image of 320×200 (PNG), a text file, notes.txt, of 17 characters',
    );
    const parts = res.events.find((e) => e.type === 'CUSTOM' && e.name === 'in-app-agent.message-parts') as
      | { value: { parts: unknown[] } }
      | undefined;
    expect(parts?.value.parts).toEqual([image, notes, { type: 'text', text: 'What is this?' }]);
    const threadId = res.headers.get('x-in-app-agent-thread-id')!;

    const prisma = await getPrisma();
    const rows = await prisma.agentAttachment.findMany({
      where: { id: { in: [image.attachmentId, notes.attachmentId] } },
    });
    expect(rows.map((r) => r.conversationId)).toEqual([threadId, threadId]);

    const replay = await trpcClient(server.url, member().cookie).agent.conversations.get.query({
      projectId: project.id,
      conversationId: threadId,
    });
    const user = replay.view.messages.find((m) => m.role === 'user');
    expect(user).toMatchObject({
      content: 'What is this?',
      parts: [image, notes, { type: 'text', text: 'What is this?' }],
    });

    // A message of attachments alone is a message; the conversation is titled by the first file.
    const solo = (await upload(server.url, project.id, member().cookie, await pngImage(8, 8), 'tiny.png')).attachment!;
    const alone = await postAgent(server.url, project.id, member().cookie, messageWithAttachments('', [solo]));
    expect(textOf(alone.events)).toContain('an image of 8×8');
    const list = await trpcClient(server.url, member().cookie).agent.conversations.list.query({
      projectId: project.id,
    });
    expect(list.items.find((c) => c.id === alone.headers.get('x-in-app-agent-thread-id'))?.title).toBe('tiny.png');

    // Served to its owner and to the project's reviewers; a member who is neither gets the 404 of nothing.
    const url = attachmentUrl(server.url, project.id, image.attachmentId);
    expect((await served(url, member().cookie)).status).toBe(200);
    expect((await served(url, project.users.ADMIN.cookie)).status).toBe(200);
    expect((await served(url, project.users.VIEWER.cookie)).status).toBe(404);
    expect(
      (await served(attachmentUrl(server.url, other.id, image.attachmentId), other.users.OWNER.cookie)).status,
    ).toBe(404);
  });

  it('keeps the attachments of a turn when its text is edited', async () => {
    const image = (await upload(server.url, project.id, member().cookie, await pngImage(30, 10), 'e.png')).attachment!;
    const first = await postAgent(
      server.url,
      project.id,
      member().cookie,
      messageWithAttachments('first try', [image]),
    );
    const threadId = first.headers.get('x-in-app-agent-thread-id')!;
    const runId = (first.events[0] as { runId: string }).runId;
    const edited = await postAgent(server.url, project.id, member().cookie, {
      ...userMessageBody('second try', threadId),
      forwardedProps: { version: { of: runId } },
    });
    expect(textOf(edited.events)).toContain('an image of 30×10');
    const parts = edited.events.find((e) => e.type === 'CUSTOM' && e.name === 'in-app-agent.message-parts') as
      | { value: { parts: unknown[] } }
      | undefined;
    expect(parts?.value.parts).toEqual([image, { type: 'text', text: 'second try' }]);
  });

  it('refuses attachments that are not the sender’s, or of another conversation, before the run opens', async () => {
    const prisma = await getPrisma();
    const runsBefore = await prisma.agentRun.count();
    const admins = (await upload(server.url, project.id, project.users.ADMIN.cookie, await pngImage(8, 8), 'a.png'))
      .attachment!;
    const notMine = await postAgent(server.url, project.id, member().cookie, messageWithAttachments('look', [admins]));
    expect(notMine).toMatchObject({ status: 404, error: { code: 'ATTACHMENT_NOT_FOUND' } });

    const mine = (await upload(server.url, project.id, member().cookie, await pngImage(8, 8), 'b.png')).attachment!;
    const first = await postAgent(server.url, project.id, member().cookie, messageWithAttachments('one', [mine]));
    expect(first.status).toBe(200);
    const elsewhere = await postAgent(server.url, project.id, member().cookie, messageWithAttachments('again', [mine]));
    expect(elsewhere).toMatchObject({ status: 404, error: { code: 'ATTACHMENT_NOT_FOUND' } });
    // The same upload again in its own conversation is fine (it is already there).
    const same = await postAgent(
      server.url,
      project.id,
      member().cookie,
      messageWithAttachments('again', [mine], first.headers.get('x-in-app-agent-thread-id')!),
    );
    expect(same.status).toBe(200);
    // A made-up id, and a part that says it is an image the server never stored.
    const madeUp = await postAgent(server.url, project.id, member().cookie, {
      ...userMessageBody('x'),
      messages: [{ id: 'm', role: 'user', content: [{ type: 'image', source: { type: 'file', value: 'att_nope' } }] }],
    });
    expect(madeUp).toMatchObject({ status: 404, error: { code: 'ATTACHMENT_NOT_FOUND' } });
    const forged = await postAgent(server.url, project.id, member().cookie, {
      ...userMessageBody('hello'),
      messages: [
        {
          id: 'm',
          role: 'user',
          content: [
            { type: 'text', text: 'hello' },
            { type: 'image', attachmentId: admins.attachmentId, mediaType: 'image/png', name: 'a.png', size: 1 },
          ],
        },
      ],
    });
    expect(forged.status).toBe(200); // the forged part is dropped: only the text is asked
    expect(forged.events.some((e) => e.type === 'CUSTOM' && e.name === 'in-app-agent.message-parts')).toBe(false);
    expect(await prisma.agentRun.count()).toBe(runsBefore + 3);
  });

  it('enforces the files per message and the bytes per conversation', async () => {
    useEnv({
      AGENT_MODEL_PROVIDER: 'demo',
      AGENT_ATTACHMENTS_PER_MESSAGE: '2',
      AGENT_ATTACHMENT_BYTES_PER_CONVERSATION: '4096',
    });
    try {
      const files = await Promise.all(
        ['a', 'b', 'c'].map(
          async (n) =>
            (await upload(server.url, project.id, member().cookie, 'x'.repeat(1500), `${n}.txt`)).attachment!,
        ),
      );
      const many = await postAgent(server.url, project.id, member().cookie, messageWithAttachments('three', files));
      expect(many).toMatchObject({ status: 400, error: { code: 'ATTACHMENTS_TOO_MANY' } });
      expect(many.error?.message).toMatch(/2 files at most; this one has 3/);
      const two = await postAgent(
        server.url,
        project.id,
        member().cookie,
        messageWithAttachments('two', files.slice(0, 2)),
      );
      expect(two.status).toBe(200);
      const full = await postAgent(
        server.url,
        project.id,
        member().cookie,
        messageWithAttachments('one more', files.slice(2), two.headers.get('x-in-app-agent-thread-id')!),
      );
      expect(full).toMatchObject({ status: 409, error: { code: 'ATTACHMENTS_CONVERSATION_FULL' } });
      // Refused before anything was bound: the file is still the user's to send elsewhere.
      expect(
        (await (await getPrisma()).agentAttachment.findUniqueOrThrow({ where: { id: files[2]!.attachmentId } }))
          .conversationId,
      ).toBeNull();
    } finally {
      useEnv({ AGENT_MODEL_PROVIDER: 'demo' });
    }
  });
});

describe('the providers get the attachments in their own wire format', () => {
  let openai: FakeServer;
  let bedrock: Awaited<ReturnType<typeof startFakeBedrock>>;
  beforeAll(async () => {
    openai = await startFakeOpenAI(() => ({ text: ['Seen.'] }));
    bedrock = await startFakeBedrock(() => ({ text: ['Seen.'] }));
  });
  afterAll(async () => {
    await openai?.close();
    await bedrock?.close();
  });

  async function storedBytes(part: AttachmentPart) {
    const res = await served(attachmentUrl(server.url, project.id, part.attachmentId), member().cookie);
    return res.bytes;
  }

  it('OpenAI-compatible: an image_url data URL and a PDF file part; refused before the run without vision', async () => {
    useEnv({
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: openai.url,
      OPENAI_COMPATIBLE_MODEL: 'vision-model',
    });
    // Without AGENT_MODEL_VISION an OpenAI-compatible model reads no images: refused at upload.
    const refused = await upload(server.url, project.id, member().cookie, await phonePhoto(), 'p.jpg');
    expect(refused).toMatchObject({ status: 422, error: { code: 'ATTACHMENT_NOT_SUPPORTED_BY_MODEL' } });

    useEnv({
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: openai.url,
      OPENAI_COMPATIBLE_MODEL: 'vision-model',
      AGENT_MODEL_VISION: '1',
      AGENT_MODEL_DOCUMENTS: '1',
    });
    const photo = (await upload(server.url, project.id, member().cookie, await phonePhoto(), 'p.jpg')).attachment!;
    const pdf = (await upload(server.url, project.id, member().cookie, tinyPdf(), 'spec v2.pdf')).attachment!;
    expect(pdf).toMatchObject({ type: 'file', mediaType: 'application/pdf', pages: 1 });
    openai.media.length = 0;
    const res = await postAgent(
      server.url,
      project.id,
      member().cookie,
      messageWithAttachments('Describe', [photo, pdf]),
    );
    expect(textOf(res.events)).toBe('Seen.');
    expect(openai.media.map((m) => [m.kind, m.mediaType, m.name])).toEqual([
      ['image', 'image/jpeg', undefined],
      ['document', 'application/pdf', 'spec v2.pdf'],
    ]);
    expect(openai.media[0]!.bytes.equals(await storedBytes(photo))).toBe(true);
    expect(openai.media[1]!.bytes.equals(tinyPdf())).toBe(true);

    // The model loses its vision: a message with an image is refused before any run opens.
    const later = (await upload(server.url, project.id, member().cookie, await pngImage(8, 8), 'later.png'))
      .attachment!;
    useEnv({
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: openai.url,
      OPENAI_COMPATIBLE_MODEL: 'text-only',
    });
    const runs = await (await getPrisma()).agentRun.count();
    const blind = await postAgent(
      server.url,
      project.id,
      member().cookie,
      messageWithAttachments('and this?', [later]),
    );
    expect(blind).toMatchObject({ status: 422, error: { code: 'ATTACHMENT_NOT_SUPPORTED_BY_MODEL' } });
    expect(await (await getPrisma()).agentRun.count()).toBe(runs);
    // The conversation that already holds images goes on: the model is told of them, not sent them.
    openai.requests.length = 0;
    openai.media.length = 0;
    const next = await postAgent(
      server.url,
      project.id,
      member().cookie,
      userMessageBody('Anything else?', res.headers.get('x-in-app-agent-thread-id')!),
    );
    expect(textOf(next.events)).toBe('Seen.');
    expect(openai.media).toEqual([]);
    expect(JSON.stringify(openai.requests[0])).toContain(
      'An earlier attachment is no longer shown to you: image p.jpg',
    );
  });

  it('Bedrock Converse: image and document blocks', async () => {
    useEnv({
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret-example',
      BEDROCK_BASE_URL: bedrock.url,
      BEDROCK_MODEL_ID: 'anthropic.claude-test',
    });
    const photo = (await upload(server.url, project.id, member().cookie, await pngImage(30, 20), 'chart.png'))
      .attachment!;
    const pdf = (await upload(server.url, project.id, member().cookie, tinyPdf(), 'Q3 report (final).v2.pdf'))
      .attachment!;
    const res = await postAgent(
      server.url,
      project.id,
      member().cookie,
      messageWithAttachments('Compare', [photo, pdf]),
    );
    expect(textOf(res.events)).toBe('Seen.');
    expect(bedrock.media.map((m) => [m.kind, m.mediaType, m.name])).toEqual([
      ['image', 'image/png', undefined],
      ['document', 'application/pdf', 'Q3 report (final)-v2'],
    ]);
    expect(bedrock.media[0]!.bytes.equals(await storedBytes(photo))).toBe(true);
    const user = (bedrock.requests[0]!.messages as Array<{ role: string; content: Array<Record<string, unknown>> }>).at(
      -1,
    )!;
    expect(user.content.map((b) => Object.keys(b)[0])).toEqual(['image', 'document', 'text']);
  });
});

describe('retention', () => {
  it('deletes attachments with their purged conversation, and uploads never sent after a day', async () => {
    useEnv({ AGENT_MODEL_PROVIDER: 'demo' });
    const owner = await createUser('Keeper');
    const prisma = await getPrisma();
    await prisma.projectMembership.create({
      data: { id: `m_${owner.id}`, projectId: project.id, userId: owner.id, role: 'MEMBER' },
    });
    const sent = (await upload(server.url, project.id, owner.cookie, await pngImage(8, 8), 's.png')).attachment!;
    const res = await postAgent(server.url, project.id, owner.cookie, messageWithAttachments('keep?', [sent]));
    const conversationId = res.headers.get('x-in-app-agent-thread-id')!;
    const unsent = (await upload(server.url, project.id, owner.cookie, 'draft', 'd.txt')).attachment!;
    const fresh = (await upload(server.url, project.id, owner.cookie, 'fresh', 'f.txt')).attachment!;

    // Deleted 31 days ago (retention 30), and an upload left unsent for two days.
    await prisma.agentConversation.update({
      where: { id: conversationId },
      data: { deletedAt: new Date(Date.now() - 31 * 86_400_000) },
    });
    await prisma.agentAttachment.update({
      where: { id: unsent.attachmentId },
      data: { createdAt: new Date(Date.now() - 2 * 86_400_000) },
    });
    // Its owner no longer sees it once deleted.
    expect((await served(attachmentUrl(server.url, project.id, sent.attachmentId), owner.cookie)).status).toBe(404);

    const result = await purgeExpired(await getDb(), { agentRetentionDays: 30, auditRetentionDays: 90 });
    expect(result.attachments).toBeGreaterThanOrEqual(2);
    const left = await prisma.agentAttachment.findMany({
      where: { id: { in: [sent.attachmentId, unsent.attachmentId, fresh.attachmentId] } },
      select: { id: true },
    });
    expect(left.map((r) => r.id)).toEqual([fresh.attachmentId]);
    expect(
      await prisma.agentAttachmentChunk.count({
        where: { attachmentId: { in: [sent.attachmentId, unsent.attachmentId] } },
      }),
    ).toBe(0);
    expect(await prisma.agentConversation.count({ where: { id: conversationId } })).toBe(0);
  });
});
