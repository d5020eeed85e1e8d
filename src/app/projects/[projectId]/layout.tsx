import Link from 'next/link';
import type { ReactNode } from 'react';
import { NavLink } from '@/features/tracker/components/NavLink';
import { RoleBadge } from '@/features/tracker/components/ui';
import { UserMenu } from '@/features/tracker/components/UserMenu';
import { projectLayoutContext } from '@/features/tracker/page-access';
import { AssistantPanel, AssistantToggle } from '@/features/in-app-agent/components';
import { AssistantHost } from '@/features/tracker/components/AssistantHost';

export const dynamic = 'force-dynamic';

/**
 * The frame of every project page: product name, project name, the sections the caller's role may
 * use, and the user menu. Non-members get a 404. Signed-out visitors see only the page, which
 * sends them to /login with the right return address.
 */
export default async function ProjectLayout({
  children,
  params,
}: {
  children: ReactNode;
  params: Promise<{ projectId: string }>;
}) {
  const { projectId } = await params;
  const ctx = await projectLayoutContext(projectId);
  if (!ctx) return <>{children}</>;
  const base = `/projects/${encodeURIComponent(ctx.project.id)}`;
  const assistant = ctx.can('agent:use');
  return (
    <AssistantHost projectId={ctx.project.id} userId={ctx.user.id}>
      <div className="flex min-h-screen flex-col">
        <header className="border-b border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
          <div className="mx-auto flex max-w-6xl flex-wrap items-center justify-between gap-3 px-4 py-2.5">
            <div className="flex flex-wrap items-center gap-3">
              <Link href="/projects" className="text-lg font-semibold text-blue-700 dark:text-blue-300">
                Tracker
              </Link>
              <span aria-hidden="true" className="text-slate-400">
                /
              </span>
              <Link href={`${base}/issues`} className="font-medium" data-testid="project-name">
                {ctx.project.name}
              </Link>
              <RoleBadge role={ctx.access.role} />
            </div>
            <div className="flex items-center gap-3">
              <div id="header-actions" className="flex items-center gap-2">
                {assistant ? <AssistantToggle /> : null}
              </div>
              <UserMenu user={ctx.user} />
            </div>
          </div>
          <nav aria-label="Project" className="mx-auto flex max-w-6xl flex-wrap gap-1 px-4 pb-2">
            {ctx.can('issues:read') ? <NavLink href={`${base}/issues`}>Issues</NavLink> : null}
            {ctx.can('members:read') ? <NavLink href={`${base}/members`}>Members</NavLink> : null}
            {ctx.can('members:manage') || ctx.can('apiKeys:manage') ? (
              <NavLink href={`${base}/settings`}>Settings</NavLink>
            ) : null}
            {ctx.can('audit:read') ? <NavLink href={`${base}/audit`}>Audit</NavLink> : null}
            {ctx.can('agent:review') ? <NavLink href={`${base}/assistant/review`}>Assistant review</NavLink> : null}
          </nav>
        </header>
        <div className="flex flex-1">
          <div className="mx-auto w-full min-w-0 max-w-6xl flex-1 px-4 py-6">{children}</div>
          {assistant ? <AssistantPanel /> : null}
        </div>
      </div>
    </AssistantHost>
  );
}
