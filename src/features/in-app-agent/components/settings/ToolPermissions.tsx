'use client';
/**
 * "Tool permissions": the assistant's tools by role, one choice per cell (runs without asking, asks
 * for approval, not available), held within each role's ceiling (a tool the role's scopes do not
 * include is shown disabled as not available; tools that delete data or send it outside never run
 * without asking), and the argument rules of tools that take them. Saved as a new version after
 * review; a save refused because someone else saved meanwhile shows their version and what was not
 * saved, with a way to apply it again.
 */
import { useId, useMemo, useState } from 'react';
import {
  cellOf,
  choicesWithin,
  describeRule,
  POLICY_CHOICE_LABELS,
  POLICY_CHOICES,
  type PolicyChanges,
  type PolicyChoice,
  type PolicyRule,
  policyChanges,
  ROLE_LABELS,
  type Role,
  type ToolPolicy,
} from '../../tool-policy';
import { ReviewAndSave, useVersionedSave } from './ReviewAndSave';
import { type AssistantSettingsData, formatWhen, type SettingsApi, ui } from './settings-api';

type Saved = AssistantSettingsData['policy'];
type Tool = AssistantSettingsData['tools'][number];

/** A policy with one cell set. */
function withCell(policy: ToolPolicy, tool: string, role: Role, choice: PolicyChoice): ToolPolicy {
  return { ...policy, cells: { ...policy.cells, [tool]: { ...policy.cells[tool], [role]: choice } } };
}

/** A policy with a tool's rules replaced. */
function withRules(policy: ToolPolicy, tool: string, rules: PolicyRule[]): ToolPolicy {
  return { ...policy, rules: { ...policy.rules, [tool]: rules } };
}

/** `base` with the changes someone made on another version applied again. */
function reapply(base: ToolPolicy, changes: PolicyChanges): ToolPolicy {
  let out = base;
  for (const c of changes.cells) out = withCell(out, c.tool, c.role, c.to);
  for (const r of changes.rules) out = withRules(out, r.tool, r.to);
  return out;
}

function ChangeList({ changes, titles }: { changes: PolicyChanges; titles: Map<string, string> }) {
  return (
    <ul className="ml-5 list-disc">
      {changes.cells.map((c) => (
        <li key={`${c.tool}-${c.role}`}>
          {titles.get(c.tool) ?? c.tool} · {ROLE_LABELS[c.role]}: {POLICY_CHOICE_LABELS[c.from]} →{' '}
          <strong>{POLICY_CHOICE_LABELS[c.to]}</strong>
        </li>
      ))}
      {changes.rules.map((r) => (
        <li key={`rules-${r.tool}`}>
          {titles.get(r.tool) ?? r.tool}: argument rules{' '}
          {r.to.length ? `now ${r.to.map((rule) => `“${describeRule(r.tool, rule)}”`).join(', ')}` : 'removed'}
        </li>
      ))}
    </ul>
  );
}

function RuleEditor({
  tool,
  rules,
  max,
  onChange,
  disabled,
}: {
  tool: Tool;
  rules: PolicyRule[];
  max: number;
  onChange: (rules: PolicyRule[]) => void;
  disabled: boolean;
}) {
  const id = useId();
  const fields = tool.rules ?? [];
  const first = fields[0];
  if (!first) return null;
  const set = (i: number, rule: PolicyRule) => onChange(rules.map((r, j) => (j === i ? rule : r)));
  return (
    <fieldset
      className="space-y-2 rounded-md border border-slate-200 p-3 dark:border-slate-700"
      data-testid="rule-editor"
      data-tool={tool.name}
    >
      <legend className="px-1 text-sm font-medium">Argument rules: {tool.title}</legend>
      <p className={ui.help} id={`${id}-help`}>
        Rules decide per call, for roles whose cell is not “{POLICY_CHOICE_LABELS.off}”. With “
        {POLICY_CHOICE_LABELS.ask}”, a call runs without asking only when every field it changes has a “runs without
        asking” rule; any “asks” rule that matches makes a call ask.
      </p>
      {rules.length === 0 ? <p className={ui.help}>No rules.</p> : null}
      <ol className="space-y-2">
        {rules.map((rule, i) => {
          const field = fields.find((f) => f.name === rule.when.field) ?? first;
          const n = i + 1;
          return (
            // biome-ignore lint/suspicious/noArrayIndexKey: rules have no identity of their own; the list is edited in place
            <li key={i} className="flex flex-wrap items-center gap-2 text-sm" data-testid="rule">
              <span aria-hidden="true">When</span>
              <select
                aria-label={`Rule ${n}: field`}
                className={ui.field}
                value={field.name}
                disabled={disabled}
                onChange={(e) => set(i, { ...rule, when: { field: e.target.value } })}
              >
                {fields.map((f) => (
                  <option key={f.name} value={f.name}>
                    {f.label}
                  </option>
                ))}
              </select>
              <select
                aria-label={`Rule ${n}: condition`}
                className={ui.field}
                value={rule.when.equals ?? ''}
                disabled={disabled}
                onChange={(e) =>
                  set(i, {
                    ...rule,
                    when: e.target.value ? { field: field.name, equals: e.target.value } : { field: field.name },
                  })
                }
              >
                <option value="">changes</option>
                {(field.values ?? []).map((v) => (
                  <option key={v} value={v}>
                    is set to {v}
                  </option>
                ))}
              </select>
              <span aria-hidden="true">:</span>
              <select
                aria-label={`Rule ${n}: then`}
                className={ui.field}
                value={rule.choice}
                disabled={disabled}
                onChange={(e) => set(i, { ...rule, choice: e.target.value as PolicyRule['choice'] })}
              >
                <option value="auto">{POLICY_CHOICE_LABELS.auto}</option>
                <option value="ask">{POLICY_CHOICE_LABELS.ask}</option>
              </select>
              <button
                type="button"
                className={ui.secondary}
                disabled={disabled}
                onClick={() => onChange(rules.filter((_, j) => j !== i))}
              >
                Remove rule {n}
              </button>
            </li>
          );
        })}
      </ol>
      <button
        type="button"
        className={ui.secondary}
        disabled={disabled || rules.length >= max}
        aria-describedby={`${id}-help`}
        onClick={() => onChange([...rules, { when: { field: first.name }, choice: 'auto' }])}
      >
        Add a rule
      </button>
    </fieldset>
  );
}

export function ToolPermissions({
  projectId,
  api,
  initial,
}: {
  projectId: string;
  api: SettingsApi;
  initial: AssistantSettingsData;
}) {
  const id = useId();
  const { tools, roles } = initial;
  const [saved, setSaved] = useState<Saved>(initial.policy);
  const [draft, setDraft] = useState<ToolPolicy>(initial.policy.policy);
  const flow = useVersionedSave();
  const { phase, setPhase, setNotice, error, setError, busy } = flow;
  const [unsaved, setUnsaved] = useState<PolicyChanges | null>(null);

  const byName = useMemo(() => new Map(tools.map((t) => [t.name, t])), [tools]);
  const titles = useMemo(() => new Map(tools.map((t) => [t.name, t.title])), [tools]);
  const ceilingOf = (tool: string) => byName.get(tool)?.ceilings;
  const names = tools.map((t) => t.name);
  const changes = policyChanges(saved.policy, draft, names, ceilingOf);
  const changed = changes.cells.length + changes.rules.length > 0;

  const edit = (next: ToolPolicy) => {
    setDraft(next);
    setNotice(null);
    setError(null);
    if (phase === 'confirming') setPhase('editing');
  };

  const save = () =>
    flow.save({
      write: () => api.savePolicy({ projectId, baseVersion: saved.version, policy: draft }),
      saved: async () => {
        const fresh = await api.load(projectId);
        setSaved(fresh.policy);
        setDraft(fresh.policy.policy);
        setUnsaved(null);
      },
      conflict: async () => {
        const fresh = await api.load(projectId);
        setUnsaved(changes);
        setSaved(fresh.policy);
        setDraft(fresh.policy.policy);
      },
      failure: 'The tool permissions could not be saved. Try again.',
    });

  return (
    <section aria-labelledby={`${id}-title`} className="space-y-3" data-testid="tool-permissions">
      <div>
        <h3 id={`${id}-title`} className="text-base font-semibold">
          Tool permissions
        </h3>
        <p className={ui.help}>
          What the assistant may do for each role: run a tool without asking, ask the user for approval first, or not
          have it at all. A role never gets a tool its own permissions do not include, and tools that delete data or
          send it outside the product always ask. Changes apply from the assistant&apos;s next answer.
        </p>
        <p className="mt-1 text-xs text-slate-600 dark:text-slate-400" data-testid="policy-version">
          {saved.version
            ? `Version ${saved.version}, saved${saved.savedBy ? ` by ${saved.savedBy.name}` : ''} on ${formatWhen(saved.savedAt)}.`
            : 'The defaults: never changed.'}
          {saved.unreadable ? ' The saved version could not be read; saving replaces it.' : ''}
        </p>
      </div>
      {/* Scrolls sideways on narrow screens; its selects are what the keyboard reaches. */}
      <div className="overflow-x-auto rounded-lg border border-slate-200 dark:border-slate-800">
        <table className="w-full text-left text-sm" data-testid="tool-permissions-table">
          <caption className="sr-only">Tool permissions by role</caption>
          <thead className="bg-slate-50 text-xs uppercase tracking-wide text-slate-600 dark:bg-slate-900 dark:text-slate-400">
            <tr>
              <th scope="col" className="px-3 py-2">
                Tool
              </th>
              {roles.map((role) => (
                <th key={role} scope="col" className="px-3 py-2">
                  {ROLE_LABELS[role]}
                </th>
              ))}
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-200 dark:divide-slate-800">
            {tools.map((tool) => (
              <tr key={tool.name} data-testid="tool-row" data-tool={tool.name}>
                <th scope="row" className="px-3 py-2 font-normal">
                  <span className="block font-medium">{tool.title}</span>
                  <code className="text-xs text-slate-600 dark:text-slate-400">{tool.name}</code>
                  {tool.alwaysAsks ? (
                    <span className="ml-1 text-xs text-slate-700 dark:text-slate-300">· always asks</span>
                  ) : null}
                </th>
                {roles.map((role) => {
                  const ceiling = tool.ceilings[role];
                  const value = cellOf(draft, tool.name, role, ceiling);
                  const before = cellOf(saved.policy, tool.name, role, ceiling);
                  const label = `${tool.title}, ${ROLE_LABELS[role]}`;
                  return (
                    <td
                      key={role}
                      className={`px-3 py-2 ${value !== before ? 'bg-amber-50 dark:bg-amber-950' : ''}`}
                      data-changed={value !== before || undefined}
                    >
                      <select
                        aria-label={label}
                        data-testid="policy-cell"
                        data-tool={tool.name}
                        data-role={role}
                        className={ui.field}
                        value={value}
                        disabled={busy || !ceiling.granted}
                        title={
                          ceiling.granted
                            ? undefined
                            : `The ${ROLE_LABELS[role]} role's permissions do not include this tool.`
                        }
                        onChange={(e) => edit(withCell(draft, tool.name, role, e.target.value as PolicyChoice))}
                      >
                        {POLICY_CHOICES.map((choice) => (
                          <option key={choice} value={choice} disabled={!choicesWithin(ceiling).includes(choice)}>
                            {POLICY_CHOICE_LABELS[choice]}
                          </option>
                        ))}
                      </select>
                      {value !== before ? <span className="sr-only"> (changed)</span> : null}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>

      {tools
        .filter((t) => t.rules)
        .map((tool) => (
          <RuleEditor
            key={tool.name}
            tool={tool}
            rules={draft.rules[tool.name] ?? []}
            max={initial.limits.rulesPerTool}
            disabled={busy}
            onChange={(rules) => edit(withRules(draft, tool.name, rules))}
          />
        ))}

      {error ? (
        <div role="alert" className={ui.alert} data-testid="policy-error">
          <p>{error}</p>
          {unsaved ? (
            <>
              <p className="mt-1">The table now shows that version. Your changes were not saved:</p>
              <ChangeList changes={unsaved} titles={titles} />
              <button
                type="button"
                className={`${ui.secondary} mt-2`}
                onClick={() => {
                  edit(reapply(saved.policy, unsaved));
                  setUnsaved(null);
                }}
              >
                Apply my changes again
              </button>
            </>
          ) : null}
        </div>
      ) : null}
      <ReviewAndSave
        flow={flow}
        testIdPrefix="policy"
        changed={changed}
        question={`Save these changes as version ${saved.version + 1}?`}
        details={<ChangeList changes={changes} titles={titles} />}
        saveLabel="Save tool permissions"
        status={
          changed
            ? `${changes.cells.length + changes.rules.length} unsaved change${changes.cells.length + changes.rules.length === 1 ? '' : 's'}`
            : 'No unsaved changes'
        }
        onSave={() => void save()}
        onDiscard={() => edit(saved.policy)}
      />
    </section>
  );
}
