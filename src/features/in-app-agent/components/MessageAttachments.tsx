'use client';
/**
 * The attachments of a sent message (prop-driven: the panel, other tabs, history and the review
 * pages render the same): images as thumbnails that open full size in a dialog, files as links
 * that download them. The bytes come from the authorised attachment route; without a project (no
 * route to ask) only the names show.
 */
import { memo, useRef, useState } from 'react';
import { attachmentHref, formatBytes } from '../attachments';
import type { AttachmentPart } from '../schema';
import { FileIcon } from './icons';

/** A thumbnail fits this box, keeping the image's proportions. */
const THUMB = { width: 160, height: 120 };

function thumbSize(part: Extract<AttachmentPart, { type: 'image' }>): { width: number; height: number } {
  const w = part.width ?? THUMB.width;
  const h = part.height ?? THUMB.height;
  const scale = Math.min(1, THUMB.width / w, THUMB.height / h);
  return { width: Math.max(1, Math.round(w * scale)), height: Math.max(1, Math.round(h * scale)) };
}

export const MessageAttachments = memo(function MessageAttachments({
  parts,
  projectId,
}: {
  parts: readonly AttachmentPart[];
  projectId?: string;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [open, setOpen] = useState<Extract<AttachmentPart, { type: 'image' }> | null>(null);
  const show = (part: Extract<AttachmentPart, { type: 'image' }>) => {
    setOpen(part);
    dialog.current?.showModal();
  };
  return (
    <div className="flex flex-wrap items-start justify-end gap-1.5" data-testid="assistant-message-attachments">
      {parts.map((part) =>
        part.type === 'image' && projectId ? (
          <button
            key={part.attachmentId}
            type="button"
            data-testid="assistant-message-image"
            onClick={() => show(part)}
            aria-label={`Open ${part.name} full size`}
            title={`${part.name}${part.width && part.height ? ` (${part.width}×${part.height})` : ''}`}
            className="overflow-hidden rounded-md border border-slate-300 dark:border-slate-600"
          >
            {/* biome-ignore lint/performance/noImgElement: an authenticated upload, not a static asset */}
            <img
              src={attachmentHref(projectId, part.attachmentId)}
              alt={part.name}
              {...thumbSize(part)}
              loading="lazy"
              className="block object-cover"
            />
          </button>
        ) : (
          <FileChip key={part.attachmentId} part={part} projectId={projectId} />
        ),
      )}
      {projectId ? (
        <dialog
          ref={dialog}
          aria-label={open ? `${open.name}, full size` : 'Attachment'}
          data-testid="assistant-image-dialog"
          onClose={() => setOpen(null)}
          onKeyDown={(e) => {
            // Escape closes the picture, not the panel around it.
            if (e.key !== 'Escape') return;
            e.preventDefault();
            dialog.current?.close();
          }}
          className="m-auto max-h-[95vh] max-w-[95vw] rounded-lg bg-white p-2 text-slate-900 backdrop:bg-black/70 dark:bg-slate-900 dark:text-slate-100"
        >
          {open ? (
            <div className="flex flex-col gap-2">
              <div className="flex items-center gap-2 text-sm">
                <span className="min-w-0 flex-1 truncate font-medium">{open.name}</span>
                <a
                  href={attachmentHref(projectId, open.attachmentId, { download: true })}
                  className="underline"
                  data-testid="assistant-image-download"
                >
                  Download
                </a>
                <button
                  type="button"
                  autoFocus
                  onClick={() => dialog.current?.close()}
                  className="rounded-md border border-slate-400 px-2 py-0.5"
                  data-testid="assistant-image-close"
                >
                  Close
                </button>
              </div>
              {/* biome-ignore lint/performance/noImgElement: an authenticated upload, not a static asset */}
              <img
                src={attachmentHref(projectId, open.attachmentId)}
                alt={open.name}
                width={open.width}
                height={open.height}
                data-testid="assistant-image-full"
                className="h-auto max-h-[85vh] w-auto max-w-full object-contain"
              />
            </div>
          ) : null}
        </dialog>
      ) : null}
    </div>
  );
});

function FileChip({ part, projectId }: { part: AttachmentPart; projectId?: string }) {
  const label = (
    <>
      <FileIcon />
      <span className="ml-1 max-w-48 truncate">{part.name}</span>
      <span className="text-slate-600 dark:text-slate-300"> · {formatBytes(part.size)}</span>
    </>
  );
  const className =
    'inline-flex max-w-full items-center rounded-md border border-slate-300 bg-white px-2 py-1 text-xs text-slate-900 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100';
  return projectId ? (
    <a
      href={attachmentHref(projectId, part.attachmentId, { download: true })}
      className={`${className} underline-offset-2 hover:underline`}
      data-testid="assistant-message-file"
      aria-label={`Download ${part.name} (${formatBytes(part.size)})`}
    >
      {label}
    </a>
  ) : (
    <span className={className} data-testid="assistant-message-file">
      {label}
    </span>
  );
}
