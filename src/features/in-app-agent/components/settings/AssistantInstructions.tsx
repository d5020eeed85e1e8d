'use client';
/**
 * "Assistant instructions": plain text the assistant is given in every answer of the project,
 * after the product's own rules (which it cannot change). A counter, save after review as a new
 * version; when someone else saved meanwhile, their text is shown and the editor's is kept.
 */
import { useId, useState } from 'react';
import { ReviewAndSave, useVersionedSave } from './ReviewAndSave';
import { type AssistantSettingsData, formatWhen, type SettingsApi, ui } from './settings-api';

type Saved = AssistantSettingsData['instructions'];

export function AssistantInstructions({
  projectId,
  api,
  initial,
}: {
  projectId: string;
  api: SettingsApi;
  initial: AssistantSettingsData;
}) {
  const id = useId();
  const max = initial.limits.instructionsChars;
  const [saved, setSaved] = useState<Saved>(initial.instructions);
  const [text, setText] = useState(initial.instructions.text);
  const flow = useVersionedSave();
  const { phase, setPhase, setNotice, error, setError, busy } = flow;
  /** The newer version someone else saved while this one was edited. */
  const [newer, setNewer] = useState<Saved | null>(null);
  const changed = text.trimEnd() !== saved.text;
  const near = text.length > max * 0.9;

  const save = () =>
    flow.save({
      write: () => api.saveInstructions({ projectId, baseVersion: saved.version, text }),
      saved: async () => {
        const fresh = await api.load(projectId);
        setSaved(fresh.instructions);
        setText(fresh.instructions.text);
        setNewer(null);
      },
      conflict: async () => setNewer((await api.load(projectId)).instructions),
      failure: 'The instructions could not be saved. Try again.',
    });

  return (
    <section aria-labelledby={`${id}-title`} className="space-y-3" data-testid="assistant-instructions">
      <div>
        <h3 id={`${id}-title`} className="text-base font-semibold">
          Assistant instructions
        </h3>
        <p className={ui.help} id={`${id}-help`}>
          Plain text the assistant is given in every answer in this project, after the product&apos;s own rules: your
          team&apos;s conventions, tone, what to prefer. It cannot change what a role may do, skip an approval, or make
          outside content trusted.
        </p>
        <p className="mt-1 text-xs text-slate-600 dark:text-slate-400" data-testid="instructions-version">
          {saved.version
            ? `Version ${saved.version}, saved${saved.savedBy ? ` by ${saved.savedBy.name}` : ''} on ${formatWhen(saved.savedAt)}.`
            : 'None yet.'}
        </p>
      </div>
      <div>
        <label htmlFor={`${id}-text`} className="block text-sm font-medium text-slate-700 dark:text-slate-300">
          Instructions for the assistant
        </label>
        <textarea
          id={`${id}-text`}
          data-testid="instructions-text"
          className={`${ui.field} mt-1 block w-full font-mono`}
          rows={8}
          maxLength={max}
          value={text}
          disabled={busy}
          aria-describedby={`${id}-help ${id}-count`}
          onChange={(e) => {
            setText(e.target.value);
            setNotice(null);
            if (phase === 'confirming') setPhase('editing');
          }}
        />
        <p
          id={`${id}-count`}
          data-testid="instructions-count"
          className={`mt-1 text-xs ${near ? 'font-medium text-amber-800 dark:text-amber-300' : 'text-slate-600 dark:text-slate-400'}`}
          aria-live={near ? 'polite' : 'off'}
        >
          {text.length.toLocaleString('en-US')} / {max.toLocaleString('en-US')} characters
        </p>
      </div>

      {error ? (
        <div role="alert" className={ui.alert} data-testid="instructions-error">
          <p>{error}</p>
          {newer ? (
            <div className="mt-2 space-y-2">
              <p>
                Version {newer.version}
                {newer.savedBy ? ` by ${newer.savedBy.name}` : ''} ({formatWhen(newer.savedAt)}) says:
              </p>
              <pre
                className="max-h-48 overflow-auto whitespace-pre-wrap rounded border border-red-200 bg-white p-2 text-slate-900 dark:border-red-800 dark:bg-slate-900 dark:text-slate-100"
                data-testid="instructions-newer"
              >
                {newer.text || '(no instructions)'}
              </pre>
              <div className="flex flex-wrap gap-2">
                <button
                  type="button"
                  className={ui.secondary}
                  onClick={() => {
                    setSaved(newer);
                    setText(newer.text);
                    setNewer(null);
                    setError(null);
                  }}
                >
                  Use that version
                </button>
                <button
                  type="button"
                  className={ui.secondary}
                  onClick={() => {
                    setSaved(newer);
                    setNewer(null);
                    setError(null);
                    setPhase('confirming');
                  }}
                >
                  Keep mine and review again
                </button>
              </div>
            </div>
          ) : null}
        </div>
      ) : null}
      <ReviewAndSave
        flow={flow}
        testIdPrefix="instructions"
        changed={changed}
        question={
          text.trim()
            ? `Save these instructions as version ${saved.version + 1}? The assistant follows them from its next answer.`
            : `Remove the instructions (version ${saved.version + 1})? The assistant answers without them from its next answer.`
        }
        saveLabel="Save instructions"
        onSave={() => void save()}
        onDiscard={() => setText(saved.text)}
      />
    </section>
  );
}
