/**
 * Attachments as the wire and the panel see them (isomorphic: no Node or browser APIs).
 *
 * A file is uploaded first (`POST …/in-app-agent/attachments`, its bytes as the body) and named in
 * the user message by its id. In the AG-UI request the message's content carries it as a standard
 * AG-UI 1.0 content part whose source is a handle this server issued (`FileSource`):
 *
 *   { type: 'image',    source: { type: 'file', value: 'att_…' } }   an image
 *   { type: 'document', source: { type: 'file', value: 'att_…' } }   a text file or a PDF
 *
 * so a stock `@ag-ui/client` sends it unchanged. The server reads the upload's row (never what the
 * request says about it) and the message stores, streams (`in-app-agent.message-parts`) and
 * replays the parts of `MessagePartSchema` (schema.ts): `{type:'image', attachmentId, mediaType,
 * name, size, width, height}` and `{type:'file', attachmentId, mediaType, name, size, pages?}`.
 */
import { z } from 'zod';
import type { AttachmentPart, MessagePart } from './schema';

/** Image types a message may attach (decided from the bytes). */
export const IMAGE_MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'] as const;
/** Text types (valid UTF-8; the name's extension only tells these apart). */
export const TEXT_MEDIA_TYPES = ['text/plain', 'text/markdown', 'text/csv', 'application/json'] as const;
/** Documents (only when the model reads them: AGENT_MODEL_DOCUMENTS). */
export const DOCUMENT_MEDIA_TYPES = ['application/pdf'] as const;

export const isImageMediaType = (t: string): boolean => (IMAGE_MEDIA_TYPES as readonly string[]).includes(t);
export const isTextMediaType = (t: string): boolean => (TEXT_MEDIA_TYPES as readonly string[]).includes(t);

/** An attachment id as the upload route issues them. */
export const ATTACHMENT_ID_PATTERN = /^att_[a-z0-9]{24}$/;

/** A request content part naming an upload (AG-UI 1.0 image or document part with a file source). */
const AttachmentRefSchema = z.object({
  type: z.enum(['image', 'document']),
  source: z.object({ type: z.literal('file'), value: z.string().max(200) }).passthrough(),
});

/** The upload a request content part names, or null when the part is not such a reference. */
export function attachmentIdOf(part: unknown): string | null {
  const ref = AttachmentRefSchema.safeParse(part);
  return ref.success ? ref.data.source.value : null;
}

/** A message part as the request's AG-UI content carries it. */
export function toAgUiContentPart(part: MessagePart): unknown {
  if (part.type === 'text') return { type: 'text', text: part.text };
  if (part.type === 'reference') return part;
  return {
    type: part.type === 'image' ? 'image' : 'document',
    source: { type: 'file', value: part.attachmentId, mimeType: part.mediaType },
  };
}

/** Where the bytes of an attachment are served (`download` asks for a file to save, not to show). */
export function attachmentHref(projectId: string, attachmentId: string, opts: { download?: boolean } = {}): string {
  const base = `/api/projects/${encodeURIComponent(projectId)}/in-app-agent/attachments/${encodeURIComponent(attachmentId)}`;
  return opts.download ? `${base}?download=1` : base;
}

/** The upload route of a project. */
export function attachmentUploadHref(projectId: string, name: string): string {
  return `/api/projects/${encodeURIComponent(projectId)}/in-app-agent/attachments?name=${encodeURIComponent(name)}`;
}

/** At most this many tokens are counted for one image (providers scale larger images down). */
const MAX_IMAGE_TOKENS = 1_600;
/** Tokens counted per PDF page (its text and its picture). */
const PDF_PAGE_TOKENS = 1_500;

/**
 * What an attachment costs of the model's context, estimated: an image about one token per 750
 * pixels (at most 1,600), a text file a token per 4 bytes, a PDF 1,500 tokens a page.
 */
export function attachmentTokens(part: AttachmentPart): number {
  if (part.type === 'image') {
    const pixels = (part.width ?? 1024) * (part.height ?? 1024);
    return Math.max(85, Math.min(MAX_IMAGE_TOKENS, Math.ceil(pixels / 750)));
  }
  if (part.mediaType === 'application/pdf')
    return (part.pages ?? Math.max(1, Math.ceil(part.size / 100_000))) * PDF_PAGE_TOKENS;
  return Math.ceil(part.size / 4) + 20;
}

/** A size for people: 812 B, 4.2 KB, 1.3 MB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  if (bytes < 1_000_000) return `${(bytes / 1000).toFixed(bytes < 10_000 ? 1 : 0)} KB`;
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}
