/**
 * The apps connected through MCP authorization, as a table: the app (and who vouches for its name),
 * the project or the member who connected it, the access, when it was connected and last used, and
 * a button to disconnect it. Prop-driven; renders on the server.
 */
import { KeyScopeList } from '@/features/tracker/components/SettingsForms';
import { DataTable, When } from '@/features/tracker/components/ui';
import type { ConnectedApp } from '../grants';
import { RevokeGrantButton } from './RevokeGrantButton';

export function ConnectedAppsTable(props: {
  apps: ConnectedApp[];
  /** `user`: the signed-in user's own apps (a project column); `project`: a project's (a member column). */
  view: 'user' | 'project';
  projectId?: string;
}) {
  const { apps, view } = props;
  return (
    <DataTable
      caption="Connected apps"
      testId="connected-apps"
      columns={[
        { label: 'App' },
        view === 'user' ? { label: 'Project' } : { label: 'Connected by' },
        { label: 'Access' },
        { label: 'Connected' },
        { label: 'Last used' },
        { label: 'Actions', className: 'text-right', srOnly: true },
      ]}
    >
      {apps.map((a) => (
        <tr key={a.id} data-testid="connected-app" data-grant-id={a.id}>
          <td className="px-3 py-2">
            <span className="font-medium">{a.client.name}</span>
            <span className="block text-xs text-slate-500 dark:text-slate-400">
              {a.client.documentHost ? `metadata on ${a.client.documentHost}` : 'self-registered'}
            </span>
          </td>
          <td className="px-3 py-2">
            {view === 'user' ? (
              a.project.name
            ) : (
              <>
                {a.user.name}
                <span className="block text-xs text-slate-500 dark:text-slate-400">{a.user.email}</span>
              </>
            )}
          </td>
          <td className="px-3 py-2">
            <KeyScopeList scopes={a.scopes} />
          </td>
          <td className="px-3 py-2">
            <When date={a.createdAt} />
          </td>
          <td className="px-3 py-2">
            {a.lastUsedAt ? (
              <When date={a.lastUsedAt} />
            ) : (
              <span className="text-slate-500 dark:text-slate-400">Never</span>
            )}
          </td>
          <td className="px-3 py-2 text-right">
            <RevokeGrantButton
              grantId={a.id}
              appName={a.client.name}
              {...(props.projectId ? { projectId: props.projectId } : {})}
            />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
