'use client';
/**
 * "Attach files": a button that opens the file picker (several files at once). What may be picked
 * follows the model: images only when it reads them, PDFs only when it reads documents; text files
 * always. The server decides what a file is from its bytes anyway.
 */
import { memo, useRef } from 'react';
import { DOCUMENT_MEDIA_TYPES, IMAGE_MEDIA_TYPES, TEXT_MEDIA_TYPES } from '../../attachments';
import { PaperclipIcon } from '../icons';
import { useAgentActions, useAgentSelector } from '../panel-context';

export const AttachButton = memo(function AttachButton({ disabled }: { disabled?: boolean }) {
  const input = useRef<HTMLInputElement>(null);
  const { attachFiles } = useAgentActions();
  const accepts = useAgentSelector((state) => state.model?.attachments);
  const accept = [
    ...TEXT_MEDIA_TYPES,
    '.txt,.md,.markdown,.csv,.json',
    ...(accepts?.images !== false ? IMAGE_MEDIA_TYPES : []),
    ...(accepts?.documents !== false ? [...DOCUMENT_MEDIA_TYPES, '.pdf'] : []),
  ].join(',');
  return (
    <>
      <input
        ref={input}
        type="file"
        multiple
        hidden
        accept={accept}
        data-testid="assistant-attach-input"
        onChange={(e) => {
          const files = Array.from(e.target.files ?? []);
          e.target.value = '';
          if (files.length) attachFiles(files);
        }}
      />
      <button
        type="button"
        data-testid="assistant-attach"
        disabled={disabled}
        onClick={() => input.current?.click()}
        aria-label="Attach files"
        title={`Attach files (${accepts?.images === false ? 'text' : 'images, text'}${accepts?.documents === false ? '' : ', PDF'}); you can also drop or paste them`}
        className="rounded-md border border-slate-400 px-2 py-1 text-sm disabled:opacity-50 dark:border-slate-500"
      >
        <PaperclipIcon />
      </button>
    </>
  );
});
