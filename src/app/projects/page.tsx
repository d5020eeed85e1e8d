import type { Metadata } from 'next';
import Link from 'next/link';
import { UserMenu } from '@/features/tracker/components/UserMenu';
import { RoleBadge, card } from '@/features/tracker/components/ui';
import { pageCaller, requireUser } from '@/features/tracker/page-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Projects · Tracker' };

export default async function ProjectsPage() {
  const user = await requireUser('/projects');
  const projects = await (await pageCaller(user)).tracker.projects.list();
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
      <main className="mx-auto max-w-5xl px-4 py-8">
        <h1 className="mb-6 text-2xl font-semibold tracking-tight">Projects</h1>
        {projects.length === 0 ? (
          <p className="text-sm text-slate-600 dark:text-slate-400" data-testid="no-projects">
            You are not a member of any project yet. Ask a project owner or admin to add you with your email,{' '}
            {user.email}.
          </p>
        ) : (
          <ul className="grid gap-4 sm:grid-cols-2" aria-label="Your projects">
            {projects.map((p) => (
              <li key={p.id} className={card} data-testid="project-card">
                <div className="flex items-start justify-between gap-2">
                  <h2 className="text-lg font-semibold">
                    <Link href={`/projects/${p.id}`} className="hover:underline">
                      {p.name}
                    </Link>
                  </h2>
                  <RoleBadge role={p.role} />
                </div>
                {p.description ? (
                  <p className="mt-1 text-sm text-slate-600 dark:text-slate-400">{p.description}</p>
                ) : null}
                <p className="mt-3 text-sm text-slate-700 dark:text-slate-300">
                  {p.openIssues} open {p.openIssues === 1 ? 'issue' : 'issues'}
                </p>
              </li>
            ))}
          </ul>
        )}
      </main>
    </>
  );
}
