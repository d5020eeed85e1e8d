import 'server-only';
import { appError, authedProcedure, ProjectInput, projectProcedure, router } from '@/server/trpc';
import { AuditListInput, auditFacets, listAudit } from './audit';
import { GrantIdInput, listProjectGrants, listUserGrants, revokeGrant } from './oauth/grants';
import { MCP_TOOL_METADATA } from './registry';

const notFound = () => appError('NOT_FOUND', 'GRANT_NOT_FOUND', 'No such connected app.');

/** Apps connected through MCP authorization (OAuth): the user's own, and a project's (admins). */
const connectedAppsRouter = router({
  /** The signed-in user's connected apps, in every project. */
  mine: authedProcedure.query(({ ctx }) => listUserGrants(ctx.prisma, ctx.user.id)),
  revokeMine: authedProcedure.input(GrantIdInput).mutation(async ({ ctx, input }) => {
    if (!(await revokeGrant(ctx.prisma, input.grantId, { userId: ctx.user.id }))) throw notFound();
    return { revoked: true };
  }),
  /** Every app connected to the project by any member (ADMIN and OWNER). */
  project: projectProcedure('apiKeys:manage').query(({ ctx, input }) => listProjectGrants(ctx.prisma, input.projectId)),
  revokeInProject: projectProcedure('apiKeys:manage')
    .input(GrantIdInput.extend({ projectId: ProjectInput.shape.projectId }))
    .mutation(async ({ ctx, input }) => {
      if (!(await revokeGrant(ctx.prisma, input.grantId, { projectId: input.projectId }))) throw notFound();
      return { revoked: true };
    }),
});

/**
 * Administration of the product's MCP server: the tool-call audit trail, the tool catalogue and
 * the connected apps.
 */
export const mcpAdminRouter = router({
  connectedApps: connectedAppsRouter,
  audit: router({
    /** The project's tool-call audit trail, newest first (ADMIN and OWNER). */
    list: projectProcedure('audit:read')
      .input(AuditListInput.extend({ projectId: ProjectInput.shape.projectId }))
      .query(({ ctx, input }) => {
        const { projectId, ...filters } = input;
        return listAudit(ctx.prisma, projectId, filters);
      }),
    /** The values the audit filters offer: tools, project keys and users seen in the trail. */
    facets: projectProcedure('audit:read').query(({ ctx, input }) => auditFacets(ctx.prisma, input.projectId)),
  }),
  /** The tools the MCP server offers, with the scope each needs (any member may read it). */
  tools: projectProcedure('project:read').query(() =>
    MCP_TOOL_METADATA.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      scope: t.scope,
      annotations: t.annotations,
      tags: t.tags,
    })),
  ),
});
