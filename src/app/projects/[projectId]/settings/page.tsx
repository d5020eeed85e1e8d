import type { Metadata } from 'next';
import { AssistantSettings } from '@/features/in-app-agent/components/settings/AssistantSettings';
import { AssistantBudgets, AssistantMemberData, AssistantRetention } from '@/features/in-app-agent/components/settings';
import { KEY_SCOPES } from '@/features/mcp/key-scopes';
import { ConnectedAppsTable } from '@/features/mcp/oauth/components/ConnectedAppsTable';
import { CreateKeyForm, KeyScopeList, RevokeKeyButton, WebhookForm } from '@/features/tracker/components/SettingsForms';
import { CardSection, NotAllowed, PageHeading, DataTable, card, When } from '@/features/tracker/components/ui';
import { requireProjectPage } from '@/features/tracker/page-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Settings · Tracker' };

const STATUS_CLASS = {
  active: 'bg-green-100 text-green-800 dark:bg-green-900/60 dark:text-green-200',
  revoked: 'bg-red-100 text-red-800 dark:bg-red-900/60 dark:text-red-200',
  expired: 'bg-slate-200 text-slate-700 dark:bg-slate-700 dark:text-slate-200',
} as const;

export default async function SettingsPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const ctx = await requireProjectPage(projectId, `/projects/${projectId}/settings`);
  const webhook = ctx.can('members:manage');
  const keys = ctx.can('apiKeys:manage');
  const assistant = ctx.can('agent:manage');
  if (!webhook && !keys && !assistant) return <NotAllowed projectId={projectId} what="change the project settings" />;
  // The assistant's settings (the module's: tool permissions and instructions, budgets, retention), for its admins.
  const [settings, list, apps, assistantSettings, spendAndData] = await Promise.all([
    webhook ? ctx.caller.tracker.settings.get({ projectId: ctx.project.id }) : null,
    keys ? ctx.caller.tracker.apiKeys.list({ projectId: ctx.project.id }) : [],
    keys ? ctx.caller.mcp.connectedApps.project({ projectId: ctx.project.id }) : [],
    assistant ? ctx.caller.agent.settings.get({ projectId: ctx.project.id }) : null,
    assistant
      ? Promise.all([
          ctx.caller.agent.budgets.get({ projectId: ctx.project.id }),
          ctx.caller.agent.dataPolicy.get({ projectId: ctx.project.id }),
          ctx.caller.agent.memberData.people({ projectId: ctx.project.id }),
        ])
      : null,
  ]);
  return (
    <main className="space-y-8">
      <PageHeading title="Settings" />
      {webhook ? (
        <CardSection headingId="webhook-heading" title="Webhook">
          <WebhookForm projectId={ctx.project.id} current={settings?.webhookUrl ?? null} />
        </CardSection>
      ) : null}
      {keys ? (
        <section className={`${card} space-y-4`} aria-labelledby="keys-heading">
          <div>
            <h2 id="keys-heading" className="text-lg font-semibold">
              API keys
            </h2>
            <p className="text-sm text-slate-600 dark:text-slate-400">
              Keys let external MCP clients use this project&apos;s tools at{' '}
              <code className="font-mono">/api/public/mcp</code>. Secrets are stored hashed and shown only once.
            </p>
          </div>
          <CreateKeyForm projectId={ctx.project.id} grantableScopes={KEY_SCOPES.filter((scope) => ctx.can(scope))} />
          {list.length === 0 ? (
            <p className="text-sm text-slate-600 dark:text-slate-400">No API keys yet.</p>
          ) : (
            <DataTable
              caption="API keys"
              testId="key-table"
              columns={[
                { label: 'Name' },
                { label: 'Public key' },
                { label: 'Scopes' },
                { label: 'Created' },
                { label: 'Expires' },
                { label: 'Last used' },
                { label: 'Status' },
                { label: 'Actions', className: 'text-right', srOnly: true },
              ]}
            >
              {list.map((k) => (
                <tr key={k.id} data-testid="key-row" data-status={k.status}>
                  <td className="px-3 py-2 font-medium">{k.name}</td>
                  <td className="px-3 py-2 font-mono text-xs">{k.publicKey}</td>
                  <td className="px-3 py-2" data-testid="key-scopes" data-scopes={k.scopes.join(' ')}>
                    <KeyScopeList scopes={k.scopes} />
                  </td>
                  <td className="px-3 py-2">
                    <When date={k.createdAt} />
                    {k.createdBy ? (
                      <span className="block text-xs text-slate-500 dark:text-slate-400">by {k.createdBy.name}</span>
                    ) : null}
                  </td>
                  <td className="px-3 py-2" data-testid="key-expires">
                    {k.expiresAt ? (
                      <When date={k.expiresAt} />
                    ) : (
                      <span className="text-slate-500 dark:text-slate-400">Never</span>
                    )}
                  </td>
                  <td className="px-3 py-2">
                    {k.lastUsedAt ? (
                      <When date={k.lastUsedAt} />
                    ) : (
                      <span className="text-slate-500 dark:text-slate-400">Never</span>
                    )}
                  </td>
                  <td className="px-3 py-2">
                    <span
                      className={`inline-block rounded-full px-2 py-0.5 text-xs font-medium capitalize ${STATUS_CLASS[k.status]}`}
                    >
                      {k.status}
                    </span>
                  </td>
                  <td className="px-3 py-2 text-right">
                    {k.status === 'revoked' ? null : (
                      <RevokeKeyButton projectId={ctx.project.id} keyId={k.id} name={k.name} />
                    )}
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </section>
      ) : null}
      {keys ? (
        <section className={`${card} space-y-4`} aria-labelledby="apps-heading">
          <div>
            <h2 id="apps-heading" className="text-lg font-semibold">
              Connected apps
            </h2>
            <p className="text-sm text-slate-600 dark:text-slate-400">
              MCP clients members signed in to for this project. Each acts as its member, never beyond the member&apos;s
              current role. Disconnecting one ends its access at once.
            </p>
          </div>
          {apps.length === 0 ? (
            <p className="text-sm text-slate-600 dark:text-slate-400" data-testid="no-connected-apps">
              No connected apps.
            </p>
          ) : (
            <ConnectedAppsTable apps={apps} view="project" projectId={ctx.project.id} />
          )}
        </section>
      ) : null}
      {assistantSettings ? <AssistantSettings projectId={ctx.project.id} initial={assistantSettings} /> : null}
      {spendAndData ? (
        <CardSection headingId="budgets-heading" title="Budgets">
          <AssistantBudgets projectId={ctx.project.id} initial={spendAndData[0]} />
        </CardSection>
      ) : null}
      {spendAndData ? (
        <CardSection headingId="retention-heading" title="Retention">
          <AssistantRetention projectId={ctx.project.id} initial={spendAndData[1]} />
          <AssistantMemberData projectId={ctx.project.id} initial={spendAndData[2]} />
        </CardSection>
      ) : null}
    </main>
  );
}
