import type { Metadata } from 'next';
import Link from 'next/link';
import { ConnectedAppsTable } from '@/features/mcp/oauth/components/ConnectedAppsTable';
import { UserMenu } from '@/features/tracker/components/UserMenu';
import { card } from '@/features/tracker/components/ui';
import { pageCaller, requireUser } from '@/features/tracker/page-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Account · Tracker' };

/** The signed-in user's own settings: the apps they connected through MCP authorization. */
export default async function AccountPage() {
  const user = await requireUser('/account');
  const apps = await (await pageCaller(user)).mcp.connectedApps.mine();
  return (
    <>
      <header className="border-b border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
        <div className="mx-auto flex max-w-5xl items-center justify-between gap-4 px-4 py-3">
          <Link href="/projects" className="text-lg font-semibold text-blue-700 dark:text-blue-300">
            Tracker
          </Link>
          <UserMenu user={user} />
        </div>
      </header>
      <main className="mx-auto max-w-5xl space-y-6 px-4 py-8">
        <div>
          <h1 className="text-2xl font-semibold tracking-tight">Your account</h1>
          <p className="text-sm text-slate-600 dark:text-slate-400">
            {user.name} · {user.email}
          </p>
        </div>
        <section className={`${card} space-y-3`} aria-labelledby="apps-heading">
          <div>
            <h2 id="apps-heading" className="text-lg font-semibold">
              Connected apps
            </h2>
            <p className="text-sm text-slate-600 dark:text-slate-400">
              MCP clients you signed in to (Claude, VS Code, Cursor...). Each acts in one project, never beyond your
              role there. Disconnecting one ends its access at once.
            </p>
          </div>
          {apps.length === 0 ? (
            <p className="text-sm text-slate-600 dark:text-slate-400" data-testid="no-connected-apps">
              No connected apps.
            </p>
          ) : (
            <ConnectedAppsTable apps={apps} view="user" />
          )}
        </section>
      </main>
    </>
  );
}
