'use client';
import { useEffect, useId, useRef, useState } from 'react';
import { LIMITS } from '../constants';
import { TrashIcon } from './icons';

interface ConversationListEntry {
  id: string;
  title: string;
  updatedAt: Date | string;
  lastRunStatus?: string | null;
}

export interface ConversationListProps {
  items: ConversationListEntry[];
  currentId: string | null;
  loading: boolean;
  error: string | null;
  search: string;
  onSearch: (q: string) => void;
  onSelect: (id: string) => void;
  onRename: (id: string, title: string) => Promise<void>;
  onDelete: (id: string, title: string) => void;
  onNew: () => void;
  hasMore: boolean;
  onLoadMore: () => void;
  /** Switching is disabled while an answer streams. */
  disabled: boolean;
}

function when(d: Date | string): { text: string; iso: string } {
  const date = typeof d === 'string' ? new Date(d) : d;
  if (Number.isNaN(date.getTime())) return { text: '', iso: '' };
  const diff = Date.now() - date.getTime();
  const min = Math.round(diff / 60_000);
  const text =
    min < 1
      ? 'just now'
      : min < 60
        ? `${min} min ago`
        : min < 24 * 60
          ? `${Math.round(min / 60)} h ago`
          : date.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' });
  return { text, iso: date.toISOString() };
}

const STATUS_TEXT: Record<string, string> = {
  RUNNING: 'answering',
  FAILED: 'failed',
  ABORTED: 'stopped',
  INTERRUPTED: 'waiting for approval',
};

function Row({
  item,
  current,
  disabled,
  onSelect,
  onRename,
  onDelete,
}: {
  item: ConversationListEntry;
  current: boolean;
  disabled: boolean;
  onSelect: () => void;
  onRename: (title: string) => Promise<void>;
  onDelete: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState(item.title);
  const [error, setError] = useState<string | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const id = useId();
  useEffect(() => {
    if (editing) inputRef.current?.select();
  }, [editing]);
  const t = when(item.updatedAt);
  const status = item.lastRunStatus ? STATUS_TEXT[item.lastRunStatus] : undefined;

  if (editing) {
    return (
      <li className="px-2 py-1.5">
        <form
          className="flex items-center gap-1"
          onSubmit={async (e) => {
            e.preventDefault();
            const next = title.trim();
            if (!next) {
              setError('A title cannot be empty.');
              return;
            }
            try {
              await onRename(next);
              setEditing(false);
              setError(null);
            } catch (err) {
              setError(err instanceof Error ? err.message : 'Could not rename.');
            }
          }}
        >
          <label htmlFor={`${id}-title`} className="sr-only">
            Conversation title
          </label>
          <input
            id={`${id}-title`}
            ref={inputRef}
            data-testid="conversation-rename-input"
            value={title}
            maxLength={LIMITS.maxTitleChars}
            onChange={(e) => setTitle(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Escape') {
                e.preventDefault();
                e.stopPropagation();
                setEditing(false);
                setTitle(item.title);
              }
            }}
            className="min-w-0 flex-1 rounded border border-slate-300 bg-white px-1.5 py-0.5 text-sm dark:border-slate-600 dark:bg-slate-950"
          />
          <button type="submit" className="rounded px-1.5 text-sm underline">
            Save
          </button>
          <button
            type="button"
            className="rounded px-1.5 text-sm underline"
            onClick={() => {
              setEditing(false);
              setTitle(item.title);
            }}
          >
            Cancel
          </button>
        </form>
        {error ? (
          <p role="alert" className="text-xs text-red-800 dark:text-red-300">
            {error}
          </p>
        ) : null}
      </li>
    );
  }

  return (
    <li
      className={`group flex items-center gap-1 rounded-md px-2 py-1.5 ${current ? 'bg-blue-50 dark:bg-blue-950' : 'hover:bg-slate-50 dark:hover:bg-slate-900'}`}
      data-testid="conversation-item"
      data-conversation-id={item.id}
    >
      <button
        type="button"
        onClick={onSelect}
        disabled={disabled}
        aria-current={current ? 'true' : undefined}
        className="min-w-0 flex-1 text-left disabled:cursor-not-allowed disabled:opacity-60"
      >
        <span className="block truncate text-sm font-medium">{item.title || 'Untitled conversation'}</span>
        {/* slate-600: slate-500 is below 4.5:1 on the current item's blue-50. */}
        <span className="block text-xs text-slate-600 dark:text-slate-400">
          <time dateTime={t.iso}>{t.text}</time>
          {status ? ` · ${status}` : ''}
          {current ? ' · current' : ''}
        </span>
      </button>
      <button
        type="button"
        aria-label={`Rename “${item.title}”`}
        title="Rename"
        onClick={() => setEditing(true)}
        className="rounded px-1.5 py-0.5 text-sm text-slate-600 hover:bg-slate-200 dark:text-slate-300 dark:hover:bg-slate-800"
      >
        <span aria-hidden="true">✎</span>
      </button>
      <button
        type="button"
        aria-label={`Delete “${item.title}”`}
        title="Delete"
        data-testid="conversation-delete"
        disabled={disabled && current}
        onClick={onDelete}
        className="rounded px-1.5 py-0.5 text-sm text-slate-600 hover:bg-slate-200 disabled:opacity-50 dark:text-slate-300 dark:hover:bg-slate-800"
      >
        <TrashIcon />
      </button>
    </li>
  );
}

/** Conversation history: newest first, search, rename, delete (the container offers undo). */
export function ConversationList(props: ConversationListProps) {
  const searchId = useId();
  return (
    <div className="flex min-h-0 flex-1 flex-col" data-testid="conversation-list">
      <div className="flex items-center gap-2 border-b border-slate-200 p-2 dark:border-slate-800">
        <label htmlFor={searchId} className="sr-only">
          Search conversations
        </label>
        <input
          id={searchId}
          type="search"
          placeholder="Search conversations"
          data-testid="conversation-search"
          value={props.search}
          onChange={(e) => props.onSearch(e.target.value)}
          className="min-w-0 flex-1 rounded border border-slate-300 bg-white px-2 py-1 text-sm dark:border-slate-600 dark:bg-slate-950"
        />
        <button
          type="button"
          onClick={props.onNew}
          disabled={props.disabled}
          data-testid="conversation-new"
          className="rounded border border-slate-300 px-2 py-1 text-sm disabled:opacity-50 dark:border-slate-600"
        >
          New
        </button>
      </div>
      <div className="min-h-0 flex-1 overflow-y-auto p-1">
        {props.error ? (
          <p role="alert" className="p-2 text-sm text-red-800 dark:text-red-300">
            {props.error}
          </p>
        ) : null}
        {props.disabled ? (
          <p className="p-2 text-xs text-slate-600 dark:text-slate-300">
            Switching is possible once the current answer is finished.
          </p>
        ) : null}
        <ul aria-label="Conversations" aria-busy={props.loading}>
          {props.items.map((item) => (
            <Row
              key={item.id}
              item={item}
              current={item.id === props.currentId}
              disabled={props.disabled}
              onSelect={() => props.onSelect(item.id)}
              onRename={(title) => props.onRename(item.id, title)}
              onDelete={() => props.onDelete(item.id, item.title)}
            />
          ))}
        </ul>
        {!props.loading && props.items.length === 0 && !props.error ? (
          <p className="p-2 text-sm text-slate-600 dark:text-slate-300">
            {props.search ? 'No conversation matches.' : 'No conversations yet.'}
          </p>
        ) : null}
        {props.loading ? <p className="p-2 text-sm text-slate-500 dark:text-slate-400">Loading…</p> : null}
        {props.hasMore && !props.loading ? (
          <button type="button" onClick={props.onLoadMore} className="m-2 text-sm underline">
            Show older conversations
          </button>
        ) : null}
      </div>
    </div>
  );
}
