/**
 * The files attached to the next message, as the store keeps them (framework-free): uploading,
 * uploaded (the part the message will carry) or refused (why, in the panel's words). Uploaded ones
 * are kept in browser storage with the draft, so a reload loses nothing; the rest are not.
 */
import { z } from 'zod';
import { AttachmentPartSchema, type AttachmentPart } from '../schema';
import type { PanelError } from './errors';

export interface DraftAttachment {
  /** This browser's id of the item (the upload's id is in `part`). */
  localId: string;
  name: string;
  status: 'uploading' | 'ready' | 'failed';
  part?: AttachmentPart;
  error?: PanelError;
}

/** The parts of the uploaded files, in order. */
export function readyAttachments(items: readonly DraftAttachment[]): AttachmentPart[] {
  return items.flatMap((a) => (a.status === 'ready' && a.part ? [a.part] : []));
}

/** What storage keeps of the tray (its uploaded files), or null for none. */
export function keptAttachments(items: readonly DraftAttachment[]): string | null {
  const parts = readyAttachments(items);
  return parts.length ? JSON.stringify(parts) : null;
}

const KeptSchema = z.array(AttachmentPartSchema).max(50);

/** The tray as storage kept it (anything unreadable is dropped). */
export function readKeptAttachments(raw: string | null, newId: () => string): DraftAttachment[] {
  if (!raw) return [];
  try {
    const parsed = KeptSchema.safeParse(JSON.parse(raw));
    if (!parsed.success) return [];
    return parsed.data.map((part) => ({ localId: newId(), name: part.name, status: 'ready', part }));
  } catch {
    return [];
  }
}

/** A file's name, or one for a pasted screenshot (which has none): `Pasted image.png`. */
export function attachmentName(file: { name?: string; type: string }): string {
  if (file.name) return file.name;
  const ext = /^image\/(png|jpeg|gif|webp)$/.exec(file.type)?.[1];
  return ext ? `Pasted image.${ext === 'jpeg' ? 'jpg' : ext}` : 'Pasted text.txt';
}
