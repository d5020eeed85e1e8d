import 'server-only';
import { ProjectInput, projectProcedure, router } from '@/server/trpc';
import { AuditListInput, auditFacets, listAudit } from './audit';
import { MCP_TOOL_METADATA } from './registry';

/** Administration of the product's MCP server: the tool-call audit trail and the tool catalogue. */
export const mcpAdminRouter = router({
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
