import type { Metadata } from 'next';
import Link from 'next/link';
import { SettingsHistory } from '@/features/in-app-agent/components/settings/SettingsHistory';
import { AuditListInput } from '@/features/mcp/audit';
import { AuditFilters, AuditTable, auditQuery, type AuditFilterValues } from '@/features/mcp/components/AuditTable';
import { NotAllowed, PageIntro } from '@/features/tracker/components/ui';
import { type ProjectQueryPageProps, requireProjectPage } from '@/features/tracker/page-access';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Tool-call audit' };

function one(v: string | string[] | undefined): string | undefined {
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s : undefined;
}

/** The project's MCP tool-call audit trail (ADMIN and OWNER, scope `audit:read`). */
export default async function AuditPage({ params, searchParams }: ProjectQueryPageProps) {
  const { projectId } = await params;
  const sp = await searchParams;
  const basePath = `/projects/${encodeURIComponent(projectId)}/audit`;

  const ctx = await requireProjectPage(projectId, basePath);
  if (!ctx.can('audit:read'))
    return <NotAllowed projectId={projectId} what="read the tool-call audit trail" testId="audit-not-allowed" />;

  // Each filter is checked with the procedure's own schema; an invalid one is ignored, not an error.
  const filterSchemas = AuditListInput.shape;
  const pick = <K extends 'tool' | 'status' | 'runId' | 'keyKind' | 'publicKey' | 'userId'>(key: K) => {
    const r = filterSchemas[key].safeParse(one(sp[key]));
    return r.success && r.data !== undefined ? { [key]: r.data } : {};
  };
  const values: AuditFilterValues = {
    ...pick('tool'),
    ...pick('status'),
    ...pick('runId'),
    ...pick('keyKind'),
    ...pick('publicKey'),
    ...pick('userId'),
  };
  const cursor = one(sp.cursor)?.slice(0, 100);

  const [data, facets, assistantChanges] = await Promise.all([
    ctx.caller.mcp.audit.list({ projectId, ...values, ...(cursor ? { cursor } : {}) }),
    ctx.caller.mcp.audit.facets({ projectId }),
    ctx.caller.agent.settings.history({ projectId }),
  ]);

  const query = auditQuery(values);
  const firstPage = query.size ? `${basePath}?${query}` : basePath;
  const nextQuery = new URLSearchParams(query);
  if (data.nextCursor) nextQuery.set('cursor', data.nextCursor);

  return (
    <main className="space-y-4" data-testid="audit-page">
      <PageIntro title="Tool-call audit">
        Every call to this project&apos;s MCP tools — by project keys and by the assistant — newest first, including
        denied and failed calls. Previews of arguments and results are shortened.
      </PageIntro>
      <AuditFilters basePath={basePath} facets={facets} values={values} />
      <AuditTable rows={data.items} />
      <nav aria-label="Pages" className="flex gap-4 text-sm">
        {cursor ? (
          <Link href={firstPage} className="text-blue-700 underline dark:text-blue-300">
            Newest
          </Link>
        ) : null}
        {data.nextCursor ? (
          <Link
            href={`${basePath}?${nextQuery}`}
            className="text-blue-700 underline dark:text-blue-300"
            data-testid="audit-next"
          >
            Older calls
          </Link>
        ) : null}
      </nav>
      <SettingsHistory entries={assistantChanges.entries} titles={assistantChanges.titles} projectId={projectId} />
    </main>
  );
}
