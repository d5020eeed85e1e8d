'use client';
import type { ModelInfo } from '../schema';
import { InfoIcon } from './icons';

/** Which model answers; for the offline demo model, how to configure a real one. */
export function ModelNotice({ model }: { model: ModelInfo | null }) {
  if (!model) return null;
  return (
    <div
      data-testid="model-notice"
      data-demo={model.demo ? 'true' : 'false'}
      className={`border-b px-3 py-1.5 text-xs ${
        model.demo
          ? 'border-amber-200 bg-amber-50 text-amber-950 dark:border-amber-900/60 dark:bg-amber-950/40 dark:text-amber-100'
          : 'border-slate-200 text-slate-600 dark:border-slate-800 dark:text-slate-300'
      }`}
    >
      <p>
        <InfoIcon /> Answers by <strong>{model.label}</strong>
        {model.demo ? null : <span className="text-slate-500 dark:text-slate-400"> ({model.provider})</span>}
      </p>
      {model.demo ? (
        <details className="mt-0.5">
          <summary className="cursor-pointer select-none underline">How to use a real model</summary>
          <p className="mt-1">
            The demo model runs offline and understands a few requests: “list open issues”, “show issue 3”, “summarize
            the project”, “create an issue titled …”, “close issue 3”. To use a real model, set{' '}
            <code>AGENT_MODEL_PROVIDER=bedrock</code> (with AWS credentials) or{' '}
            <code>AGENT_MODEL_PROVIDER=openai-compatible</code> (with <code>OPENAI_COMPATIBLE_BASE_URL</code> and{' '}
            <code>OPENAI_COMPATIBLE_MODEL</code>) on the server; see the README.
          </p>
        </details>
      ) : null}
    </div>
  );
}
