/** Small localStorage wrappers for the panel's UI state (open, width, drafts, current conversation). */

const PREFIX = 'in-app-agent';

export const storageKeys = {
  open: () => `${PREFIX}:open`,
  width: () => `${PREFIX}:width`,
  conversation: (projectId: string) => `${PREFIX}:${projectId}:conversation`,
  draft: (projectId: string, conversationId: string | null) => `${PREFIX}:${projectId}:draft:${conversationId ?? 'new'}`,
};

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
