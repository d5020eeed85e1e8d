/**
 * Where attachments are kept, and every query of the attachment table.
 *
 * The row (`AgentAttachment`) holds what the file is; the bytes live in the database by default
 * (`AgentAttachmentChunk`, 256 KiB a row, written in the transaction that writes the row, read one
 * chunk at a time when served), or in an S3-compatible object store when
 * `AGENT_ATTACHMENT_S3_BUCKET` is set (the object is written before the row and deleted again when
 * the row cannot be written). So a row always has all its bytes: nothing is stored half.
 * Conversation reads never touch this table: a message carries its attachments' descriptions in
 * its parts, and the bytes are read only to serve them or to send them to the model.
 */
import 'server-only';
import type { Readable } from 'node:stream';
import {
  childLog,
  describeError,
  driverOf,
  type Env,
  env,
  newId,
  Prisma,
  type PrismaClient,
  processWide,
  type SqlSession,
} from '../host';
import { AgentRefusal } from '../error-codes';
import type { AttachmentPart } from '../schema';
import type { ProcessedAttachment } from './attachment-content';

/** Bytes per stored chunk. */
const CHUNK_BYTES = 256 * 1024;
/** Uploads a user may have in a project waiting to be sent. */
const MAX_PENDING_ATTACHMENTS = 50;
/** Uploads never sent are purged after this long. */
const PENDING_RETENTION_HOURS = 24;

// ------------------------------------------------------------------------------------------------
// Object store
// ------------------------------------------------------------------------------------------------

interface ObjectStore {
  put(key: string, bytes: Uint8Array, mediaType: string): Promise<void>;
  get(key: string): Promise<AsyncIterable<Uint8Array>>;
  delete(keys: string[]): Promise<void>;
}

type S3Settings = Pick<
  Env,
  | 'AGENT_ATTACHMENT_S3_BUCKET'
  | 'AGENT_ATTACHMENT_S3_REGION'
  | 'AGENT_ATTACHMENT_S3_ENDPOINT'
  | 'AGENT_ATTACHMENT_S3_ACCESS_KEY_ID'
  | 'AGENT_ATTACHMENT_S3_SECRET_ACCESS_KEY'
  | 'AGENT_ATTACHMENT_S3_FORCE_PATH_STYLE'
>;

/** The object store of the settings (one client per process and settings), or null: the database. */
function objectStore(settings: S3Settings = env()): ObjectStore | null {
  const bucket = settings.AGENT_ATTACHMENT_S3_BUCKET;
  if (!bucket) return null;
  const holder = processWide('in-app-agent.attachment-s3', () => ({
    key: '',
    store: null as Promise<ObjectStore> | null,
  }));
  const key = JSON.stringify([
    bucket,
    settings.AGENT_ATTACHMENT_S3_REGION,
    settings.AGENT_ATTACHMENT_S3_ENDPOINT,
    settings.AGENT_ATTACHMENT_S3_ACCESS_KEY_ID,
    settings.AGENT_ATTACHMENT_S3_FORCE_PATH_STYLE,
  ]);
  if (holder.key !== key || !holder.store) {
    holder.key = key;
    holder.store = s3Store(bucket, settings);
  }
  const store = holder.store;
  return {
    put: async (k, b, t) => (await store).put(k, b, t),
    get: async (k) => (await store).get(k),
    delete: async (k) => (await store).delete(k),
  };
}

/** An S3-compatible store through the AWS SDK (loaded only when configured). */
async function s3Store(bucket: string, settings: S3Settings): Promise<ObjectStore> {
  const s3 = await import('@aws-sdk/client-s3');
  const client = new s3.S3Client({
    region: settings.AGENT_ATTACHMENT_S3_REGION ?? 'us-east-1',
    ...(settings.AGENT_ATTACHMENT_S3_ENDPOINT ? { endpoint: settings.AGENT_ATTACHMENT_S3_ENDPOINT } : {}),
    forcePathStyle: settings.AGENT_ATTACHMENT_S3_FORCE_PATH_STYLE ?? false,
    ...(settings.AGENT_ATTACHMENT_S3_ACCESS_KEY_ID && settings.AGENT_ATTACHMENT_S3_SECRET_ACCESS_KEY
      ? {
          credentials: {
            accessKeyId: settings.AGENT_ATTACHMENT_S3_ACCESS_KEY_ID,
            secretAccessKey: settings.AGENT_ATTACHMENT_S3_SECRET_ACCESS_KEY,
          },
        }
      : {}),
  });
  return {
    async put(key, bytes, mediaType) {
      await client.send(new s3.PutObjectCommand({ Bucket: bucket, Key: key, Body: bytes, ContentType: mediaType }));
    },
    async get(key) {
      const res = await client.send(new s3.GetObjectCommand({ Bucket: bucket, Key: key }));
      if (!res.Body) throw new Error('empty object');
      return res.Body as Readable;
    },
    async delete(keys) {
      for (let i = 0; i < keys.length; i += 1000) {
        await client.send(
          new s3.DeleteObjectsCommand({
            Bucket: bucket,
            Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true },
          }),
        );
      }
    },
  };
}

/** An object store failure, as the refusal a request gets (503, retry). */
function storageUnavailable(err: unknown, event: string): AgentRefusal {
  childLog({ component: 'attachments' }).error({ event, error: describeError(err) }, 'attachment storage failed');
  return new AgentRefusal('ATTACHMENT_STORAGE_UNAVAILABLE', undefined, { retryAfterSeconds: 5 });
}

// ------------------------------------------------------------------------------------------------
// Upload, serve, remove
// ------------------------------------------------------------------------------------------------

export interface StoredAttachment {
  id: string;
  kind: 'image' | 'file';
  mediaType: string;
  name: string;
  size: number;
  width: number | null;
  height: number | null;
  pages: number | null;
}

/** The message part an attachment row becomes. */
export function partOf(row: StoredAttachment): AttachmentPart {
  const base = { attachmentId: row.id, mediaType: row.mediaType, name: row.name, size: row.size };
  return row.kind === 'image'
    ? {
        type: 'image',
        ...base,
        ...(row.width ? { width: row.width } : {}),
        ...(row.height ? { height: row.height } : {}),
      }
    : { type: 'file', ...base, ...(row.pages ? { pages: row.pages } : {}) };
}

/**
 * Stores a processed upload of `userId` in `projectId`, not yet bound to a conversation. Refused
 * with ATTACHMENT_UPLOADS_PENDING when the user already has MAX_PENDING_ATTACHMENTS waiting.
 */
export async function saveAttachment(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; file: ProcessedAttachment; sha256: string },
): Promise<StoredAttachment> {
  const pending = await prisma.agentAttachment.count({
    where: { projectId: input.projectId, userId: input.userId, conversationId: null },
  });
  if (pending >= MAX_PENDING_ATTACHMENTS) throw new AgentRefusal('ATTACHMENT_UPLOADS_PENDING');
  const id = newId('att_');
  const { file } = input;
  const store = objectStore();
  const storageKey = store ? `in-app-agent/${input.projectId}/${id}` : null;
  if (store && storageKey) {
    try {
      await store.put(storageKey, file.bytes, file.mediaType);
    } catch (err) {
      throw storageUnavailable(err, 'attachment.put_failed');
    }
  }
  const chunks: Array<{ attachmentId: string; index: number; data: Uint8Array<ArrayBuffer> }> = [];
  if (!store) {
    for (let at = 0, index = 0; at < file.bytes.byteLength; at += CHUNK_BYTES, index++) {
      chunks.push({ attachmentId: id, index, data: new Uint8Array(file.bytes.subarray(at, at + CHUNK_BYTES)) });
    }
  }
  const row = {
    id,
    projectId: input.projectId,
    userId: input.userId,
    kind: file.kind,
    mediaType: file.mediaType,
    name: file.name,
    size: file.bytes.byteLength,
    width: file.width ?? null,
    height: file.height ?? null,
    pages: file.pages ?? null,
    sha256: input.sha256,
    storage: store ? 's3' : 'db',
    storageKey,
    chunkCount: chunks.length,
  };
  try {
    // The row and all its chunks, or nothing.
    await prisma.$transaction([
      prisma.agentAttachment.create({ data: row }),
      ...(chunks.length ? [prisma.agentAttachmentChunk.createMany({ data: chunks })] : []),
    ]);
  } catch (err) {
    if (store && storageKey) await store.delete([storageKey]).catch(() => undefined);
    throw err;
  }
  return {
    id,
    kind: file.kind,
    mediaType: file.mediaType,
    name: file.name,
    size: row.size,
    width: row.width,
    height: row.height,
    pages: row.pages,
  };
}

/** An attachment with who may see it: its uploader, and its conversation (null until sent). */
export interface AttachmentAccess extends StoredAttachment {
  projectId: string;
  userId: string;
  conversationId: string | null;
  conversationDeleted: boolean;
  storage: string;
  storageKey: string | null;
  chunkCount: number;
}

export async function findAttachment(prisma: PrismaClient, id: string): Promise<AttachmentAccess | null> {
  const row = await prisma.agentAttachment.findUnique({
    where: { id },
    select: {
      id: true,
      projectId: true,
      userId: true,
      conversationId: true,
      kind: true,
      mediaType: true,
      name: true,
      size: true,
      width: true,
      height: true,
      pages: true,
      storage: true,
      storageKey: true,
      chunkCount: true,
      conversation: { select: { deletedAt: true } },
    },
  });
  if (!row) return null;
  const { conversation, ...rest } = row;
  return {
    ...rest,
    kind: rest.kind === 'image' ? 'image' : 'file',
    conversationDeleted: Boolean(conversation?.deletedAt),
  };
}

/** The bytes of an attachment, a chunk at a time (database) or as the object store streams them. */
export async function attachmentBytes(
  prisma: PrismaClient,
  row: Pick<AttachmentAccess, 'id' | 'storage' | 'storageKey' | 'chunkCount'>,
): Promise<AsyncIterable<Uint8Array>> {
  if (row.storage === 's3') {
    const store = objectStore();
    if (!store || !row.storageKey)
      throw storageUnavailable(new Error('no object store configured'), 'attachment.no_store');
    try {
      return await store.get(row.storageKey);
    } catch (err) {
      throw storageUnavailable(err, 'attachment.get_failed');
    }
  }
  const db = driverOf(prisma);
  return (async function* chunks() {
    for (let index = 0; index < row.chunkCount; index++) {
      // As hex text: one native decode (the drivers' own bytea parsers are much slower).
      const [chunk] = await db.queryRows<{ hex: string }>(Prisma.sql`
        SELECT encode("data", 'hex') AS "hex" FROM "AgentAttachmentChunk"
        WHERE "attachmentId" = ${row.id} AND "index" = ${index}`);
      if (!chunk) throw new Error(`attachment ${row.id} misses chunk ${index}`);
      yield Buffer.from(chunk.hex, 'hex');
    }
  })();
}

/** Removes an upload not sent yet (its uploader's "remove"); false when there is none such. */
export async function removePendingAttachment(
  prisma: PrismaClient,
  input: { id: string; projectId: string; userId: string },
): Promise<boolean> {
  const rows = await prisma.agentAttachment.findMany({
    where: { id: input.id, projectId: input.projectId, userId: input.userId, conversationId: null },
    select: { storageKey: true },
  });
  if (!rows.length) return false;
  await prisma.agentAttachment.deleteMany({
    where: { id: input.id, projectId: input.projectId, userId: input.userId, conversationId: null },
  });
  await deleteObjects(rows.map((r) => r.storageKey));
  return true;
}

async function deleteObjects(keys: Array<string | null>): Promise<void> {
  const present = keys.filter((k): k is string => Boolean(k));
  if (!present.length) return;
  const store = objectStore();
  try {
    if (!store) throw new Error('no object store configured');
    await store.delete(present);
  } catch (err) {
    // The rows are gone (nothing points at the objects any more): say how many were left behind.
    childLog({ component: 'attachments' }).error(
      { event: 'attachment.objects_not_deleted', count: present.length, error: describeError(err) },
      'attachment objects could not be deleted',
    );
  }
}

// ------------------------------------------------------------------------------------------------
// A run's attachments (per-run statements, straight to the driver)
// ------------------------------------------------------------------------------------------------

export interface MessageAttachments {
  /** The uploads found, in the order asked for (missing ones left out); `bound`: already of the conversation. */
  rows: Array<StoredAttachment & { bound: boolean }>;
  /** Bytes the conversation already holds (its bound attachments). */
  conversationBytes: number;
}

/**
 * The uploads a new message names, when they are the user's in this project and either not sent yet
 * or already of this conversation; and what the conversation holds so far. One statement.
 */
export async function messageAttachments(
  prisma: PrismaClient,
  input: { ids: string[]; projectId: string; userId: string; conversationId: string | null },
): Promise<MessageAttachments> {
  const conversation = input.conversationId ?? '';
  const rows = await driverOf(prisma).queryRows<{
    id: string;
    kind: string;
    mediaType: string;
    name: string;
    size: number;
    width: number | null;
    height: number | null;
    pages: number | null;
    bound: boolean;
    held: number;
  }>(Prisma.sql`
    SELECT a."id", a."kind", a."mediaType", a."name", a."size", a."width", a."height", a."pages",
      (a."conversationId" IS NOT NULL) AS "bound",
      (SELECT COALESCE(sum(b."size"), 0)::int FROM "AgentAttachment" b WHERE b."conversationId" = ${conversation}) AS "held"
    FROM "AgentAttachment" a
    WHERE a."id" = ANY(${input.ids}::text[]) AND a."projectId" = ${input.projectId} AND a."userId" = ${input.userId}
      AND (a."conversationId" IS NULL OR a."conversationId" = ${conversation})`);
  const byId = new Map(rows.map((r) => [r.id, r]));
  return {
    rows: input.ids.flatMap((id) => {
      const r = byId.get(id);
      return r ? [{ ...r, kind: r.kind === 'image' ? ('image' as const) : ('file' as const) }] : [];
    }),
    conversationBytes: Number(rows[0]?.held ?? 0),
  };
}

/**
 * Binds uploads to the conversation of the run that sends them (those not bound yet); answers how
 * many of `ids` now belong to it. One statement.
 */
export async function bindAttachments(
  prisma: PrismaClient,
  input: { ids: string[]; projectId: string; userId: string; conversationId: string },
): Promise<number> {
  const rows = await driverOf(prisma).queryRows<{ n: number }>(Prisma.sql`
    WITH bound AS (
      UPDATE "AgentAttachment" SET "conversationId" = ${input.conversationId}, "boundAt" = (now() AT TIME ZONE 'UTC')
      WHERE "id" = ANY(${input.ids}::text[]) AND "projectId" = ${input.projectId} AND "userId" = ${input.userId}
        AND "conversationId" IS NULL
      RETURNING 1
    )
    SELECT ((SELECT count(*) FROM bound) + (SELECT count(*) FROM "AgentAttachment"
      WHERE "id" = ANY(${input.ids}::text[]) AND "conversationId" = ${input.conversationId}))::int AS n`);
  return Number(rows[0]?.n ?? 0);
}

/** The bytes of a conversation's attachments for the model, by id (one statement for those in the database). */
export async function attachmentContents(
  prisma: PrismaClient,
  conversationId: string,
  ids: string[],
): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  if (!ids.length) return out;
  const rows = await driverOf(prisma).queryRows<{
    id: string;
    storage: string;
    storageKey: string | null;
    size: number;
    index: number | null;
    hex: string | null;
  }>(Prisma.sql`
    SELECT a."id", a."storage", a."storageKey", a."size", c."index", encode(c."data", 'hex') AS "hex"
    FROM "AgentAttachment" a LEFT JOIN "AgentAttachmentChunk" c ON c."attachmentId" = a."id"
    WHERE a."conversationId" = ${conversationId} AND a."id" = ANY(${ids}::text[])
    ORDER BY a."id", c."index"`);
  const parts = new Map<string, { size: number; chunks: Uint8Array[]; key: string | null }>();
  for (const r of rows) {
    const entry = parts.get(r.id) ?? { size: r.size, chunks: [], key: r.storage === 's3' ? r.storageKey : null };
    // As hex text: one native decode (the drivers' own bytea parsers take far longer: measured
    // 200-500 ms for 1 MB on the embedded database, 10-60 ms this way).
    if (r.hex) entry.chunks.push(Buffer.from(r.hex, 'hex'));
    parts.set(r.id, entry);
  }
  const store = objectStore();
  await Promise.all(
    [...parts].map(async ([id, entry]) => {
      if (entry.key) {
        if (!store) throw storageUnavailable(new Error('no object store configured'), 'attachment.no_store');
        let body: AsyncIterable<Uint8Array>;
        try {
          body = await store.get(entry.key);
        } catch (err) {
          throw storageUnavailable(err, 'attachment.get_failed');
        }
        const chunks: Uint8Array[] = [];
        for await (const c of body) chunks.push(c);
        entry.chunks = chunks;
      }
      out.set(id, Buffer.concat(entry.chunks));
    }),
  );
  return out;
}

// ------------------------------------------------------------------------------------------------
// Retention
// ------------------------------------------------------------------------------------------------

/**
 * Deletes at most `limit` attachments that are kept no longer: uploads never sent, after
 * PENDING_RETENTION_HOURS; those of conversations deleted more than `days` ago or past their
 * project's retention (before the conversations themselves go, so their objects can be deleted too). Rows first, then their
 * objects: a row never names a missing object. Returns how many rows went.
 */
export async function purgeAttachments(session: SqlSession, days: number, limit: number): Promise<number> {
  const { rows } = await session.query<{ storageKey: string | null }>(
    `WITH doomed AS (
       SELECT a."id" FROM "AgentAttachment" a
       LEFT JOIN "AgentConversation" c ON c."id" = a."conversationId"
       WHERE (a."conversationId" IS NULL
              AND a."createdAt" < (now() AT TIME ZONE 'UTC') - make_interval(hours => $3::int))
          OR (NOT EXISTS (SELECT 1 FROM "AgentRun" r WHERE r."conversationId" = c."id" AND r."status" = 'RUNNING')
              AND ((c."deletedAt" IS NOT NULL
                    AND c."deletedAt" < (now() AT TIME ZONE 'UTC') - make_interval(days => $1::int))
                   OR EXISTS (SELECT 1 FROM "AgentDataPolicy" p
                              WHERE p."projectId" = c."projectId" AND p."retentionDays" IS NOT NULL
                                AND c."updatedAt" < (now() AT TIME ZONE 'UTC') - make_interval(days => p."retentionDays"))))
       LIMIT $2::int
     )
     DELETE FROM "AgentAttachment" WHERE "id" IN (SELECT "id" FROM doomed) RETURNING "storageKey"`,
    [days, limit, PENDING_RETENTION_HOURS],
  );
  await deleteObjects(rows.map((r) => r.storageKey));
  return rows.length;
}
