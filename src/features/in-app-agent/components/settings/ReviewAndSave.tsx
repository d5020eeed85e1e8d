'use client';
/**
 * Saving a versioned setting after review (tool permissions, instructions): `useVersionedSave`
 * holds where the form is (editing, confirming, saving), the notice of the last save and its error,
 * and runs a save (a refusal because someone else saved meanwhile reads their version);
 * `ReviewAndSave` is the end of the form: the notice, then "Review and save" and "Discard changes"
 * while editing, or the question (with what it saves) and Save (focused) or Cancel.
 */
import { type ReactNode, useId, useState } from 'react';
import { failureOf, ui } from './settings-api';

type SavePhase = 'editing' | 'confirming' | 'saving';

export type VersionedSave = ReturnType<typeof useVersionedSave>;

export function useVersionedSave() {
  const [phase, setPhase] = useState<SavePhase>('editing');
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  /**
   * Writes, then `saved` (read the new version back); when the write is refused as a conflict,
   * `conflict` reads the newer version (a failure to read it leaves the error to say what happened).
   */
  async function save(steps: {
    write: () => Promise<{ changed: boolean; version: number }>;
    saved: () => Promise<void>;
    conflict: () => Promise<void>;
    failure: string;
  }) {
    setPhase('saving');
    setError(null);
    try {
      const res = await steps.write();
      await steps.saved();
      setNotice(
        res.changed
          ? `Saved as version ${res.version}. It applies from the assistant's next answer in this project.`
          : 'Nothing changed.',
      );
    } catch (err) {
      const failure = failureOf(err, steps.failure);
      if (failure.code === 'SETTINGS_CONFLICT') {
        try {
          await steps.conflict();
        } catch {
          // The newer version could not be read: the message still says what happened.
        }
      }
      setError(failure.message);
    } finally {
      setPhase('editing');
    }
  }

  return { phase, setPhase, notice, setNotice, error, setError, busy: phase === 'saving', save };
}

export function ReviewAndSave({
  flow,
  testIdPrefix,
  changed,
  question,
  details,
  saveLabel,
  status,
  onSave,
  onDiscard,
}: {
  flow: VersionedSave;
  /** `<prefix>-notice` and `<prefix>-confirm` are the test ids of the notice and the question. */
  testIdPrefix: string;
  /** Whether there is anything to review or discard. */
  changed: boolean;
  question: ReactNode;
  /** Shown under the question: what the save changes. */
  details?: ReactNode;
  saveLabel: string;
  /** Beside the buttons while editing (said politely). */
  status?: ReactNode;
  onSave: () => void;
  onDiscard: () => void;
}) {
  const id = useId();
  const { phase, notice, busy } = flow;
  return (
    <>
      <p role="status" className={notice ? ui.notice : 'sr-only'} data-testid={`${testIdPrefix}-notice`}>
        {notice ?? ''}
      </p>

      {phase === 'confirming' || phase === 'saving' ? (
        <div
          className={ui.confirm}
          role="group"
          aria-labelledby={`${id}-confirm`}
          data-testid={`${testIdPrefix}-confirm`}
        >
          <p id={`${id}-confirm`} className="font-medium">
            {question}
          </p>
          {details}
          <div className="flex flex-wrap gap-2">
            <button type="button" className={ui.primary} disabled={busy} onClick={onSave} autoFocus>
              {busy ? 'Saving…' : saveLabel}
            </button>
            <button type="button" className={ui.secondary} disabled={busy} onClick={() => flow.setPhase('editing')}>
              Cancel
            </button>
          </div>
        </div>
      ) : (
        <div className={status === undefined ? 'flex flex-wrap gap-2' : 'flex flex-wrap items-center gap-2'}>
          <button
            type="button"
            className={ui.primary}
            disabled={!changed}
            onClick={() => {
              flow.setNotice(null);
              flow.setPhase('confirming');
            }}
          >
            Review and save
          </button>
          <button type="button" className={ui.secondary} disabled={!changed} onClick={onDiscard}>
            Discard changes
          </button>
          {status === undefined ? null : (
            <span className={ui.help} aria-live="polite">
              {status}
            </span>
          )}
        </div>
      )}
    </>
  );
}
