/**
 * tRPC API of the Tracker. Every project procedure goes through `projectProcedure(scope)`: a
 * non-member gets NOT_FOUND, a member whose role lacks the scope gets FORBIDDEN (MISSING_SCOPE).
 * Every service call is bound to the checked `projectId`, so ids and numbers of other projects are
 * NOT_FOUND too.
 */
import { z } from 'zod';
import { normalizeKeyScopes } from '@/features/mcp/key-scopes';
import { createProjectKey, revokeKey } from '@/server/api-keys';
import { hasProjectAccess, ROLE_RANK, scopesFor, type Role } from '@/server/rbac';
import { SafeText } from '@/server/text';
import { appError, authedProcedure, ProjectInput, projectProcedure, router } from '@/server/trpc';
import * as apiKeys from './services/api-keys';
import * as comments from './services/comments';
import * as issues from './services/issues';
import * as labels from './services/labels';
import * as members from './services/members';
import * as projects from './services/projects';
import { parseInput } from './services/shared';

/** Extends a service input schema with the `projectId` every project procedure carries. */
const PID = { projectId: ProjectInput.shape.projectId };

/** Drops `projectId` so the rest can go to a (strict) service schema. */
function rest<T extends { projectId: string }>(input: T): Omit<T, 'projectId'> {
  const { projectId: _ignored, ...others } = input;
  return others;
}

/**
 * Only owners manage owners: an ADMIN may not grant OWNER, nor change or remove an OWNER, nor give
 * anyone a role above their own.
 */
function assertMayManageRole(actor: Role | null, targetCurrent: Role | null, targetNew: Role | null): void {
  if (actor === 'OWNER') return;
  const rank = actor ? ROLE_RANK[actor] : -1;
  if (targetCurrent === 'OWNER' || targetNew === 'OWNER' || (targetNew && ROLE_RANK[targetNew] > rank)) {
    throw appError('FORBIDDEN', 'OWNER_ONLY', 'Only an owner can grant, change or remove the owner role.');
  }
}

/** What any member may see of a project (not its webhook URL). */
function projectHeader(p: projects.ProjectInfo) {
  return { id: p.id, slug: p.slug, name: p.name, description: p.description, createdAt: p.createdAt };
}

const projectsRouter = router({
  /** The caller's projects with their role. */
  list: authedProcedure.query(({ ctx }) => projects.listProjectsForUser(ctx.prisma, ctx.user.id)),
  /** One project with the caller's role and scopes, and the issue counts. */
  get: projectProcedure('project:read').query(async ({ ctx, input }) => {
    const [project, summary] = await Promise.all([
      projects.getProject(ctx.prisma, input.projectId),
      projects.projectSummary(ctx.prisma, input.projectId),
    ]);
    return { project: projectHeader(project), role: ctx.access.role, scopes: scopesFor(ctx.access), summary };
  }),
  /** One project with the caller's access to it (no counts): what every project page starts from. */
  access: projectProcedure('project:read').query(async ({ ctx, input }) => {
    const project = await projects.getProject(ctx.prisma, input.projectId);
    return { project: projectHeader(project), access: ctx.access };
  }),
});

const issuesRouter = router({
  list: projectProcedure('issues:read')
    .input(issues.ListIssuesInput.extend(PID))
    .query(({ ctx, input }) => issues.listIssues(ctx.prisma, input.projectId, rest(input))),
  search: projectProcedure('issues:read')
    .input(issues.SearchIssuesInput.extend(PID))
    .query(({ ctx, input }) => issues.searchIssues(ctx.prisma, input.projectId, rest(input))),
  get: projectProcedure('issues:read')
    .input(issues.GetIssueInput.extend(PID))
    .query(({ ctx, input }) => issues.getIssue(ctx.prisma, input.projectId, rest(input))),
  create: projectProcedure('issues:write')
    .input(issues.CreateIssueInput.extend(PID))
    .mutation(({ ctx, input }) =>
      issues.createIssue(ctx.prisma, input.projectId, rest(input), { userId: ctx.user.id }),
    ),
  update: projectProcedure('issues:write')
    .input(issues.UpdateIssueInput.extend(PID))
    .mutation(({ ctx, input }) =>
      issues.updateIssue(ctx.prisma, input.projectId, rest(input), { userId: ctx.user.id }),
    ),
  assign: projectProcedure('issues:write')
    .input(issues.AssignIssueInput.extend(PID))
    .mutation(({ ctx, input }) => issues.assignIssue(ctx.prisma, input.projectId, rest(input))),
  close: projectProcedure('issues:write')
    .input(issues.IssueNumberInput.extend(PID))
    .mutation(({ ctx, input }) => issues.closeIssue(ctx.prisma, input.projectId, rest(input))),
  reopen: projectProcedure('issues:write')
    .input(issues.IssueNumberInput.extend(PID))
    .mutation(({ ctx, input }) => issues.reopenIssue(ctx.prisma, input.projectId, rest(input))),
  delete: projectProcedure('issues:delete')
    .input(issues.IssueNumberInput.extend(PID))
    .mutation(({ ctx, input }) => issues.deleteIssue(ctx.prisma, input.projectId, rest(input))),
});

const commentsRouter = router({
  add: projectProcedure('comments:write')
    .input(comments.AddCommentInput.extend(PID))
    .mutation(({ ctx, input }) =>
      comments.addComment(ctx.prisma, input.projectId, rest(input), { userId: ctx.user.id }),
    ),
});

const membersRouter = router({
  list: projectProcedure('members:read').query(({ ctx, input }) => members.listMembers(ctx.prisma, input.projectId)),
  add: projectProcedure('members:manage')
    .input(members.AddMemberInput.extend(PID))
    .mutation(({ ctx, input }) => {
      assertMayManageRole(ctx.access.role, null, input.role);
      return members.addMember(ctx.prisma, input.projectId, rest(input));
    }),
  changeRole: projectProcedure('members:manage')
    .input(members.ChangeRoleInput.extend(PID))
    .mutation(async ({ ctx, input }) => {
      const { role: current } = await members.requireMembership(ctx.prisma, input.projectId, input.userId);
      assertMayManageRole(ctx.access.role, current, input.role);
      return members.changeRole(ctx.prisma, input.projectId, rest(input));
    }),
  remove: projectProcedure('members:manage')
    .input(members.RemoveMemberInput.extend(PID))
    .mutation(async ({ ctx, input }) => {
      const { role: current } = await members.requireMembership(ctx.prisma, input.projectId, input.userId);
      assertMayManageRole(ctx.access.role, current, null);
      return members.removeMember(ctx.prisma, input.projectId, rest(input));
    }),
});

const labelsRouter = router({
  list: projectProcedure('issues:read').query(({ ctx, input }) => labels.listLabels(ctx.prisma, input.projectId)),
});

const apiKeysRouter = router({
  /** PROJECT keys only; never secrets. */
  list: projectProcedure('apiKeys:manage').query(({ ctx, input }) =>
    apiKeys.listProjectKeys(ctx.prisma, input.projectId),
  ),
  /**
   * Creates a key with the scopes asked for; the secret is in this response only and never stored
   * in clear. A key never holds a scope its creator's role lacks (SCOPE_EXCEEDS_ROLE): a key must
   * not become a way to do more than its creator could.
   */
  create: projectProcedure('apiKeys:manage')
    .input(apiKeys.CreateKeyInput.extend(PID))
    .mutation(async ({ ctx, input }) => {
      const { name, expiresInDays, scopes } = parseInput(apiKeys.CreateKeyInput, rest(input));
      const beyondRole = scopes.filter((scope) => !hasProjectAccess(ctx.access, scope));
      if (beyondRole.length > 0) {
        const message = `Your role cannot give a key these scopes: ${beyondRole.join(', ')}.`;
        throw appError('FORBIDDEN', 'SCOPE_EXCEEDS_ROLE', message);
      }
      const issued = await createProjectKey(ctx.prisma, {
        projectId: input.projectId,
        name,
        createdById: ctx.user.id,
        scopes: normalizeKeyScopes(scopes),
        expiresAt: expiresInDays ? new Date(Date.now() + expiresInDays * 86_400_000) : null,
      });
      const keys = await apiKeys.listProjectKeys(ctx.prisma, input.projectId);
      return { key: keys.find((k) => k.id === issued.key.id)!, secret: issued.secret };
    }),
  revoke: projectProcedure('apiKeys:manage')
    .input(apiKeys.KeyIdInput.extend(PID))
    .mutation(async ({ ctx, input }) => {
      const key = await apiKeys.requireProjectKey(ctx.prisma, input.projectId, input.keyId);
      await revokeKey(ctx.prisma, key.id);
      const keys = await apiKeys.listProjectKeys(ctx.prisma, input.projectId);
      return keys.find((k) => k.id === key.id)!;
    }),
});

const settingsRouter = router({
  get: projectProcedure('members:manage').query(async ({ ctx, input }) => {
    const p = await projects.getProject(ctx.prisma, input.projectId);
    return { id: p.id, slug: p.slug, name: p.name, description: p.description, webhookUrl: p.webhookUrl };
  }),
  setWebhook: projectProcedure('members:manage')
    .input(z.object({ ...PID, url: SafeText.max(2000).nullable() }).strict())
    .mutation(({ ctx, input }) => projects.setWebhookUrl(ctx.prisma, input.projectId, { url: input.url })),
});

export const trackerRouter = router({
  projects: projectsRouter,
  issues: issuesRouter,
  comments: commentsRouter,
  members: membersRouter,
  labels: labelsRouter,
  apiKeys: apiKeysRouter,
  settings: settingsRouter,
});
