import type { Metadata } from 'next';
import { AddMemberForm, MemberRowControls } from '@/features/tracker/components/MembersManager';
import { CardSection, NotAllowed, PageHeading, RoleBadge, DataTable, When } from '@/features/tracker/components/ui';
import { requireProjectPage } from '@/features/tracker/page-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Members · Tracker' };

export default async function MembersPage({ params }: { params: Promise<{ projectId: string }> }) {
  const { projectId } = await params;
  const ctx = await requireProjectPage(projectId, `/projects/${projectId}/members`);
  if (!ctx.can('members:read')) return <NotAllowed projectId={projectId} what="see the members" />;
  const manage = ctx.can('members:manage');
  const members = await ctx.caller.tracker.members.list({ projectId: ctx.project.id });
  return (
    <main className="space-y-6">
      <PageHeading title="Members" />
      {manage ? (
        <CardSection headingId="add-member-heading" title="Add a member">
          <AddMemberForm projectId={ctx.project.id} actorRole={ctx.access.role} />
        </CardSection>
      ) : null}
      <DataTable
        caption="Project members"
        testId="member-table"
        columns={[
          { label: 'Name' },
          { label: 'Email' },
          { label: 'Role' },
          { label: 'Member since', className: 'hidden md:table-cell' },
          manage ? { label: 'Actions', className: 'text-right', srOnly: true } : null,
        ]}
      >
        {members.map((m) => (
          <tr key={m.userId} data-testid="member-row" data-email={m.email}>
            <td className="px-3 py-2 font-medium">
              {m.name}
              {m.userId === ctx.user.id ? (
                <span className="ml-1 text-xs text-slate-500 dark:text-slate-400">(you)</span>
              ) : null}
            </td>
            <td className="px-3 py-2">{m.email}</td>
            <td className="px-3 py-2">
              <RoleBadge role={m.role} />
            </td>
            <td className="hidden px-3 py-2 text-slate-600 md:table-cell dark:text-slate-400">
              <When date={m.joinedAt} />
            </td>
            {manage ? (
              <td className="px-3 py-2">
                <MemberRowControls
                  projectId={ctx.project.id}
                  member={{ userId: m.userId, name: m.name, role: m.role }}
                  actorRole={ctx.access.role}
                  isSelf={m.userId === ctx.user.id}
                />
              </td>
            ) : null}
          </tr>
        ))}
      </DataTable>
    </main>
  );
}
