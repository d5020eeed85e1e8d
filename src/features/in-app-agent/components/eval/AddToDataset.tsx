'use client';
/**
 * On a reviewed conversation: adds the whole conversation (one case per turn) or one of its turns
 * to a dataset of the evaluation studio.
 */
import { type FormEvent, useState } from 'react';
import { useTRPCClient } from '../../host-client';
import { trpcErrorMessage } from '../agent-api';
import { ui } from '../settings/styles';
import { NameSelect } from './StudioTable';

export function AddToDataset({
  projectId,
  conversationId,
  datasets,
  turns,
}: {
  projectId: string;
  conversationId: string;
  datasets: Array<{ id: string; name: string }>;
  /** Each turn's answer (its last assistant message) and its question. */
  turns: Array<{ messageId: string; question: string }>;
}) {
  const client = useTRPCClient();
  const [message, setMessage] = useState<{ error: boolean; text: string } | null>(null);
  const [busy, setBusy] = useState(false);
  if (!datasets.length) return null;

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const datasetId = String(form.get('dataset'));
    const turn = String(form.get('turn') ?? '');
    setBusy(true);
    try {
      const res = await client.agent.eval.datasets.addConversation.mutate({
        projectId,
        datasetId,
        conversationId,
        ...(turn ? { messageId: turn } : {}),
      });
      const name = datasets.find((d) => d.id === datasetId)?.name ?? 'the dataset';
      setMessage({
        error: false,
        text: res.added
          ? `${res.added} case${res.added === 1 ? '' : 's'} added to ${name}.`
          : `Already in ${name}: nothing added.`,
      });
    } catch (err) {
      setMessage({ error: true, text: trpcErrorMessage(err, 'The cases could not be added.') });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      onSubmit={onSubmit}
      className="flex flex-wrap items-end gap-2"
      aria-label="Add to a dataset"
      data-testid="eval-add-to-dataset"
    >
      <NameSelect label="Add to dataset" name="dataset" options={datasets} testId="eval-add-dataset" />
      <label className="text-sm">
        <span className={ui.label}>What</span>
        <select name="turn" defaultValue="" className={ui.field} data-testid="eval-add-turn">
          <option value="">Every turn</option>
          {turns.map((t) => (
            <option key={t.messageId} value={t.messageId}>
              {t.question.length > 60 ? `${t.question.slice(0, 59)}…` : t.question || '(no text)'}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy} className={ui.secondary} data-testid="eval-add-submit">
        Add
      </button>
      {message ? (
        <p role={message.error ? 'alert' : 'status'} className="basis-full text-sm">
          {message.text}
        </p>
      ) : null}
    </form>
  );
}
