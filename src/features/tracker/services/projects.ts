/**
 * Projects: one project, the projects of a user, the issue counts of a project and its settings
 * (the webhook URL).
 */
import { z } from 'zod';
import type { PrismaClient } from '@/generated/prisma/client';
import type { Role } from '@/server/rbac';
import { SafeText } from '@/server/text';
import { appError } from '@/server/trpc';
import { ISSUE_PRIORITIES, ISSUE_STATUSES, type IssuePriority, type IssueStatus } from '../constants';
import { type IssueSummary, issueSummarySelect, toSummary } from './issues';
import { parseInput } from './shared';

export interface ProjectInfo {
  id: string;
  slug: string;
  name: string;
  description: string;
  webhookUrl: string | null;
  createdAt: Date;
}

export async function getProject(prisma: PrismaClient, projectId: string): Promise<ProjectInfo> {
  const p = await prisma.project.findUnique({
    where: { id: projectId },
    select: { id: true, slug: true, name: true, description: true, webhookUrl: true, createdAt: true },
  });
  if (!p) throw appError('NOT_FOUND', 'PROJECT_NOT_FOUND', 'Project not found.');
  return p;
}

export interface UserProject {
  id: string;
  slug: string;
  name: string;
  description: string;
  role: Role;
  openIssues: number;
}

/** The projects a user is a member of, with their role, by name. */
export async function listProjectsForUser(prisma: PrismaClient, userId: string): Promise<UserProject[]> {
  const rows = await prisma.projectMembership.findMany({
    where: { userId },
    select: {
      role: true,
      project: {
        select: {
          id: true,
          slug: true,
          name: true,
          description: true,
          _count: { select: { issues: { where: { status: { not: 'CLOSED' } } } } },
        },
      },
    },
  });
  return rows
    .map((r) => ({
      id: r.project.id,
      slug: r.project.slug,
      name: r.project.name,
      description: r.project.description,
      role: r.role,
      openIssues: r.project._count.issues,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

export const ProjectSummaryInput = z.object({ recent: z.number().int().min(0).max(20).default(5) }).strict();

export interface ProjectSummary {
  project: { id: string; slug: string; name: string; description: string };
  total: number;
  byStatus: Record<IssueStatus, number>;
  byPriority: Record<IssuePriority, number>;
  /** Open (not closed) issues by priority. */
  openByPriority: Record<IssuePriority, number>;
  recent: IssueSummary[];
}

export async function projectSummary(
  prisma: PrismaClient,
  projectId: string,
  raw: z.input<typeof ProjectSummaryInput> = {},
): Promise<ProjectSummary> {
  const input = parseInput(ProjectSummaryInput, raw);
  const project = await getProject(prisma, projectId);
  const groups = await prisma.issue.groupBy({
    by: ['status', 'priority'],
    where: { projectId },
    _count: { _all: true },
  });
  const byStatus = Object.fromEntries(ISSUE_STATUSES.map((s) => [s, 0])) as Record<IssueStatus, number>;
  const byPriority = Object.fromEntries(ISSUE_PRIORITIES.map((p) => [p, 0])) as Record<IssuePriority, number>;
  const openByPriority = { ...byPriority };
  let total = 0;
  for (const g of groups) {
    const n = g._count._all;
    total += n;
    byStatus[g.status] += n;
    byPriority[g.priority] += n;
    if (g.status !== 'CLOSED') openByPriority[g.priority] += n;
  }
  const recent =
    input.recent === 0
      ? []
      : await prisma.issue.findMany({
          where: { projectId },
          orderBy: [{ createdAt: 'desc' }, { number: 'desc' }],
          take: input.recent,
          select: issueSummarySelect,
        });
  return {
    project: { id: project.id, slug: project.slug, name: project.name, description: project.description },
    total,
    byStatus,
    byPriority,
    openByPriority,
    recent: recent.map(toSummary),
  };
}

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------

const WebhookUrlSchema = SafeText.trim()
  .max(2000)
  .refine((v) => {
    try {
      const u = new URL(v);
      return (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname.length > 0 && !u.username && !u.password;
    } catch {
      return false;
    }
  }, 'Enter an http:// or https:// URL (without credentials).');

export const SetWebhookInput = z.object({ url: WebhookUrlSchema.nullable() }).strict();
export type SetWebhookInput = z.input<typeof SetWebhookInput>;

/** Sets or clears (null / empty) the project's webhook URL. */
export async function setWebhookUrl(
  prisma: PrismaClient,
  projectId: string,
  raw: SetWebhookInput,
): Promise<{ webhookUrl: string | null }> {
  const r =
    raw && typeof raw === 'object' && typeof raw.url === 'string' && raw.url.trim() === '' ? { url: null } : raw;
  const input = parseInput(SetWebhookInput, r);
  const res = await prisma.project.updateMany({ where: { id: projectId }, data: { webhookUrl: input.url } });
  if (res.count === 0) throw appError('NOT_FOUND', 'PROJECT_NOT_FOUND', 'Project not found.');
  return { webhookUrl: input.url };
}
