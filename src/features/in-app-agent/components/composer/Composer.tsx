'use client';
/**
 * The panel's composer: the queued messages, the page selection that goes with the next message,
 * the files attached to it (picked, dropped or pasted: `AttachmentTray`, `AttachButton`,
 * `use-attachment-input.ts`), the message field, the status line and Send (or, while an answer runs, Queue and Stop). What it
 * sends is the store's draft (`send()` reads it there), so the message can grow beyond one string
 * without changing this component's props. Reads the store through selectors.
 */
import { memo, type RefObject } from 'react';
import { LIMITS } from '../../constants';
import type { ConnectionPhase } from '../agent-store';
import { useAgentActions, useAgentSelector, usePanelUi } from '../panel-context';
import { QueuedMessages } from '../QueuedMessages';
import {
  selectAttachmentsReady,
  selectAttachmentsUploading,
  selectBlockedReason,
  selectBusy,
  selectCanSend,
  selectInputHint,
  selectQueueHeld,
} from '../selectors';
import { AttachButton } from './AttachButton';
import { AttachmentTray } from './AttachmentTray';
import { useAttachmentInput } from './use-attachment-input';
import { useMentionTypeahead } from './MentionTypeahead';
import { BudgetWarning } from './BudgetWarning';

export interface ComposerProps {
  /** The message field (the panel focuses it when the user opens the panel). */
  inputRef: RefObject<HTMLTextAreaElement | null>;
  /** Called when the user sends or queues the draft, before it goes to the store. */
  onSend?: () => void;
}

/** What the status line under the input says while an answer runs. */
const CONNECTION_TEXT: Record<ConnectionPhase, string> = {
  idle: '',
  sending: 'Sending…',
  streaming: 'The assistant is answering… (Enter queues a message)',
  reconnecting: 'Reconnecting…',
  stopping: 'Stopping…',
};
/** While another server takes the answer over from one that stopped. */
const RESUMING_TEXT = 'Resuming the answer on another server…';

/** Which queued messages show, and what their buttons do. */
function ComposerQueue() {
  const actions = useAgentActions();
  const queue = useAgentSelector((state) => state.queue);
  const busy = useAgentSelector(selectBusy);
  const paused = useAgentSelector((state) => state.queuePaused);
  const held = useAgentSelector(selectQueueHeld);
  return (
    <QueuedMessages
      items={queue}
      busy={busy}
      held={held}
      paused={paused}
      onClear={actions.clearQueue}
      onEdit={actions.editQueued}
      onEditing={actions.setQueuedEditing}
      onRemove={actions.removeQueued}
      onSendNow={actions.sendQueuedNow}
    />
  );
}

/** The page selection sent as context with the next message, and the way to leave it out. */
function SelectionChip() {
  const { selection, clearSelection } = usePanelUi();
  if (!selection) return null;
  return (
    <div
      className="mb-1 flex items-center gap-1 text-xs text-slate-600 dark:text-slate-300"
      data-testid="assistant-selection"
    >
      <span className="min-w-0 flex-1 truncate">
        Includes your selection: “{selection.slice(0, 80)}
        {selection.length > 80 ? '…' : ''}”
      </span>
      <button type="button" className="underline" onClick={clearSelection}>
        Remove
      </button>
    </div>
  );
}

export const Composer = memo(function Composer({ inputRef, onSend }: ComposerProps) {
  const actions = useAgentActions();
  const draft = useAgentSelector((state) => state.draft);
  const connection = useAgentSelector((state) => state.connection);
  const statusNote = useAgentSelector((state) => state.statusNote);
  const resuming = useAgentSelector((state) => state.resuming);
  const canSend = useAgentSelector(selectCanSend);
  const blockedReason = useAgentSelector(selectBlockedReason);
  const inputHint = useAgentSelector(selectInputHint);
  const attached = useAgentSelector(selectAttachmentsReady);
  const uploading = useAgentSelector(selectAttachmentsUploading);
  const attachments = useAttachmentInput();
  const busy = connection !== 'idle';
  // A message is its text, its files, or both; it waits for files still uploading.
  const empty = (!draft.trim() && !attached) || uploading;
  const mentions = useMentionTypeahead(inputRef);
  const submit = () => {
    onSend?.();
    actions.send();
  };

  return (
    <form
      className={[
        'border-t border-slate-200 p-2 dark:border-slate-800',
        attachments.dragging ? 'outline-2 -outline-offset-2 outline-dashed outline-blue-600' : '',
      ].join(' ')}
      data-testid="assistant-composer"
      {...attachments.drop}
      onSubmit={(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <ComposerQueue />
      <BudgetWarning />
      <SelectionChip />
      <AttachmentTray />
      <label htmlFor="assistant-input" className="sr-only">
        Message the assistant
      </label>
      <div className="relative">
        {mentions.popup}
        <textarea
          id="assistant-input"
          ref={inputRef}
          data-testid="assistant-input"
          value={draft}
          {...mentions.fieldProps}
          onChange={(e) => {
            actions.setDraft(e.target.value);
            mentions.onInput(e.target);
          }}
          onSelect={(e) => mentions.onInput(e.currentTarget)}
          onPaste={attachments.onPaste}
          onKeyDown={(e) => {
            if (mentions.onKeyDown(e)) return;
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              submit();
            }
          }}
          rows={2}
          maxLength={LIMITS.maxUserMessageChars}
          placeholder="Ask the assistant… (# an issue, @ a member; Enter to send)"
          aria-describedby={blockedReason ? 'assistant-blocked' : undefined}
          className="w-full resize-none rounded-md border border-slate-300 bg-white p-2 text-sm dark:border-slate-600 dark:bg-slate-900"
        />
      </div>
      <div className="mt-1 flex items-center gap-2">
        <AttachButton disabled={!canSend} />
        <p
          id="assistant-blocked"
          data-testid="assistant-status"
          data-connection={connection}
          data-resuming={resuming || undefined}
          className="min-w-0 flex-1 text-xs text-slate-600 dark:text-slate-300"
        >
          {blockedReason ??
            statusNote ??
            (busy
              ? resuming
                ? RESUMING_TEXT
                : CONNECTION_TEXT[connection]
              : uploading
                ? 'Uploading your files…'
                : (inputHint ?? ''))}
        </p>
        {busy ? (
          <>
            <button
              type="submit"
              data-testid="assistant-queue-send"
              disabled={!canSend || empty}
              title="Queue this message: it is sent when the answer ends (Enter)"
              className={[
                'rounded-md border border-blue-700 px-3 py-1 text-sm font-medium text-blue-800',
                'disabled:opacity-50 dark:text-blue-300',
              ].join(' ')}
            >
              Queue
            </button>
            <button
              type="button"
              data-testid="assistant-stop"
              onClick={actions.stop}
              disabled={connection === 'stopping'}
              className="rounded-md border border-slate-400 px-3 py-1 text-sm font-medium disabled:opacity-50"
            >
              <span aria-hidden="true">■ </span>
              {connection === 'stopping' ? 'Stopping…' : 'Stop'}
            </button>
          </>
        ) : (
          <button
            type="submit"
            data-testid="assistant-send"
            disabled={!canSend || empty}
            className="rounded-md bg-blue-700 px-3 py-1 text-sm font-medium text-white disabled:opacity-50"
          >
            Send
          </button>
        )}
      </div>
    </form>
  );
});
