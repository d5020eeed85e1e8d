// Attachments in an S3-compatible object store (AGENT_ATTACHMENT_S3_*), through the AWS SDK against
// a local S3 server (s3rver, speaking the S3 REST API on 127.0.0.1): the bytes go to the bucket, not
// the database; they are served and sent to the model from there; the purge deletes the objects
// with their rows; and a store that cannot be reached is a 503 with a stable code, storing nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getDb, getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import { purgeExpired } from '@/server/retention';
import { attachmentUrl, messageWithAttachments, phonePhoto, upload } from '../../helpers/attachments';
import { postAgent, textOf } from '../../helpers/agent';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

const BUCKET = 'attachments';
let s3: S3rver;
let endpoint: string;
let dir: string;
let server: TestServer;
let project: TestProject;

function useStore(url: string) {
  Object.assign(process.env, {
    AGENT_MODEL_PROVIDER: 'demo',
    AGENT_ATTACHMENT_S3_BUCKET: BUCKET,
    AGENT_ATTACHMENT_S3_REGION: 'us-east-1',
    AGENT_ATTACHMENT_S3_ENDPOINT: url,
    AGENT_ATTACHMENT_S3_ACCESS_KEY_ID: 'S3RVER',
    AGENT_ATTACHMENT_S3_SECRET_ACCESS_KEY: 'S3RVER',
    AGENT_ATTACHMENT_S3_FORCE_PATH_STYLE: '1',
  });
  resetEnvCache();
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 's3rver-'));
  s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: dir,
    configureBuckets: [{ name: BUCKET }],
  });
  const { port } = await s3.run();
  endpoint = `http://127.0.0.1:${port}`;
  useStore(endpoint);
  server = await startTestServer();
  project = await createProject('Bucket');
});
afterAll(async () => {
  for (const k of Object.keys(process.env)) if (k.startsWith('AGENT_ATTACHMENT_S3_')) delete process.env[k];
  resetEnvCache();
  await server?.close();
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

const client = () =>
  new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });

async function objectBytes(key: string): Promise<Buffer | null> {
  try {
    const res = await client().send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
    return Buffer.from(await res.Body!.transformToByteArray());
  } catch (err) {
    if ((err as { name?: string }).name === 'NoSuchKey') return null;
    throw err;
  }
}

describe('attachments in an S3-compatible store', () => {
  it('keeps the bytes in the bucket, serves them and sends them to the model from there, and purges them', async () => {
    const cookie = project.users.MEMBER.cookie;
    const part = (await upload(server.url, project.id, cookie, await phonePhoto(40, 30), 'photo.jpg')).attachment!;
    const prisma = await getPrisma();
    const row = await prisma.agentAttachment.findUniqueOrThrow({ where: { id: part.attachmentId } });
    expect(row).toMatchObject({
      storage: 's3',
      storageKey: `in-app-agent/${project.id}/${part.attachmentId}`,
      chunkCount: 0,
    });
    expect(await prisma.agentAttachmentChunk.count({ where: { attachmentId: part.attachmentId } })).toBe(0);
    const inBucket = await objectBytes(row.storageKey!);
    expect(inBucket?.byteLength).toBe(part.size);

    const res = await fetch(attachmentUrl(server.url, project.id, part.attachmentId), { headers: { cookie } });
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(inBucket!)).toBe(true);

    const run = await postAgent(server.url, project.id, cookie, messageWithAttachments('what is it', [part]));
    expect(textOf(run.events)).toContain('I received an image of 40×30 (JPEG)');

    await prisma.agentConversation.update({
      where: { id: run.headers.get('x-in-app-agent-thread-id')! },
      data: { deletedAt: new Date(Date.now() - 40 * 86_400_000) },
    });
    const purged = await purgeExpired(await getDb(), { agentRetentionDays: 30, auditRetentionDays: 90 });
    expect(purged.attachments).toBeGreaterThanOrEqual(1);
    expect(await prisma.agentAttachment.count({ where: { id: part.attachmentId } })).toBe(0);
    expect(await objectBytes(row.storageKey!)).toBeNull();
  });

  it('answers 503 ATTACHMENT_STORAGE_UNAVAILABLE when the store cannot be reached, and stores nothing', async () => {
    const prisma = await getPrisma();
    const before = await prisma.agentAttachment.count();
    useStore('http://127.0.0.1:1');
    try {
      const res = await upload(server.url, project.id, project.users.MEMBER.cookie, '# notes', 'n.md');
      expect(res).toMatchObject({ status: 503, error: { code: 'ATTACHMENT_STORAGE_UNAVAILABLE' } });
      expect(await prisma.agentAttachment.count()).toBe(before);
    } finally {
      useStore(endpoint);
    }
  });
});
