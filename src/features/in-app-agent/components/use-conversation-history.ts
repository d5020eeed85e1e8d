'use client';
/**
 * The history list's data, owned by the controller: the conversation list (newest first, search,
 * paging), rename, delete and a pending undo that outlives the list (the panel shows it as a toast
 * wherever the user goes, until it times out). Render components get the result as props.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { LIMITS } from '../constants';
import { trpcErrorMessage, type AgentApi } from './agent-api';

interface HistoryEntry {
  id: string;
  title: string;
  updatedAt: Date | string;
  lastRunStatus?: string | null;
}

export interface PendingUndo {
  id: string;
  title: string;
  /** When the offer ends (ms since epoch). */
  expiresAt: number;
}

export interface ConversationHistory {
  items: HistoryEntry[];
  loading: boolean;
  error: string | null;
  search: string;
  setSearch: (q: string) => void;
  hasMore: boolean;
  loadMore: () => void;
  rename: (id: string, title: string) => Promise<void>;
  remove: (id: string, title: string) => Promise<void>;
  /** The last deletion, undoable until it times out. */
  pendingUndo: PendingUndo | null;
  undo: () => Promise<void>;
  dismissUndo: () => void;
  /** A message about the undo itself (e.g. the restore failed). */
  undoError: string | null;
}

const UNDO_MS = 10_000;
const PAGE = 30;

export function useConversationHistory(opts: {
  api: AgentApi;
  projectId: string;
  /** Load only while the list is shown. */
  active: boolean;
  /** Bumps after each run so the list refetches. */
  version: number;
  /** A conversation was deleted (the controller forgets it if it is the current one). */
  onDeleted: (id: string) => void;
}): ConversationHistory {
  const { api, projectId, active, version, onDeleted } = opts;
  const [items, setItems] = useState<HistoryEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [reload, setReload] = useState(0);
  const [pendingUndo, setPendingUndo] = useState<PendingUndo | null>(null);
  const [undoError, setUndoError] = useState<string | null>(null);
  const token = useRef(0);
  const onDeletedRef = useRef(onDeleted);
  onDeletedRef.current = onDeleted;

  const load = useCallback(
    async (append: string | null) => {
      const t = ++token.current;
      setLoading(true);
      setError(null);
      try {
        const q = search.trim();
        const res = await api.listConversations({
          projectId,
          limit: PAGE,
          ...(q ? { search: q } : {}),
          ...(append ? { cursor: append } : {}),
        });
        if (t !== token.current) return;
        setItems((prev) => (append ? [...prev, ...res.items] : res.items));
        setCursor(res.nextCursor ?? null);
      } catch (err) {
        if (t === token.current) setError(trpcErrorMessage(err, 'Could not load conversations.'));
      } finally {
        if (t === token.current) setLoading(false);
      }
    },
    [api, projectId, search],
  );

  // biome-ignore lint/correctness/useExhaustiveDependencies: version and reload are triggers: a change elsewhere or a retry loads again
  useEffect(() => {
    if (!active) return;
    const h = window.setTimeout(() => void load(null), search ? 250 : 0);
    return () => window.clearTimeout(h);
  }, [active, load, search, version, reload]);

  // The undo offer ends on its own.
  useEffect(() => {
    if (!pendingUndo) return;
    const h = window.setTimeout(() => setPendingUndo(null), Math.max(0, pendingUndo.expiresAt - Date.now()));
    return () => window.clearTimeout(h);
  }, [pendingUndo]);

  const rename = useCallback(
    async (id: string, title: string) => {
      const next = title.slice(0, LIMITS.maxTitleChars);
      try {
        await api.renameConversation({ projectId, conversationId: id, title: next });
      } catch (err) {
        throw new Error(trpcErrorMessage(err, 'Could not rename.'));
      }
      setItems((prev) => prev.map((i) => (i.id === id ? { ...i, title: next } : i)));
    },
    [api, projectId],
  );

  const remove = useCallback(
    async (id: string, title: string) => {
      try {
        await api.deleteConversation({ projectId, conversationId: id });
      } catch (err) {
        setError(trpcErrorMessage(err, 'Could not delete.'));
        return;
      }
      setItems((prev) => prev.filter((i) => i.id !== id));
      setUndoError(null);
      setPendingUndo({ id, title, expiresAt: Date.now() + UNDO_MS });
      onDeletedRef.current(id);
    },
    [api, projectId],
  );

  const undo = useCallback(async () => {
    const d = pendingUndo;
    if (!d) return;
    setPendingUndo(null);
    try {
      await api.restoreConversation({ projectId, conversationId: d.id });
      setUndoError(null);
      setReload((n) => n + 1);
    } catch (err) {
      setUndoError(trpcErrorMessage(err, 'Could not restore the conversation.'));
    }
  }, [api, pendingUndo, projectId]);

  const dismissUndo = useCallback(() => {
    setPendingUndo(null);
    setUndoError(null);
  }, []);

  return {
    items,
    loading,
    error,
    search,
    setSearch,
    hasMore: Boolean(cursor),
    loadMore: () => void load(cursor),
    rename,
    remove,
    pendingUndo,
    undo,
    dismissUndo,
    undoError,
  };
}
