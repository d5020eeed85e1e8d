// Attachments in tests: files made here (images with sharp, a phone photo with a GPS position, a
// small PDF), uploads through the real route, and messages that attach them.
import sharp from 'sharp';
import { type AttachmentPart, MessagePartSchema } from '@/features/in-app-agent/schema';

/** A PNG of `width`×`height` (a gradient, so it does not compress to nothing). */
export async function pngImage(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 7 + Math.floor(i / (width * 3)) * 13) % 256;
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png()
    .toBuffer();
}

/** A photo as a phone writes it: a JPEG with the camera's make and a GPS position in its EXIF. */
export async function phonePhoto(width = 64, height = 48): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: '#3366cc' } })
    .withExif({
      IFD0: { Make: 'PhoneMaker', Model: 'Phone 1' },
      IFD3: {
        GPSLatitudeRef: 'N',
        GPSLatitude: '48/1 51/1 2964/100',
        GPSLongitudeRef: 'E',
        GPSLongitude: '2/1 17/1 4020/100',
      },
    })
    .jpeg()
    .toBuffer();
}

/** Whether JPEG bytes carry an EXIF segment with a GPS block (the GPSInfo tag, 0x8825). */
export function hasGpsExif(bytes: Uint8Array): boolean {
  const b = Buffer.from(bytes);
  const exif = b.indexOf(Buffer.from('Exif\0\0', 'latin1'));
  if (exif < 0) return false;
  const tiff = b.subarray(exif + 6);
  return tiff.includes(Buffer.from([0x88, 0x25])) || tiff.includes(Buffer.from([0x25, 0x88]));
}

/** A PNG whose header claims `width`×`height` pixels, with a tiny (invalid) body: a decompression bomb's header. */
export function bombPng(width: number, height: number): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  return Buffer.concat([
    signature,
    chunk('IHDR', ihdr),
    chunk('IDAT', Buffer.alloc(16)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function chunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c;
}

/** A small, whole, one-page PDF. */
export function tinyPdf(): Buffer {
  return Buffer.from(
    '%PDF-1.4\n1 0 obj<</Type /Catalog /Pages 2 0 R>>endobj\n2 0 obj<</Type /Pages /Kids [3 0 R] /Count 1>>endobj\n' +
      '3 0 obj<</Type /Page /Parent 2 0 R /MediaBox [0 0 200 200]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n',
    'latin1',
  );
}

export interface UploadAnswer {
  status: number;
  attachment?: AttachmentPart;
  error?: { code: string; message: string };
}

/** `POST …/in-app-agent/attachments?name=` with the bytes as the body. */
export async function upload(
  base: string,
  projectId: string,
  cookie: string,
  bytes: Uint8Array | string,
  name: string,
  init: { contentType?: string; origin?: string } = {},
): Promise<UploadAnswer> {
  const res = await fetch(
    `${base}/api/projects/${encodeURIComponent(projectId)}/in-app-agent/attachments?name=${encodeURIComponent(name)}`,
    {
      method: 'POST',
      headers: { cookie, origin: init.origin ?? base, 'content-type': init.contentType ?? 'application/octet-stream' },
      body: typeof bytes === 'string' ? bytes : Buffer.from(bytes),
    },
  );
  const json = (await res.json()) as { attachment?: unknown; error?: { code: string; message: string } };
  return {
    status: res.status,
    ...(json.attachment ? { attachment: MessagePartSchema.parse(json.attachment) as AttachmentPart } : {}),
    ...(json.error ? { error: json.error } : {}),
  };
}

/** The URL an attachment is served at. */
export const attachmentUrl = (base: string, projectId: string, id: string) =>
  `${base}/api/projects/${encodeURIComponent(projectId)}/in-app-agent/attachments/${encodeURIComponent(id)}`;

/** A request whose user message attaches uploads (AG-UI content parts naming them) after its text. */
export function messageWithAttachments(text: string, parts: AttachmentPart[], threadId = 'new') {
  return {
    threadId,
    messages: [
      {
        id: 'm',
        role: 'user',
        content: [
          ...(text ? [{ type: 'text', text }] : []),
          ...parts.map((p) => ({
            type: p.type === 'image' ? 'image' : 'document',
            source: { type: 'file', value: p.attachmentId },
          })),
        ],
      },
    ],
    tools: [],
    context: [],
  };
}
