/**
 * Attachments on a run's path: what a new message may attach (checked before the run opens), the
 * binding to the conversation (right after it opens), and the parts the model gets (bytes read for
 * the attachments inside the history window only). The upload and serving routes are in
 * `attachment-routes.ts`; storage and queries in `attachment-store.ts`; what a file is in
 * `attachment-content.ts`.
 */
import 'server-only';
import { formatBytes, isTextMediaType } from '../attachments';
import { AgentRefusal } from '../error-codes';
import type { AttachmentPart } from '../schema';
import type { PrismaClient } from '../host';
import { attachmentContents, bindAttachments, messageAttachments, partOf } from './attachment-store';
import type { ModelAccepts } from './model';

export interface AttachmentLimits {
  /** AGENT_ATTACHMENTS_PER_MESSAGE */
  perMessage: number;
  /** AGENT_ATTACHMENT_BYTES_PER_CONVERSATION */
  perConversation: number;
}

/**
 * The parts a new message attaches, read from the uploads' rows (never from the request), or the
 * refusal: too many files, an upload that is not this user's in this project (or belongs to another
 * conversation), a kind the model does not read, a conversation that would hold too much.
 */
export async function messageAttachmentParts(
  prisma: PrismaClient,
  input: {
    ids: string[];
    projectId: string;
    userId: string;
    conversationId: string | null;
    accepts: ModelAccepts;
    limits: AttachmentLimits;
  },
): Promise<AttachmentPart[]> {
  const { ids, limits } = input;
  if (ids.length > limits.perMessage) {
    throw new AgentRefusal(
      'ATTACHMENTS_TOO_MANY',
      `A message may attach ${limits.perMessage} file${limits.perMessage === 1 ? '' : 's'} at most; this one has ${ids.length}. Remove some, or send them in another message.`,
    );
  }
  const found = await messageAttachments(prisma, input);
  if (found.rows.length !== ids.length) throw new AgentRefusal('ATTACHMENT_NOT_FOUND');
  for (const row of found.rows) {
    if (row.kind === 'image' && !input.accepts.images) {
      throw new AgentRefusal(
        'ATTACHMENT_NOT_SUPPORTED_BY_MODEL',
        `The configured model does not read images, so ${row.name} cannot be sent. Remove it and describe what it shows.`,
      );
    }
    if (row.mediaType === 'application/pdf' && !input.accepts.documents) {
      throw new AgentRefusal(
        'ATTACHMENT_NOT_SUPPORTED_BY_MODEL',
        `The configured model does not read PDF documents, so ${row.name} cannot be sent. Attach its text instead.`,
      );
    }
  }
  const adding = found.rows.filter((r) => !r.bound).reduce((n, r) => n + r.size, 0);
  if (found.conversationBytes + adding > limits.perConversation) {
    throw new AgentRefusal(
      'ATTACHMENTS_CONVERSATION_FULL',
      `This conversation holds ${formatBytes(found.conversationBytes)} of attachments and may hold ` +
        `${formatBytes(limits.perConversation)}; these would add ${formatBytes(adding)}. Start a new conversation to attach them.`,
    );
  }
  return found.rows.map(partOf);
}

/** Binds the message's uploads to the conversation of the run that opened; refused when one was taken meanwhile. */
export async function bindMessageAttachments(
  prisma: PrismaClient,
  input: { ids: string[]; projectId: string; userId: string; conversationId: string },
): Promise<void> {
  if (!input.ids.length) return;
  if ((await bindAttachments(prisma, input)) !== new Set(input.ids).size) {
    throw new AgentRefusal('ATTACHMENT_NOT_FOUND');
  }
}

/** An attachment in a model message until its bytes are read (`maxChars`: a text file cut to fit). */
export interface AttachmentSlot {
  type: 'attachment';
  part: AttachmentPart;
  maxChars?: number;
}

/** What the model gets instead of an attachment that left the context window. */
export function omittedAttachment(part: AttachmentPart): { type: 'text'; text: string } {
  const what =
    part.type === 'image'
      ? `image ${part.name}${part.width && part.height ? ` (${part.width}×${part.height})` : ''}`
      : `file ${part.name}`;
  return { type: 'text', text: `[An earlier attachment is no longer shown to you: ${what}.]` };
}

type ModelPart = { type: 'text'; text: string } | { type: 'file'; data: string; mediaType: string; filename?: string };

const escapeAttr = (s: string) => s.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);

/** A text file as the model reads it: its content between tags naming it (data, not instructions). */
function textAttachment(part: AttachmentPart, bytes: Uint8Array, maxChars?: number): ModelPart {
  let text = new TextDecoder().decode(bytes);
  let note = '';
  if (maxChars !== undefined && text.length > maxChars) {
    text = text.slice(0, maxChars);
    note = `\n[The file is longer: only its first ${maxChars} characters fit.]`;
  }
  // The content cannot close the tag it is in.
  text = text.replace(/<\/attachment/gi, '<\\/attachment');
  return {
    type: 'text',
    text: `<attachment name="${escapeAttr(part.name)}" type="${part.mediaType}">\n${text}${note}\n</attachment>`,
  };
}

/**
 * A file name every provider takes (Bedrock names a document with letters, digits, single spaces,
 * hyphens, parentheses and brackets only; its extension is dropped by the provider).
 */
export function providerFileName(name: string): string {
  const dot = name.lastIndexOf('.');
  const stem = (dot > 0 ? name.slice(0, dot) : name)
    .replace(/[^A-Za-z0-9 ()[\]-]+/g, '-')
    .replace(/\s+/g, ' ')
    .replace(/^[\s-]+|[\s-]+$/g, '')
    .slice(0, 100);
  return `${stem || 'document'}${dot > 0 ? name.slice(dot).replace(/[^A-Za-z0-9.]/g, '') : ''}`;
}

/**
 * Replaces every attachment slot of the model messages with what the provider takes: an image or a
 * PDF as a file part with its bytes (Bedrock: image and document blocks; OpenAI-compatible:
 * `image_url` data URLs and `file` parts), a text file as text. The bytes of all of them are read
 * at once; messages without attachments are returned as they are (no read).
 */
export async function withAttachmentContents<M extends { role: string; content: unknown }>(
  prisma: PrismaClient,
  conversationId: string | null,
  messages: M[],
): Promise<M[]> {
  const slots = messages.flatMap((m) =>
    Array.isArray(m.content) ? (m.content as Array<{ type: string }>).filter((p) => p.type === 'attachment') : [],
  ) as AttachmentSlot[];
  if (!slots.length) return messages;
  const bytes = conversationId
    ? await attachmentContents(prisma, conversationId, [...new Set(slots.map((s) => s.part.attachmentId))])
    : new Map<string, Uint8Array>();
  return messages.map((m) => {
    if (!Array.isArray(m.content)) return m;
    const content = (m.content as Array<{ type: string }>).map((p): unknown => {
      if (p.type !== 'attachment') return p;
      const slot = p as AttachmentSlot;
      const data = bytes.get(slot.part.attachmentId);
      if (!data) return omittedAttachment(slot.part);
      if (isTextMediaType(slot.part.mediaType)) return textAttachment(slot.part, data, slot.maxChars);
      return {
        type: 'file',
        // Base64, as the providers send it: the runtime passes a string through its message
        // conversions, where it would re-encode bytes more than once (measured: 150 ms for 1 MB).
        data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64'),
        mediaType: slot.part.mediaType,
        filename: providerFileName(slot.part.name),
      } satisfies ModelPart;
    });
    return { ...m, content };
  });
}
