'use client';
/**
 * The files attached to the next message, above the message field: a preview of each (a thumbnail
 * for an uploaded image, else the file's name and size), its state (uploading, or why it was
 * refused) and a button to remove it. Reads the store's tray through a selector.
 */
import { memo } from 'react';
import { attachmentHref, formatBytes } from '../../attachments';
import type { DraftAttachment } from '../draft-attachments';
import { FileIcon, SpinnerIcon, WarningIcon } from '../icons';
import { useAgentActions, useAgentSelector } from '../panel-context';

export const AttachmentTray = memo(function AttachmentTray() {
  const items = useAgentSelector((state) => state.attachments);
  const projectId = useAgentSelector((state) => state.projectId);
  const { removeAttachment } = useAgentActions();
  if (!items.length) return null;
  return (
    <ul
      aria-label="Files attached to your message"
      className="mb-1 flex flex-wrap gap-1.5"
      data-testid="assistant-attachments"
    >
      {items.map((item) => (
        <TrayItem key={item.localId} item={item} projectId={projectId} onRemove={removeAttachment} />
      ))}
    </ul>
  );
});

function TrayItem({
  item,
  projectId,
  onRemove,
}: {
  item: DraftAttachment;
  projectId: string;
  onRemove: (localId: string) => void;
}) {
  const part = item.part;
  const failed = item.status === 'failed';
  return (
    <li
      data-testid="assistant-attachment"
      data-status={item.status}
      className={[
        'flex max-w-full items-center gap-1.5 rounded-md border px-1.5 py-1 text-xs',
        failed
          ? 'border-red-300 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100'
          : 'border-slate-300 bg-slate-50 text-slate-800 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-100',
      ].join(' ')}
    >
      {part?.type === 'image' ? (
        // biome-ignore lint/performance/noImgElement: an authenticated upload, not a static asset
        <img
          src={attachmentHref(projectId, part.attachmentId)}
          alt=""
          width={32}
          height={32}
          className="h-8 w-8 shrink-0 rounded object-cover"
        />
      ) : (
        <span className="shrink-0">
          {item.status === 'uploading' ? <SpinnerIcon /> : failed ? <WarningIcon /> : <FileIcon />}
        </span>
      )}
      <span className="flex min-w-0 flex-col">
        <span className="max-w-40 truncate font-medium" title={item.name}>
          {item.name}
        </span>
        <span className={failed ? '' : 'text-slate-600 dark:text-slate-300'} data-testid="assistant-attachment-note">
          {item.status === 'uploading'
            ? 'Uploading…'
            : failed
              ? (item.error?.message ?? 'Not attached.')
              : part
                ? formatBytes(part.size)
                : ''}
        </span>
      </span>
      <button
        type="button"
        data-testid="assistant-attachment-remove"
        aria-label={`Remove ${item.name}`}
        title={`Remove ${item.name}`}
        onClick={() => onRemove(item.localId)}
        className="shrink-0 rounded px-1 text-base leading-none hover:bg-slate-200 dark:hover:bg-slate-700"
      >
        <span aria-hidden="true">×</span>
      </button>
    </li>
  );
}
