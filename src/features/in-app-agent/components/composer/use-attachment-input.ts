'use client';
/**
 * Files that arrive in the composer without the picker: dropped on it, or pasted into the message
 * field (a screenshot on the clipboard). Pasted text stays text; only files are attached.
 */
import { type ClipboardEvent, type DragEvent, useCallback, useState } from 'react';
import { useAgentActions } from '../panel-context';

const carriesFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes('Files');

export function useAttachmentInput() {
  const { attachFiles } = useAgentActions();
  const [dragging, setDragging] = useState(false);
  const onPaste = useCallback(
    (e: ClipboardEvent) => {
      const files = Array.from(e.clipboardData?.files ?? []);
      if (!files.length) return;
      e.preventDefault();
      attachFiles(files);
    },
    [attachFiles],
  );
  const onDragOver = useCallback((e: DragEvent) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = 'copy';
    setDragging(true);
  }, []);
  const onDragLeave = useCallback((e: DragEvent) => {
    if (e.currentTarget.contains(e.relatedTarget as Node | null)) return;
    setDragging(false);
  }, []);
  const onDrop = useCallback(
    (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      setDragging(false);
      const files = Array.from(e.dataTransfer.files);
      if (files.length) attachFiles(files);
    },
    [attachFiles],
  );
  return { dragging, onPaste, drop: { onDragOver, onDragLeave, onDrop } };
}
