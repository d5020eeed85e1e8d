/**
 * What an uploaded file is, decided from its bytes (never its name or what the browser said), and
 * the bytes that are stored:
 *
 * - Images (PNG, JPEG, WebP, GIF): the header's dimensions are checked before anything is decoded
 *   (a decompression bomb is refused as `ATTACHMENT_IMAGE_TOO_LARGE`), then the image is decoded
 *   and re-encoded with sharp: turned upright by its EXIF orientation, scaled to at most
 *   `MAX_IMAGE_EDGE` pixels a side, and written without any metadata (EXIF, GPS, XMP, IPTC,
 *   comments). Animated GIF and WebP keep their frames.
 * - PDF: kept as uploaded, when whole (header and end-of-file marker); only for a model that reads
 *   documents. Never served inline.
 * - Text: valid UTF-8 without NUL bytes (a byte-order mark is dropped). JSON when it parses as a
 *   JSON object or array; otherwise the name's extension picks Markdown or CSV, else plain text.
 *   HTML and SVG are text here: they are stored and served as text, never as a page or an image.
 * - Anything else is refused (`ATTACHMENT_TYPE_NOT_ALLOWED`).
 *
 * Image work runs at most `IMAGE_WORKERS` at a time per process, with a short queue; past it the
 * upload is refused as busy (503) rather than piling decoded pixels up in memory.
 */
import 'server-only';
import type { Metadata, Sharp } from 'sharp';
import { processWide } from '../host';
import { formatBytes } from '../attachments';
import { AgentRefusal } from '../error-codes';
import type { ModelAccepts } from './model';
import { loadSharp } from './sharp';

/** An image may have at most this many pixels (all frames of an animation together). */
const MAX_IMAGE_PIXELS = 50_000_000;
/** Nor be wider or taller than this. */
const MAX_IMAGE_SIDE = 20_000;
/** Stored images are scaled to fit this many pixels a side (what providers read at most). */
const MAX_IMAGE_EDGE = 2_048;
/** Stored images stay under this (Bedrock's limit for one image is 3.75 MB): else written as JPEG. */
const MAX_STORED_IMAGE_BYTES = 3_500_000;
const IMAGE_WORKERS = 2;
const IMAGE_QUEUE = 16;

export interface ProcessedAttachment {
  kind: 'image' | 'file';
  mediaType: string;
  name: string;
  bytes: Uint8Array;
  width?: number;
  height?: number;
  pages?: number;
}

type Sniffed = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp' | 'application/pdf' | 'binary' | 'text';

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) => sig.every((x, i) => b[at + i] === x);
const ascii = (b: Uint8Array, from: number, to: number) => String.fromCharCode(...b.subarray(from, to));

/** Magic numbers of binary formats that are certainly not text (archives, executables, media). */
const BINARY_SIGNATURES: ReadonlyArray<readonly number[]> = [
  [0x50, 0x4b, 0x03, 0x04], // zip (docx, xlsx, jar…)
  [0x1f, 0x8b], // gzip
  [0x7f, 0x45, 0x4c, 0x46], // ELF
  [0x4d, 0x5a], // Windows executable
  [0x42, 0x5a, 0x68], // bzip2
  [0x37, 0x7a, 0xbc, 0xaf], // 7z
  [0x52, 0x61, 0x72, 0x21], // rar
  [0x00, 0x00, 0x00], // ISO media (mp4, heic, avif)
  [0x49, 0x49, 0x2a, 0x00], // TIFF
  [0x4d, 0x4d, 0x00, 0x2a], // TIFF
  [0x42, 0x4d], // BMP
];

/** What the bytes are, by their first bytes. */
function sniff(b: Uint8Array): Sniffed {
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(b, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (b.length >= 6 && (ascii(b, 0, 6) === 'GIF87a' || ascii(b, 0, 6) === 'GIF89a')) return 'image/gif';
  if (b.length >= 12 && ascii(b, 0, 4) === 'RIFF' && ascii(b, 8, 12) === 'WEBP') return 'image/webp';
  if (b.length >= 5 && ascii(b, 0, 5) === '%PDF-') return 'application/pdf';
  if (BINARY_SIGNATURES.some((sig) => startsWith(b, sig))) return 'binary';
  return 'text';
}

/** A file name safe to store and show: its last path segment, no control characters, at most 200 characters. */
function cleanName(raw: string | null | undefined, fallback: string): string {
  const last = (raw ?? '').split(/[\\/]/).pop() ?? '';
  const clean = last.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, '').trim();
  if (!clean || clean === '.' || clean === '..') return fallback;
  if (clean.length <= 200) return clean;
  const dot = clean.lastIndexOf('.');
  const ext = dot > 0 && clean.length - dot <= 10 ? clean.slice(dot) : '';
  return clean.slice(0, 200 - ext.length) + ext;
}

const refuse = (code: ConstructorParameters<typeof AgentRefusal>[0], message?: string): never => {
  throw new AgentRefusal(code, message);
};

/** Reads, checks and (images) re-encodes an upload; refuses with the stable code that says why. */
export async function processAttachment(
  bytes: Uint8Array,
  rawName: string,
  accepts: ModelAccepts,
): Promise<ProcessedAttachment> {
  if (bytes.byteLength === 0) refuse('ATTACHMENT_UNREADABLE', 'That file is empty.');
  const kind = sniff(bytes);
  if (kind === 'binary') return refuse('ATTACHMENT_TYPE_NOT_ALLOWED');
  if (kind === 'application/pdf') {
    const name = cleanName(rawName, 'document.pdf');
    if (!accepts.documents) {
      refuse(
        'ATTACHMENT_NOT_SUPPORTED_BY_MODEL',
        `${name} is a PDF, and the configured model does not read PDF documents. Attach its text instead.`,
      );
    }
    return processPdf(bytes, name);
  }
  if (kind === 'text') return processText(bytes, rawName);
  const name = cleanName(rawName, `image.${kind.slice('image/'.length)}`);
  if (!accepts.images) {
    refuse('ATTACHMENT_NOT_SUPPORTED_BY_MODEL', `${name} is an image, and the configured model does not read images.`);
  }
  return withImageWorker(() => processImage(bytes, kind, name));
}

function processPdf(bytes: Uint8Array, name: string): ProcessedAttachment {
  // A whole PDF ends with its end-of-file marker (possibly followed by a line break or padding).
  const tail = Buffer.from(bytes.subarray(Math.max(0, bytes.byteLength - 1024))).toString('latin1');
  if (!tail.includes('%%EOF'))
    refuse('ATTACHMENT_UNREADABLE', `${name} is not a whole PDF (it may have been cut off).`);
  const text = Buffer.from(bytes).toString('latin1');
  const pages = (text.match(/\/Type\s*\/Page(?![a-zA-Z])/g) ?? []).length;
  return {
    kind: 'file',
    mediaType: 'application/pdf',
    name,
    bytes,
    ...(pages > 0 ? { pages } : {}),
  };
}

function processText(bytes: Uint8Array, rawName: string): ProcessedAttachment {
  const name = cleanName(rawName, 'attachment.txt');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return refuse(
      'ATTACHMENT_UNREADABLE',
      `${name} is not UTF-8 text. Save it as UTF-8 (or attach an image or a PDF) and attach it again.`,
    );
  }
  // NUL and most other C0 controls do not occur in text: a binary file that happens to decode.
  const controls = text.match(/[\u0000-\u0008\u000e-\u001a\u001c-\u001f]/g)?.length ?? 0;
  if (text.includes('\u0000') || controls > Math.max(8, text.length / 100)) refuse('ATTACHMENT_TYPE_NOT_ALLOWED');
  if (!text.trim()) refuse('ATTACHMENT_UNREADABLE', `${name} holds no text.`);
  const trimmed = text.trim();
  let mediaType = 'text/plain';
  if (/^[[{]/.test(trimmed) && isJson(trimmed)) mediaType = 'application/json';
  else if (/\.(md|markdown)$/i.test(name)) mediaType = 'text/markdown';
  else if (/\.csv$/i.test(name)) mediaType = 'text/csv';
  return { kind: 'file', mediaType, name, bytes: new TextEncoder().encode(text) };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

type ImageType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp';

async function processImage(bytes: Uint8Array, type: ImageType, name: string): Promise<ProcessedAttachment> {
  const sharp = await loadSharp();
  // The header only: dimensions and frames, before a single pixel is decoded.
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false, animated: true }).metadata();
  } catch {
    return refuse('ATTACHMENT_UNREADABLE', `${name} is not a readable image.`);
  }
  const width = meta.width ?? 0;
  const frameHeight = meta.pageHeight ?? meta.height ?? 0;
  const frames = meta.pages ?? 1;
  if (!width || !frameHeight) refuse('ATTACHMENT_UNREADABLE', `${name} is not a readable image.`);
  if (width > MAX_IMAGE_SIDE || frameHeight > MAX_IMAGE_SIDE || width * frameHeight * frames > MAX_IMAGE_PIXELS) {
    refuse(
      'ATTACHMENT_IMAGE_TOO_LARGE',
      `${name} is ${width}×${frameHeight} pixels${frames > 1 ? ` in ${frames} frames` : ''}; an image may have ` +
        `${MAX_IMAGE_PIXELS / 1_000_000} million pixels at most.`,
    );
  }
  const animated = frames > 1 && (type === 'image/gif' || type === 'image/webp');
  try {
    const pipeline = () =>
      sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, animated, failOn: 'error' })
        .rotate()
        .resize({ width: MAX_IMAGE_EDGE, height: MAX_IMAGE_EDGE, fit: 'inside', withoutEnlargement: true });
    let mediaType: string = type;
    let out = await encode(pipeline(), type);
    if (out.data.byteLength > MAX_STORED_IMAGE_BYTES && !animated) {
      mediaType = 'image/jpeg';
      out = await pipeline()
        .flatten({ background: '#ffffff' })
        .jpeg({ quality: 80 })
        .toBuffer({ resolveWithObject: true });
    }
    const height = (out.info as { pageHeight?: number }).pageHeight ?? out.info.height;
    return { kind: 'image', mediaType, name, bytes: new Uint8Array(out.data), width: out.info.width, height };
  } catch {
    return refuse('ATTACHMENT_UNREADABLE', `${name} could not be read as an image (it may be damaged or cut off).`);
  }
}

function encode(pipeline: Sharp, type: ImageType) {
  const encoded =
    type === 'image/png'
      ? pipeline.png()
      : type === 'image/jpeg'
        ? pipeline.jpeg({ quality: 85 })
        : type === 'image/webp'
          ? pipeline.webp({ quality: 85 })
          : pipeline.gif();
  return encoded.toBuffer({ resolveWithObject: true });
}

/** Runs image work with at most IMAGE_WORKERS at once per process (and IMAGE_QUEUE waiting). */
async function withImageWorker<T>(work: () => Promise<T>): Promise<T> {
  const pool = processWide('in-app-agent.attachment-images', () => ({ active: 0, waiting: [] as Array<() => void> }));
  if (pool.active >= IMAGE_WORKERS) {
    if (pool.waiting.length >= IMAGE_QUEUE) {
      throw new AgentRefusal(
        'ATTACHMENT_STORAGE_UNAVAILABLE',
        'Too many images are being processed right now. Wait a moment and retry.',
        { retryAfterSeconds: 2 },
      );
    }
    await new Promise<void>((resolve) => pool.waiting.push(resolve));
  } else {
    pool.active += 1;
  }
  try {
    return await work();
  } finally {
    const next = pool.waiting.shift();
    if (next) next();
    else pool.active -= 1;
  }
}

/** The sentence of a refused size. */
export function tooLargeMessage(name: string, limit: number): string {
  return `${name} is larger than ${formatBytes(limit)}, the most a file may be.`;
}
