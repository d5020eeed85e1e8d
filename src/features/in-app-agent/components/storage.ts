/**
 * Small localStorage wrappers for the panel's UI state: open, width, the current conversation, and
 * the user's unsent work (message draft, approval answers being prepared, thumbs-down comments), so
 * a reload, a closed panel or a refused request never loses it.
 */
import { z } from 'zod';

const PREFIX = 'in-app-agent';

export const storageKeys = {
  open: () => `${PREFIX}:open`,
  width: () => `${PREFIX}:width`,
  conversation: (projectId: string) => `${PREFIX}:${projectId}:conversation`,
  draft: (projectId: string, conversationId: string | null) => `${PREFIX}:${projectId}:draft:${conversationId ?? 'new'}`,
  /** Approval answers being prepared in a conversation, keyed by interrupt id. */
  approvals: (projectId: string, conversationId: string) => `${PREFIX}:${projectId}:approvals:${conversationId}`,
  /** Unsaved thumbs-down comments of a conversation, keyed by message id. */
  feedbackDrafts: (projectId: string, conversationId: string) => `${PREFIX}:${projectId}:feedback-drafts:${conversationId}`,
};

/** Reads a JSON record kept under `key`; entries that do not fit `entry` are dropped. */
export function readRecord<T>(key: string, entry: z.ZodType<T>): Record<string, T> {
  const raw = readStorage(key);
  if (!raw) return {};
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return {};
  }
  if (!json || typeof json !== 'object' || Array.isArray(json)) return {};
  const out: Record<string, T> = {};
  for (const [k, v] of Object.entries(json as Record<string, unknown>)) {
    const parsed = entry.safeParse(v);
    if (parsed.success) out[k] = parsed.data;
  }
  return out;
}

/** Writes a JSON record under `key` (removes the key when the record is empty). */
export function writeRecord(key: string, record: Record<string, unknown>): void {
  const entries = Object.entries(record).filter(([, v]) => v !== undefined);
  writeStorage(key, entries.length ? JSON.stringify(Object.fromEntries(entries)) : null);
}

export function readStorage(key: string): string | null {
  try {
    return typeof window === 'undefined' ? null : window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function writeStorage(key: string, value: string | null): void {
  try {
    if (typeof window === 'undefined') return;
    if (value === null || value === '') window.localStorage.removeItem(key);
    else window.localStorage.setItem(key, value);
  } catch {
    // Storage full or disabled: the panel still works, it only forgets on reload.
  }
}

export const PANEL_WIDTH = { min: 320, max: 960, default: 420, step: 24 } as const;

export function clampWidth(width: number, viewport?: number): number {
  const max = viewport ? Math.max(PANEL_WIDTH.min, Math.min(PANEL_WIDTH.max, Math.floor(viewport * 0.75))) : PANEL_WIDTH.max;
  if (!Number.isFinite(width)) return PANEL_WIDTH.default;
  return Math.round(Math.min(max, Math.max(PANEL_WIDTH.min, width)));
}
