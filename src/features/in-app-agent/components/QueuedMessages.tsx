'use client';
/**
 * Messages typed while an answer streams, waiting to be sent when it ends: each can be edited
 * (it waits while being edited) or removed, and, when the queue waits for an approval or was
 * paused by Stop, sent at once or cleared. Prop-driven; the store owns the queue.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { LIMITS } from '../constants';
import type { QueuedMessage } from './agent-store';

export interface QueuedMessagesProps {
  items: QueuedMessage[];
  /** True while an answer runs (the queue then goes on by itself when it ends). */
  busy: boolean;
  /** The queue waits for an answer to the open approvals. */
  held: boolean;
  /** The answer was stopped: the queue waits until the user sends or clears it. */
  paused: boolean;
  onEdit: (id: string, text: string) => void;
  onEditing: (id: string, editing: boolean) => void;
  onRemove: (id: string) => void;
  onSendNow: (id: string) => void;
  onClear: () => void;
}

function QueuedItem({
  item,
  position,
  canSendNow,
  onEdit,
  onEditing,
  onRemove,
  onSendNow,
}: {
  item: QueuedMessage;
  position: number;
  canSendNow: boolean;
} & Pick<QueuedMessagesProps, 'onEdit' | 'onEditing' | 'onRemove' | 'onSendNow'>) {
  const id = useId();
  const [text, setText] = useState(item.text);
  const fieldRef = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    if (item.editing) fieldRef.current?.focus();
    else setText(item.text);
  }, [item.editing, item.text]);

  const save = () => {
    onEdit(item.id, text);
    onEditing(item.id, false);
  };
  const label = `Queued message ${position}`;

  return (
    <li
      data-testid="assistant-queued"
      data-queued-id={item.id}
      data-editing={item.editing ? 'true' : 'false'}
      className="flex flex-col gap-1"
    >
      {item.editing ? (
        <>
          <label htmlFor={id} className="sr-only">
            Edit {label.toLowerCase()}
          </label>
          <textarea
            id={id}
            ref={fieldRef}
            data-testid="assistant-queued-input"
            value={text}
            maxLength={LIMITS.maxUserMessageChars}
            rows={2}
            onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
                e.preventDefault();
                save();
              } else if (e.key === 'Escape') {
                // Cancels the edit only (the panel stays open).
                e.preventDefault();
                onEditing(item.id, false);
              }
            }}
            className={[
              'w-full resize-none rounded border border-slate-300 bg-white p-1.5 text-sm dark:border-slate-600',
              'dark:bg-slate-900',
            ].join(' ')}
          />
          <div className="flex gap-2 text-xs">
            <button
              type="button"
              data-testid="assistant-queued-save"
              onClick={save}
              className="rounded border border-slate-400 px-2 py-0.5 font-medium"
            >
              Save
            </button>
            <button type="button" onClick={() => onEditing(item.id, false)} className="rounded px-2 py-0.5 underline">
              Cancel
            </button>
          </div>
        </>
      ) : (
        <div className="flex items-start gap-2">
          <p className="min-w-0 flex-1 whitespace-pre-wrap break-words text-sm" data-testid="assistant-queued-text">
            {item.text}
          </p>
          <div className="flex shrink-0 gap-1 text-xs" role="group" aria-label={label}>
            {canSendNow ? (
              <button
                type="button"
                data-testid="assistant-queued-send-now"
                onClick={() => onSendNow(item.id)}
                className="rounded px-1.5 py-0.5 underline"
              >
                Send now
              </button>
            ) : null}
            <button
              type="button"
              data-testid="assistant-queued-edit"
              aria-label={`Edit ${label.toLowerCase()}`}
              onClick={() => onEditing(item.id, true)}
              className="rounded px-1.5 py-0.5 underline"
            >
              Edit
            </button>
            <button
              type="button"
              data-testid="assistant-queued-remove"
              aria-label={`Remove ${label.toLowerCase()}`}
              onClick={() => onRemove(item.id)}
              className="rounded px-1.5 py-0.5 underline"
            >
              Remove
            </button>
          </div>
        </div>
      )}
    </li>
  );
}

export function QueuedMessages({
  items,
  busy,
  held,
  paused,
  onEdit,
  onEditing,
  onRemove,
  onSendNow,
  onClear,
}: QueuedMessagesProps) {
  if (items.length === 0) return null;
  const waiting = !busy && (held || paused);
  return (
    <section
      aria-label="Queued messages"
      data-testid="assistant-queue"
      className={[
        'mb-2 rounded-md border border-dashed border-slate-400 bg-slate-50 p-2 dark:border-slate-600',
        'dark:bg-slate-900',
      ].join(' ')}
    >
      <div className="mb-1 flex items-center gap-2">
        <p
          className="min-w-0 flex-1 text-xs font-medium text-slate-600 dark:text-slate-300"
          data-testid="assistant-queue-state"
          data-state={busy ? 'waiting' : held ? 'held' : paused ? 'paused' : 'idle'}
        >
          {busy
            ? 'Queued — sent when the answer ends'
            : held
              ? 'Queued — waiting for your answer to the approval above'
              : paused
                ? 'Stopped — these wait until you send or clear them'
                : 'Queued'}
        </p>
        {waiting ? (
          <button
            type="button"
            data-testid="assistant-queue-clear"
            onClick={onClear}
            className="shrink-0 rounded px-1.5 py-0.5 text-xs underline"
          >
            Clear all
          </button>
        ) : null}
      </div>
      <ol className="flex flex-col gap-2">
        {items.map((item, index) => (
          <QueuedItem
            key={item.id}
            item={item}
            position={index + 1}
            canSendNow={waiting && index === 0}
            onEdit={onEdit}
            onEditing={onEditing}
            onRemove={onRemove}
            onSendNow={onSendNow}
          />
        ))}
      </ol>
    </section>
  );
}
