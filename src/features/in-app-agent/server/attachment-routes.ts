/**
 * The attachment routes (each decides who may do what before anything is read or stored):
 *
 * - `POST /api/projects/:projectId/in-app-agent/attachments?name=<file name>`: uploads one file,
 *   its bytes as the request body (any content type: what the file is comes from its bytes). Same
 *   origin, a member with `agent:use`; at most `AGENT_ATTACHMENT_MAX_BYTES`, counted while reading.
 *   Answers `201 {attachment: <message part>}`; the part's `attachmentId` goes into the message.
 * - `GET …/attachments/:attachmentId[?download=1]`: the bytes, to the uploader (while the
 *   conversation is not deleted) and to the project's reviewers (once it is part of a
 *   conversation); anyone else gets the 404 of an id that does not exist. Images are shown inline,
 *   everything else is a download; `nosniff` and a Content-Security-Policy that allows nothing.
 * - `DELETE …/attachments/:attachmentId`: removes an upload that was not sent (its uploader).
 */
import 'server-only';
import { createHash } from 'node:crypto';
import { env, hasProjectAccess, isIdentifier, isSameOrigin, readBytesCapped } from '../host';
import { ATTACHMENT_ID_PATTERN, isImageMediaType, isTextMediaType } from '../attachments';
import { AgentRefusal } from '../error-codes';
import { processAttachment, tooLargeMessage } from './attachment-content';
import { attachmentBytes, findAttachment, partOf, removePendingAttachment, saveAttachment } from './attachment-store';
import { authorize, guarded, type Route } from './handler';
import { type ModelAccepts, modelAccepts, type ModelHandle, modelFor } from './model';

export interface AttachmentRouteOptions {
  /** The model whose capabilities decide what may be attached (default: the configured one). */
  model?: () => ModelHandle;
}

const param = (v: string | string[] | undefined): string => (typeof v === 'string' ? v : '');

/** Headers of every attachment answer: nothing in it may run, load or be sniffed into something else. */
const CLOSED = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; sandbox",
  'cross-origin-resource-policy': 'same-origin',
};

/** `filename` (ASCII fallback) and `filename*` (RFC 8187, UTF-8) of a Content-Disposition. */
function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

function acceptsOf(opts: AttachmentRouteOptions): ModelAccepts {
  const settings = env();
  try {
    const handle = opts.model?.() ?? modelFor(settings);
    return handle.accepts ?? modelAccepts(settings, handle.info.provider);
  } catch {
    // A misconfigured model is reported when a run starts; what it reads follows the settings.
    return modelAccepts(settings, settings.AGENT_MODEL_PROVIDER ?? 'demo');
  }
}

export function createAttachmentRoutes(opts: AttachmentRouteOptions = {}): {
  upload: Route;
  serve: Route;
  remove: Route;
} {
  const upload: Route = async (req, ctx) => {
    const projectId = param((await ctx.params).projectId);
    if (!isSameOrigin(req)) throw new AgentRefusal('CROSS_ORIGIN', 'Cross-origin request refused.');
    const { prisma, member } = await authorize(req, projectId, 'agent:use');
    const settings = env();
    const rawName = new URL(req.url).searchParams.get('name') ?? '';
    const read = await readBytesCapped(req, settings.AGENT_ATTACHMENT_MAX_BYTES);
    if (!read.ok && read.reason === 'too_large') {
      throw new AgentRefusal(
        'ATTACHMENT_TOO_LARGE',
        tooLargeMessage(rawName.slice(0, 200) || 'That file', settings.AGENT_ATTACHMENT_MAX_BYTES),
      );
    }
    if (!read.ok) throw new AgentRefusal('INVALID_REQUEST', 'The upload could not be read.');
    const file = await processAttachment(read.bytes, rawName, acceptsOf(opts));
    const sha256 = createHash('sha256').update(file.bytes).digest('hex');
    const stored = await saveAttachment(prisma, { projectId, userId: member.user.id, file, sha256 });
    return new Response(JSON.stringify({ attachment: partOf(stored) }), {
      status: 201,
      headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' },
    });
  };

  /** The attachment, when the caller may see it (else the refusal of an id that does not exist). */
  async function visibleAttachment(req: Request, projectId: string, attachmentId: string, scope: 'see' | 'remove') {
    const { prisma, member } = await authorize(req, projectId, 'agent:use');
    const row = ATTACHMENT_ID_PATTERN.test(attachmentId) ? await findAttachment(prisma, attachmentId) : null;
    const mine = row?.userId === member.user.id && !row.conversationDeleted;
    const reviewer =
      scope === 'see' &&
      row?.conversationId !== null &&
      hasProjectAccess({ role: member.role, isAdmin: member.user.isAdmin }, 'agent:review');
    if (!row || row.projectId !== projectId || !(mine || reviewer)) throw new AgentRefusal('ATTACHMENT_NOT_FOUND');
    return { prisma, member, row };
  }

  const serve: Route = async (req, ctx) => {
    const params = await ctx.params;
    const projectId = param(params.projectId);
    const attachmentId = param(params.attachmentId);
    const { prisma, row } = await visibleAttachment(req, projectId, attachmentId, 'see');
    const etag = `"${row.id}"`;
    const cache = { 'cache-control': 'private, max-age=86400, immutable', etag };
    if (req.headers.get('if-none-match') === etag)
      return new Response(null, { status: 304, headers: { ...CLOSED, ...cache } });
    const download = new URL(req.url).searchParams.get('download') === '1';
    const inline = isImageMediaType(row.mediaType) && !download;
    const bytes = await attachmentBytes(prisma, row);
    const iterator = bytes[Symbol.asyncIterator]();
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await iterator.next();
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          controller.error(err);
        }
      },
      async cancel() {
        await iterator.return?.();
      },
    });
    return new Response(body, {
      status: 200,
      headers: {
        ...CLOSED,
        ...cache,
        'content-type': isTextMediaType(row.mediaType) ? `${row.mediaType}; charset=utf-8` : row.mediaType,
        'content-length': String(row.size),
        'content-disposition': contentDisposition(inline ? 'inline' : 'attachment', row.name),
      },
    });
  };

  const remove: Route = async (req, ctx) => {
    const params = await ctx.params;
    const projectId = param(params.projectId);
    const attachmentId = param(params.attachmentId);
    if (!isSameOrigin(req)) throw new AgentRefusal('CROSS_ORIGIN', 'Cross-origin request refused.');
    if (!isIdentifier(attachmentId)) throw new AgentRefusal('ATTACHMENT_NOT_FOUND');
    const { prisma, member } = await visibleAttachment(req, projectId, attachmentId, 'remove');
    if (!(await removePendingAttachment(prisma, { id: attachmentId, projectId, userId: member.user.id }))) {
      // Sent already: it belongs to its message now and goes with the conversation.
      throw new AgentRefusal('ATTACHMENT_NOT_FOUND', 'That file was sent with a message and stays with it.');
    }
    return new Response(null, { status: 204, headers: { 'cache-control': 'no-store' } });
  };

  return { upload: guarded(upload), serve: guarded(serve), remove: guarded(remove) };
}
