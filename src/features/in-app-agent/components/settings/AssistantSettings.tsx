'use client';
/**
 * The "Assistant" section of a project's settings (admins and owners): "Tool permissions" and
 * "Assistant instructions". The host's settings page mounts it with what `agent.settings.get`
 * answered; each part saves its own versions.
 */
import { AssistantInstructions } from './AssistantInstructions';
import { type AssistantSettingsData, useSettingsApi } from './settings-api';
import { ToolPermissions } from './ToolPermissions';

export function AssistantSettings({ projectId, initial }: { projectId: string; initial: AssistantSettingsData }) {
  const api = useSettingsApi();
  return (
    <section
      aria-labelledby="assistant-settings-heading"
      className="space-y-6 rounded-lg border border-slate-200 bg-white p-4 dark:border-slate-800 dark:bg-slate-900"
      data-testid="assistant-settings"
    >
      <div>
        <h2 id="assistant-settings-heading" className="text-lg font-semibold">
          Assistant
        </h2>
        <p className="text-sm text-slate-600 dark:text-slate-400">
          What the in-app assistant may do in this project and what it is told. Every save is a new version, listed in
          the audit; the assistant goes by the newest from its next answer.
        </p>
      </div>
      <ToolPermissions projectId={projectId} api={api} initial={initial} />
      <AssistantInstructions projectId={projectId} api={api} initial={initial} />
    </section>
  );
}
