import type { Metadata } from 'next';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { loadConsent } from '@/features/mcp/oauth/authorize';
import { ConsentForm } from '@/features/mcp/oauth/components/ConsentForm';
import { CONSENT_DECISION_PATH, CONSENT_PATH } from '@/features/mcp/oauth/config';
import { ROLE_LABEL, link } from '@/features/tracker/components/ui';
import { currentUser } from '@/features/tracker/page-access';
import { getPrisma } from '@/server/db';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Connect an app · Tracker' };

/**
 * The consent page of MCP authorization: who asks (the app's name, the host it returns to, and for
 * an app known by its metadata document, the host vouching for it), which project and which access.
 * Signed-out visitors sign in first and come back here.
 */
export default async function ConsentPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const sp = await searchParams;
  const sealed = typeof sp.request === 'string' ? sp.request : '';
  const user = await currentUser();
  if (!user)
    redirect(`/login?callbackUrl=${encodeURIComponent(`${CONSENT_PATH}?request=${encodeURIComponent(sealed)}`)}`);
  const load = await loadConsent(await getPrisma(), sealed, user);
  return (
    <main className="flex min-h-screen items-center justify-center p-4 sm:p-6">
      <div className="w-full max-w-lg rounded-xl border border-slate-200 bg-white p-5 shadow-sm sm:p-6 dark:border-slate-800 dark:bg-slate-900">
        <p className="text-sm font-semibold text-blue-700 dark:text-blue-300">Tracker</p>
        {load.ok ? (
          <>
            <h1 className="mb-3 mt-1 text-2xl font-semibold tracking-tight" data-testid="consent-title">
              Connect {load.view.client.name}
            </h1>
            <p className="mb-4 text-sm text-slate-700 dark:text-slate-300">
              <span className="font-medium">{load.view.client.name}</span> asks to use Tracker&apos;s tools as you (
              {user.email}).
            </p>
            <dl className="mb-5 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm" data-testid="consent-client">
              <dt className="text-slate-600 dark:text-slate-400">Returns to</dt>
              <dd className="break-all font-mono text-xs leading-5" data-testid="consent-redirect-host">
                {load.view.redirectHost}
              </dd>
              <dt className="text-slate-600 dark:text-slate-400">Identified by</dt>
              <dd className="break-all text-xs leading-5">
                {load.view.client.documentHost ? (
                  <>
                    its metadata on <span className="font-mono">{load.view.client.documentHost}</span>
                  </>
                ) : (
                  'its own registration (the name is what the app says it is)'
                )}
              </dd>
            </dl>
            <ConsentForm
              action={CONSENT_DECISION_PATH}
              sealed={load.view.sealed}
              clientName={load.view.client.name}
              requestedScopes={load.view.requestedScopes}
              projects={load.view.projects.map((p) => ({
                id: p.id,
                name: p.name,
                roleLabel: ROLE_LABEL[p.role],
                scopes: p.scopes,
              }))}
            />
            <p className="mt-5 text-xs text-slate-600 dark:text-slate-400">
              You can disconnect the app at any time under{' '}
              <Link href="/account" className={`${link} underline`}>
                Connected apps
              </Link>
              .
            </p>
          </>
        ) : (
          <>
            <h1 className="mb-3 mt-1 text-2xl font-semibold tracking-tight" data-testid="consent-error">
              {load.title}
            </h1>
            <p className="text-sm text-slate-700 dark:text-slate-300">{load.message}</p>
            <p className="mt-4 text-sm">
              <Link href="/projects" className={link}>
                Back to your projects
              </Link>
            </p>
          </>
        )}
      </div>
    </main>
  );
}
