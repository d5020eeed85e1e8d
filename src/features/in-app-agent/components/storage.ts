/**
 * The panel's browser storage, per signed-in user: whether the panel is open, its width, the
 * current conversation, and the user's unsent work (message draft per conversation, approval
 * and question answers being prepared, thumbs-down comments) in `localStorage`; messages queued behind a
 * running answer in `sessionStorage` (they belong to the tab that will send them, and survive its
 * reload). Every key carries the user id, so a second person on the same browser never reads the
 * first one's drafts, and sign-out removes everything of the panel (`clearAssistantStorage`).
 * Storage objects are injected: unit tests use in-memory ones.
 */
import type { z } from 'zod';

const PREFIX = 'in-app-agent';
/** Keys written by this version start with this (older builds wrote keys without a user). */
const USER_PREFIX = `${PREFIX}:u:`;

/** The part of the Web Storage API the panel uses. */
export interface StorageLike {
  readonly length: number;
  key(index: number): string | null;
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
  removeItem(key: string): void;
}

export function storageKeys(userId: string, projectId: string) {
  const user = `${USER_PREFIX}${encodeURIComponent(userId)}`;
  const project = `${user}:${encodeURIComponent(projectId)}`;
  return {
    open: () => `${user}:open`,
    width: () => `${user}:width`,
    conversation: () => `${project}:conversation`,
    draft: (conversationId: string | null) => `${project}:draft:${conversationId ?? 'new'}`,
    /** Files uploaded for the next message (their parts), kept with the draft. */
    draftAttachments: (conversationId: string | null) => `${project}:draft-attachments:${conversationId ?? 'new'}`,
    /** Approval answers being prepared in a conversation, keyed by interrupt id. */
    approvals: (conversationId: string) => `${project}:approvals:${conversationId}`,
    /** Answers to questions being prepared in a conversation, keyed by interrupt id. */
    questions: (conversationId: string) => `${project}:questions:${conversationId}`,
    /** Unsaved thumbs-down comments of a conversation, keyed by message id. */
    feedbackDrafts: (conversationId: string) => `${project}:feedback-drafts:${conversationId}`,
    /** Messages queued behind a running answer (sessionStorage). */
    queue: (conversationId: string | null) => `${project}:queue:${conversationId ?? 'new'}`,
    /** The queue was paused by Stop: it waits until the user sends or clears it (sessionStorage). */
    queuePaused: (conversationId: string | null) => `${project}:queue-paused:${conversationId ?? 'new'}`,
    /** The budget windows the panel warned about at 80 % (each once). */
    budgetWarned: () => `${project}:budget-warned`,
    /** Browser notifications were asked for (once, after a user action). */
    notificationsAsked: () => `${user}:notifications-asked`,
  };
}
export type StorageKeys = ReturnType<typeof storageKeys>;

/** Reads and writes that never throw: storage full or disabled only means the panel forgets on reload. */
export class SafeStorage {
  /** Set after sign-out: nothing is written any more (a late write must not bring data back). */
  private sealed = false;

  constructor(private readonly store: StorageLike | null) {}

  seal(): void {
    this.sealed = true;
  }

  read(key: string): string | null {
    try {
      return this.store?.getItem(key) ?? null;
    } catch {
      return null;
    }
  }

  write(key: string, value: string | null): void {
    if (this.sealed || !this.store) return;
    try {
      if (value === null || value === '') this.store.removeItem(key);
      else this.store.setItem(key, value);
    } catch {
      // Storage full or disabled: the panel still works, it only forgets on reload.
    }
  }

  /** Reads a JSON record kept under `key`; entries that do not fit `entry` are dropped. */
  readRecord<T>(key: string, entry: z.ZodType<T>): Record<string, T> {
    const json = this.readJson(key);
    if (!json || typeof json !== 'object' || Array.isArray(json)) return {};
    const out: Record<string, T> = {};
    for (const [k, v] of Object.entries(json as Record<string, unknown>)) {
      const parsed = entry.safeParse(v);
      if (parsed.success) out[k] = parsed.data;
    }
    return out;
  }

  /** Writes a JSON record under `key` (removes the key when the record is empty). */
  writeRecord(key: string, record: Record<string, unknown>): void {
    const entries = Object.entries(record).filter(([, v]) => v !== undefined);
    this.write(key, entries.length ? JSON.stringify(Object.fromEntries(entries)) : null);
  }

  /** Reads a JSON list kept under `key`; items that do not fit `item` are dropped. */
  readList<T>(key: string, item: z.ZodType<T>): T[] {
    const json = this.readJson(key);
    if (!Array.isArray(json)) return [];
    return json.flatMap((v) => {
      const parsed = item.safeParse(v);
      return parsed.success ? [parsed.data] : [];
    });
  }

  writeList(key: string, list: readonly unknown[]): void {
    this.write(key, list.length ? JSON.stringify(list) : null);
  }

  private readJson(key: string): unknown {
    const raw = this.read(key);
    if (!raw) return null;
    try {
      return JSON.parse(raw) as unknown;
    } catch {
      return null;
    }
  }
}

function keysOf(store: StorageLike, keep: (key: string) => boolean): string[] {
  const found: string[] = [];
  for (let i = 0; i < store.length; i++) {
    const key = store.key(i);
    if (key !== null && keep(key)) found.push(key);
  }
  return found;
}

/** Removes every key of the panel, of every user (sign-out: the next person starts clean). */
export function clearAssistantStorage(stores: ReadonlyArray<StorageLike | null>): void {
  for (const store of stores) {
    if (!store) continue;
    try {
      for (const key of keysOf(store, (k) => k.startsWith(`${PREFIX}:`))) store.removeItem(key);
    } catch {
      // Storage disabled: there is nothing to clear.
    }
  }
}

/**
 * Removes keys written before storage was per user (they cannot be attributed to anyone, so
 * nobody may see them).
 */
export function dropUnattributedKeys(store: StorageLike | null): void {
  if (!store) return;
  try {
    for (const key of keysOf(store, (k) => k.startsWith(`${PREFIX}:`) && !k.startsWith(USER_PREFIX)))
      store.removeItem(key);
  } catch {
    // Storage disabled.
  }
}

/** The browser's storages, or null where there are none (server rendering, disabled storage). */
export function browserStorages(): { local: StorageLike | null; session: StorageLike | null } {
  const get = (name: 'localStorage' | 'sessionStorage'): StorageLike | null => {
    try {
      return typeof window === 'undefined' ? null : window[name];
    } catch {
      return null;
    }
  };
  return { local: get('localStorage'), session: get('sessionStorage') };
}

export const PANEL_WIDTH = { min: 320, max: 960, default: 420, step: 24 } as const;

export function clampWidth(width: number, viewport?: number): number {
  const max = viewport
    ? Math.max(PANEL_WIDTH.min, Math.min(PANEL_WIDTH.max, Math.floor(viewport * 0.75)))
    : PANEL_WIDTH.max;
  if (!Number.isFinite(width)) return PANEL_WIDTH.default;
  return Math.round(Math.min(max, Math.max(PANEL_WIDTH.min, width)));
}
