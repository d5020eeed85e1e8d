/**
 * Tracker domain services: the single implementation of every project operation, shared by the
 * tRPC router, the pages and the MCP tools. Each function takes `(prisma, projectId, input[, actor])`
 * and validates `input` with the zod schema exported beside it (invalid input becomes BAD_REQUEST
 * with appCode INVALID_INPUT, never a 500).
 *
 * Services do NOT check authorization: callers (tRPC procedures, pages, MCP tools) do that first
 * with `hasProjectAccess`. Every query is bound to `projectId`, so an issue number, member id or
 * key id of another project is simply "not found".
 *
 * Stable appCodes thrown here: INVALID_INPUT, PROJECT_NOT_FOUND, ISSUE_NOT_FOUND, USER_NOT_FOUND,
 * NOT_A_MEMBER, ALREADY_MEMBER, LABEL_NOT_FOUND, LAST_OWNER, KEY_NOT_FOUND.
 */
import { z } from 'zod';
import { KeyScopesInput, storedKeyScopes } from '@/features/mcp/key-scopes';
import type { Prisma, PrismaClient } from '@/generated/prisma/client';
import { newId } from '@/server/ids';
import { ROLES, type Role, type Scope } from '@/server/rbac';
import { Identifier, SafeText } from '@/server/text';
import { appError } from '@/server/trpc';
import { ISSUE_PRIORITIES, ISSUE_STATUSES, type IssuePriority, type IssueStatus } from './constants';

// ---------------------------------------------------------------------------------------------
// Shared schemas and helpers
// ---------------------------------------------------------------------------------------------

export { ISSUE_PRIORITIES, ISSUE_STATUSES, type IssuePriority, type IssueStatus };

export const IssueStatusSchema = z.enum(ISSUE_STATUSES);
export const IssuePrioritySchema = z.enum(ISSUE_PRIORITIES);
export const IssueNumberSchema = z.number().int().min(1).max(10_000_000);
export const IssueTitleSchema = SafeText.trim().min(1, 'Title is required.').max(200);
export const IssueBodySchema = SafeText.max(20_000);
export const CommentBodySchema = SafeText.trim().min(1, 'Comment is empty.').max(10_000);
export const LabelNameSchema = SafeText.trim().min(1).max(50);
export const LabelNamesSchema = z.array(LabelNameSchema).max(10);
/** A user id (`u_...`) or the email of a user. */
export const UserRefSchema = SafeText.trim().min(1).max(320);
export const EmailSchema = SafeText.trim().toLowerCase().email().max(320);
export const RoleInputSchema = z.enum(ROLES);
export const MAX_PAGE_SIZE = 100;

/** Who performs a write. `userId` null means an API key without a user (external MCP client). */
export interface Actor {
  userId: string | null;
  /** Shown as the author when there is no user (e.g. the API key's name). */
  displayName?: string;
}

/**
 * Provenance of text: MEMBER when a signed-in member wrote it (the web UI, or the in-app
 * assistant's key acting for its user), EXTERNAL when it came through a project API key (an outside
 * client, no user behind it). EXTERNAL text is untrusted for the assistant.
 */
export type ContentSource = 'MEMBER' | 'EXTERNAL';

export function sourceOf(actor: Actor): ContentSource {
  return actor.userId ? 'MEMBER' : 'EXTERNAL';
}

/** Validates service input; failures are BAD_REQUEST with appCode INVALID_INPUT. */
export function parseInput<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  const r = schema.safeParse(raw);
  if (!r.success) {
    const first = r.error.issues[0];
    const where = first?.path.length ? `${first.path.join('.')}: ` : '';
    throw appError('BAD_REQUEST', 'INVALID_INPUT', `Invalid input. ${where}${first?.message ?? ''}`.trim());
  }
  return r.data;
}

type Db = PrismaClient | Prisma.TransactionClient;

const issueSummarySelect = {
  id: true,
  number: true,
  title: true,
  status: true,
  priority: true,
  createdAt: true,
  updatedAt: true,
  closedAt: true,
  assignee: { select: { id: true, name: true, email: true } },
  labels: { select: { label: { select: { id: true, name: true, color: true } } } },
  titleSource: true,
  bodySource: true,
  labelsSource: true,
} satisfies Prisma.IssueSelect;

type IssueSummaryRow = Prisma.IssueGetPayload<{ select: typeof issueSummarySelect }>;

export interface IssueSummary {
  id: string;
  number: number;
  title: string;
  status: IssueStatus;
  priority: IssuePriority;
  assignee: { id: string; name: string; email: string } | null;
  labels: Array<{ id: string; name: string; color: string }>;
  /** Who last wrote each field (see ContentSource). */
  sources: { title: ContentSource; body: ContentSource; labels: ContentSource };
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
}

function toSummary(row: IssueSummaryRow): IssueSummary {
  return {
    id: row.id,
    number: row.number,
    title: row.title,
    status: row.status,
    priority: row.priority,
    assignee: row.assignee,
    labels: row.labels.map((l) => l.label).sort((a, b) => a.name.localeCompare(b.name)),
    sources: { title: row.titleSource, body: row.bodySource, labels: row.labelsSource },
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    closedAt: row.closedAt,
  };
}

function searchWords(text: string | undefined): string[] {
  if (!text) return [];
  return [
    ...new Set(
      text
        .toLowerCase()
        .split(/\s+/)
        .map((w) => w.trim())
        .filter(Boolean),
    ),
  ].slice(0, 10);
}

/** Escapes LIKE wildcards: Prisma passes `contains` through to ILIKE '%…%' as is. */
function likeLiteral(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** Every word must appear in the title or the body (case-insensitive, wildcards literal). */
function wordsWhere(words: string[]): Prisma.IssueWhereInput[] {
  return words.map(likeLiteral).map((w) => ({
    OR: [{ title: { contains: w, mode: 'insensitive' } }, { body: { contains: w, mode: 'insensitive' } }],
  }));
}

async function requireIssue(db: Db, projectId: string, number: number): Promise<{ id: string; status: IssueStatus }> {
  const issue = await db.issue.findUnique({
    where: { projectId_number: { projectId, number } },
    select: { id: true, status: true },
  });
  if (!issue) throw appError('NOT_FOUND', 'ISSUE_NOT_FOUND', `Issue #${number} not found.`);
  return issue;
}

/**
 * Resolves a member of the project by user id or email. USER_NOT_FOUND when no such user exists,
 * NOT_A_MEMBER when the user is not in this project.
 */
export async function resolveMember(
  db: Db,
  projectId: string,
  ref: string,
): Promise<{ id: string; name: string; email: string }> {
  const value = ref.trim();
  const user = await db.user.findFirst({
    where: value.includes('@') ? { email: value.toLowerCase() } : { id: value },
    select: { id: true, name: true, email: true, memberships: { where: { projectId }, select: { id: true } } },
  });
  if (!user) throw appError('NOT_FOUND', 'USER_NOT_FOUND', `No user ${value}.`);
  if (user.memberships.length === 0)
    throw appError('BAD_REQUEST', 'NOT_A_MEMBER', `${user.email} is not a member of this project.`);
  return { id: user.id, name: user.name, email: user.email };
}

async function resolveLabelIds(db: Db, projectId: string, names: string[]): Promise<string[]> {
  const unique = [...new Set(names.map((n) => n.trim()))];
  if (unique.length === 0) return [];
  const labels = await db.label.findMany({
    where: { projectId, name: { in: unique } },
    select: { id: true, name: true },
  });
  const missing = unique.filter((n) => !labels.some((l) => l.name === n));
  if (missing.length) throw appError('BAD_REQUEST', 'LABEL_NOT_FOUND', `Unknown label: ${missing.join(', ')}.`);
  return labels.map((l) => l.id);
}

// ---------------------------------------------------------------------------------------------
// Projects
// ---------------------------------------------------------------------------------------------

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
// Issues: read
// ---------------------------------------------------------------------------------------------

export const ListIssuesInput = z
  .object({
    status: IssueStatusSchema.optional(),
    priority: IssuePrioritySchema.optional(),
    /** A member's user id or email; `null` lists unassigned issues. */
    assigneeId: UserRefSchema.nullable().optional(),
    /** A label name. */
    label: LabelNameSchema.optional(),
    /** Words that must all appear in the title or body. */
    search: SafeText.trim().max(200).optional(),
    offset: z.number().int().min(0).max(1_000_000).default(0),
    limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(25),
  })
  .strict();
export type ListIssuesInput = z.input<typeof ListIssuesInput>;

export interface IssuePage {
  issues: IssueSummary[];
  total: number;
  offset: number;
  limit: number;
  /** Offset of the next page, or null on the last page. */
  nextOffset: number | null;
}

/** Issues of a project, newest first, filtered; offset pagination with the total count. */
export async function listIssues(
  prisma: PrismaClient,
  projectId: string,
  raw: ListIssuesInput = {},
): Promise<IssuePage> {
  const input = parseInput(ListIssuesInput, raw);
  const and: Prisma.IssueWhereInput[] = [{ projectId }];
  if (input.status) and.push({ status: input.status });
  if (input.priority) and.push({ priority: input.priority });
  if (input.assigneeId === null) and.push({ assigneeId: null });
  else if (input.assigneeId) {
    const ref = input.assigneeId;
    and.push(ref.includes('@') ? { assignee: { email: ref.toLowerCase() } } : { assigneeId: ref });
  }
  if (input.label) and.push({ labels: { some: { label: { name: input.label } } } });
  and.push(...wordsWhere(searchWords(input.search)));
  const where: Prisma.IssueWhereInput = { AND: and };
  const [total, rows] = await Promise.all([
    prisma.issue.count({ where }),
    prisma.issue.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { number: 'desc' }],
      skip: input.offset,
      take: input.limit,
      select: issueSummarySelect,
    }),
  ]);
  const next = input.offset + rows.length;
  return {
    issues: rows.map(toSummary),
    total,
    offset: input.offset,
    limit: input.limit,
    nextOffset: next < total ? next : null,
  };
}

export const SearchIssuesInput = z
  .object({
    query: SafeText.trim().min(1, 'Search text is required.').max(200),
    status: IssueStatusSchema.optional(),
    limit: z.number().int().min(1).max(MAX_PAGE_SIZE).default(10),
  })
  .strict();
export type SearchIssuesInput = z.input<typeof SearchIssuesInput>;

/**
 * Issues whose title or body contain every word of the query; matches in the title rank first,
 * then newest first.
 */
export async function searchIssues(
  prisma: PrismaClient,
  projectId: string,
  raw: SearchIssuesInput,
): Promise<IssueSummary[]> {
  const input = parseInput(SearchIssuesInput, raw);
  const words = searchWords(input.query);
  const rows = await prisma.issue.findMany({
    where: { AND: [{ projectId }, ...(input.status ? [{ status: input.status }] : []), ...wordsWhere(words)] },
    orderBy: [{ createdAt: 'desc' }, { number: 'desc' }],
    take: 500,
    select: issueSummarySelect,
  });
  const score = (r: IssueSummaryRow) => words.filter((w) => r.title.toLowerCase().includes(w)).length;
  return rows
    .map((r, i) => ({ r, i, s: score(r) }))
    .sort((a, b) => b.s - a.s || a.i - b.i)
    .slice(0, input.limit)
    .map(({ r }) => toSummary(r));
}

export const GetIssueInput = z.object({ number: IssueNumberSchema }).strict();
export type GetIssueInput = z.input<typeof GetIssueInput>;

export interface IssueComment {
  id: string;
  body: string;
  createdAt: Date;
  /** True when written outside the team (support inbox, API key without a user): untrusted text. */
  external: boolean;
  /** The member's or the external author's name. */
  authorName: string;
  author: { id: string; name: string } | null;
}

/** The columns a comment is read with (for `toIssueComment`). */
export const COMMENT_SELECT = {
  id: true,
  body: true,
  createdAt: true,
  externalAuthor: true,
  author: { select: { id: true, name: true } },
} as const satisfies Prisma.CommentSelect;

/** A stored comment as the product shows it: a comment without a member author is external. */
export function toIssueComment(c: Prisma.CommentGetPayload<{ select: typeof COMMENT_SELECT }>): IssueComment {
  return {
    id: c.id,
    body: c.body,
    createdAt: c.createdAt,
    external: c.author === null,
    authorName: c.author?.name ?? c.externalAuthor ?? 'Unknown',
    author: c.author,
  };
}

/** An issue with its body and reporter, without comments: what the write paths return. */
export interface IssueRecord extends IssueSummary {
  body: string;
  reporter: { id: string; name: string; email: string } | null;
}

/** The newest comments an issue page shows (older ones are counted, not loaded). */
export const MAX_ISSUE_COMMENTS = 200;

export interface IssueDetail extends IssueRecord {
  /** The newest MAX_ISSUE_COMMENTS comments, oldest first. */
  comments: IssueComment[];
  /** All comments of the issue. */
  commentCount: number;
}

const issueRecordSelect = {
  ...issueSummarySelect,
  body: true,
  reporter: { select: { id: true, name: true, email: true } },
} satisfies Prisma.IssueSelect;

function toRecord(row: Prisma.IssueGetPayload<{ select: typeof issueRecordSelect }>): IssueRecord {
  return { ...toSummary(row), body: row.body, reporter: row.reporter };
}

/** One issue without its comments (one query), for the write paths' answers. */
async function loadIssueRecord(prisma: PrismaClient, projectId: string, number: number): Promise<IssueRecord> {
  const row = await prisma.issue.findUnique({
    where: { projectId_number: { projectId, number } },
    select: issueRecordSelect,
  });
  if (!row) throw appError('NOT_FOUND', 'ISSUE_NOT_FOUND', `Issue #${number} not found.`);
  return toRecord(row);
}

/** An issue with its newest MAX_ISSUE_COMMENTS comments (oldest first) and the comment count. */
export async function getIssue(prisma: PrismaClient, projectId: string, raw: GetIssueInput): Promise<IssueDetail> {
  const input = parseInput(GetIssueInput, raw);
  const row = await prisma.issue.findUnique({
    where: { projectId_number: { projectId, number: input.number } },
    select: {
      ...issueRecordSelect,
      _count: { select: { comments: true } },
      comments: {
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: MAX_ISSUE_COMMENTS,
        select: COMMENT_SELECT,
      },
    },
  });
  if (!row) throw appError('NOT_FOUND', 'ISSUE_NOT_FOUND', `Issue #${input.number} not found.`);
  return {
    ...toRecord(row),
    comments: row.comments.reverse().map(toIssueComment),
    commentCount: row._count.comments,
  };
}

export async function listLabels(
  prisma: PrismaClient,
  projectId: string,
): Promise<Array<{ id: string; name: string; color: string; issueCount: number }>> {
  const rows = await prisma.label.findMany({
    where: { projectId },
    orderBy: { name: 'asc' },
    select: { id: true, name: true, color: true, _count: { select: { issues: true } } },
  });
  return rows.map((r) => ({ id: r.id, name: r.name, color: r.color, issueCount: r._count.issues }));
}

// ---------------------------------------------------------------------------------------------
// Issues: write
// ---------------------------------------------------------------------------------------------

export const CreateIssueInput = z
  .object({
    title: IssueTitleSchema,
    body: IssueBodySchema.default(''),
    priority: IssuePrioritySchema.default('MEDIUM'),
    /** A member's user id or email. */
    assigneeId: UserRefSchema.nullable().optional(),
    labels: LabelNamesSchema.default([]),
  })
  .strict();
export type CreateIssueInput = z.input<typeof CreateIssueInput>;

/** Creates an issue with the next per-project number (allocated atomically). */
export async function createIssue(
  prisma: PrismaClient,
  projectId: string,
  raw: CreateIssueInput,
  actor: Actor,
): Promise<IssueRecord> {
  const input = parseInput(CreateIssueInput, raw);
  const number = await prisma.$transaction(async (tx) => {
    const assignee = input.assigneeId ? await resolveMember(tx, projectId, input.assigneeId) : null;
    const labelIds = await resolveLabelIds(tx, projectId, input.labels);
    // The increment takes a row lock on the project: concurrent creates get distinct numbers.
    const project = await tx.project.update({
      where: { id: projectId },
      data: { issueCounter: { increment: 1 } },
      select: { issueCounter: true },
    });
    await tx.issue.create({
      data: {
        id: newId('i_'),
        projectId,
        number: project.issueCounter,
        title: input.title,
        body: input.body,
        priority: input.priority,
        assigneeId: assignee?.id ?? null,
        reporterId: actor.userId,
        titleSource: sourceOf(actor),
        bodySource: sourceOf(actor),
        labelsSource: sourceOf(actor),
        labels: { create: labelIds.map((labelId) => ({ labelId })) },
      },
    });
    return project.issueCounter;
  });
  return loadIssueRecord(prisma, projectId, number);
}

export const UpdateIssueInput = z
  .object({
    number: IssueNumberSchema,
    title: IssueTitleSchema.optional(),
    body: IssueBodySchema.optional(),
    status: IssueStatusSchema.optional(),
    priority: IssuePrioritySchema.optional(),
    /** Replaces the issue's labels. */
    labels: LabelNamesSchema.optional(),
  })
  .strict();
export type UpdateIssueInput = z.input<typeof UpdateIssueInput>;

/**
 * Changes only the fields given. The title, body and labels given become `actor`'s text: a member
 * rewriting text that came through an API key makes that field trusted again, and the reverse.
 */
export async function updateIssue(
  prisma: PrismaClient,
  projectId: string,
  raw: UpdateIssueInput,
  actor: Actor,
): Promise<IssueRecord> {
  const input = parseInput(UpdateIssueInput, raw);
  const source = sourceOf(actor);
  await prisma.$transaction(async (tx) => {
    const issue = await requireIssue(tx, projectId, input.number);
    const data: Prisma.IssueUpdateInput = {};
    if (input.title !== undefined) {
      data.title = input.title;
      data.titleSource = source;
    }
    if (input.body !== undefined) {
      data.body = input.body;
      data.bodySource = source;
    }
    if (input.priority !== undefined) data.priority = input.priority;
    if (input.status !== undefined) Object.assign(data, statusChange(issue.status, input.status));
    if (input.labels !== undefined) {
      const labelIds = await resolveLabelIds(tx, projectId, input.labels);
      data.labels = { deleteMany: {}, create: labelIds.map((labelId) => ({ labelId })) };
      data.labelsSource = source;
    }
    await tx.issue.update({ where: { id: issue.id }, data });
  });
  return loadIssueRecord(prisma, projectId, input.number);
}

/** The columns a status change writes (nothing when the status stays the same). */
function statusChange(current: IssueStatus, next: IssueStatus): Prisma.IssueUpdateInput {
  return current === next ? {} : { status: next, closedAt: next === 'CLOSED' ? new Date() : null };
}

/** Sets the status only: no text is written, so no field's provenance changes. */
async function setIssueStatus(
  prisma: PrismaClient,
  projectId: string,
  number: number,
  status: IssueStatus,
): Promise<IssueRecord> {
  await prisma.$transaction(async (tx) => {
    const issue = await requireIssue(tx, projectId, number);
    const data = statusChange(issue.status, status);
    if (Object.keys(data).length) await tx.issue.update({ where: { id: issue.id }, data });
  });
  return loadIssueRecord(prisma, projectId, number);
}

export const AssignIssueInput = z
  .object({
    number: IssueNumberSchema,
    /** A member's user id or email; null unassigns. */
    assigneeId: UserRefSchema.nullable(),
  })
  .strict();
export type AssignIssueInput = z.input<typeof AssignIssueInput>;

export async function assignIssue(
  prisma: PrismaClient,
  projectId: string,
  raw: AssignIssueInput,
): Promise<IssueRecord> {
  const input = parseInput(AssignIssueInput, raw);
  const issue = await requireIssue(prisma, projectId, input.number);
  const assignee = input.assigneeId === null ? null : await resolveMember(prisma, projectId, input.assigneeId);
  await prisma.issue.update({ where: { id: issue.id }, data: { assigneeId: assignee?.id ?? null } });
  return loadIssueRecord(prisma, projectId, input.number);
}

export const IssueNumberInput = z.object({ number: IssueNumberSchema }).strict();
export type IssueNumberInput = z.input<typeof IssueNumberInput>;

/** Closes an issue; closing a closed issue changes nothing. */
export async function closeIssue(prisma: PrismaClient, projectId: string, raw: IssueNumberInput): Promise<IssueRecord> {
  const input = parseInput(IssueNumberInput, raw);
  return setIssueStatus(prisma, projectId, input.number, 'CLOSED');
}

/** Reopens a closed issue (status OPEN); an issue that is not closed is left as it is. */
export async function reopenIssue(
  prisma: PrismaClient,
  projectId: string,
  raw: IssueNumberInput,
): Promise<IssueRecord> {
  const input = parseInput(IssueNumberInput, raw);
  const issue = await requireIssue(prisma, projectId, input.number);
  if (issue.status !== 'CLOSED') return loadIssueRecord(prisma, projectId, input.number);
  return setIssueStatus(prisma, projectId, input.number, 'OPEN');
}

/** Permanently deletes an issue and its comments. Numbers are never reused. */
export async function deleteIssue(
  prisma: PrismaClient,
  projectId: string,
  raw: IssueNumberInput,
): Promise<{ number: number; deleted: true }> {
  const input = parseInput(IssueNumberInput, raw);
  const res = await prisma.issue.deleteMany({ where: { projectId, number: input.number } });
  if (res.count === 0) throw appError('NOT_FOUND', 'ISSUE_NOT_FOUND', `Issue #${input.number} not found.`);
  return { number: input.number, deleted: true };
}

export const AddCommentInput = z.object({ number: IssueNumberSchema, body: CommentBodySchema }).strict();
export type AddCommentInput = z.input<typeof AddCommentInput>;

/**
 * Adds a comment by `actor`. Without a user (an API key) the comment is recorded as external,
 * under `actor.displayName`.
 */
export async function addComment(
  prisma: PrismaClient,
  projectId: string,
  raw: AddCommentInput,
  actor: Actor,
): Promise<IssueComment> {
  const input = parseInput(AddCommentInput, raw);
  const issue = await requireIssue(prisma, projectId, input.number);
  const c = await prisma.comment.create({
    data: {
      id: newId('c_'),
      issueId: issue.id,
      authorId: actor.userId,
      externalAuthor: actor.userId ? null : (actor.displayName ?? 'API client').slice(0, 100),
      body: input.body,
    },
    select: COMMENT_SELECT,
  });
  // Touch the issue so "recently updated" reflects activity.
  await prisma.issue.update({ where: { id: issue.id }, data: { updatedAt: new Date() } });
  return toIssueComment(c);
}

// ---------------------------------------------------------------------------------------------
// Members
// ---------------------------------------------------------------------------------------------

export interface Member {
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: Date;
}

const ROLE_ORDER: Record<Role, number> = { OWNER: 0, ADMIN: 1, MEMBER: 2, VIEWER: 3 };

/** Members by role (owners first), then name. */
export async function listMembers(prisma: PrismaClient, projectId: string): Promise<Member[]> {
  const rows = await prisma.projectMembership.findMany({
    where: { projectId },
    select: { role: true, createdAt: true, user: { select: { id: true, name: true, email: true } } },
  });
  return rows
    .map((r) => ({ userId: r.user.id, name: r.user.name, email: r.user.email, role: r.role, joinedAt: r.createdAt }))
    .sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role] || a.name.localeCompare(b.name));
}

export async function getMemberRole(prisma: Db, projectId: string, userId: string): Promise<Role | null> {
  const m = await prisma.projectMembership.findUnique({
    where: { projectId_userId: { projectId, userId } },
    select: { role: true },
  });
  return m?.role ?? null;
}

export const AddMemberInput = z.object({ email: EmailSchema, role: RoleInputSchema.default('MEMBER') }).strict();
export type AddMemberInput = z.input<typeof AddMemberInput>;

/** Adds an EXISTING user (by email) to the project. */
export async function addMember(prisma: PrismaClient, projectId: string, raw: AddMemberInput): Promise<Member> {
  const input = parseInput(AddMemberInput, raw);
  const user = await prisma.user.findUnique({
    where: { email: input.email },
    select: { id: true, name: true, email: true },
  });
  if (!user)
    throw appError('NOT_FOUND', 'USER_NOT_FOUND', `No user with the email ${input.email}. They need an account first.`);
  const existing = await getMemberRole(prisma, projectId, user.id);
  if (existing) throw appError('CONFLICT', 'ALREADY_MEMBER', `${user.email} is already a member.`);
  try {
    const m = await prisma.projectMembership.create({
      data: { id: newId('m_'), projectId, userId: user.id, role: input.role },
      select: { createdAt: true, role: true },
    });
    return { userId: user.id, name: user.name, email: user.email, role: m.role, joinedAt: m.createdAt };
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002')
      throw appError('CONFLICT', 'ALREADY_MEMBER', `${user.email} is already a member.`);
    throw err;
  }
}

/**
 * Runs `fn` in a transaction holding the project row lock, so concurrent membership changes of one
 * project are serialized (the "at least one owner" invariant cannot be raced).
 */
async function withProjectLock<T>(
  prisma: PrismaClient,
  projectId: string,
  fn: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  return prisma.$transaction(async (tx) => {
    const locked = await tx.project.updateMany({ where: { id: projectId }, data: { updatedAt: new Date() } });
    if (locked.count === 0) throw appError('NOT_FOUND', 'PROJECT_NOT_FOUND', 'Project not found.');
    return fn(tx);
  });
}

async function requireMembership(tx: Db, projectId: string, userId: string): Promise<{ id: string; role: Role }> {
  const m = await tx.projectMembership.findUnique({
    where: { projectId_userId: { projectId, userId } },
    select: { id: true, role: true },
  });
  if (!m) throw appError('NOT_FOUND', 'USER_NOT_FOUND', 'That user is not a member of this project.');
  return m;
}

export const ChangeRoleInput = z.object({ userId: Identifier, role: RoleInputSchema }).strict();
export type ChangeRoleInput = z.input<typeof ChangeRoleInput>;

/** Changes a member's role. The last OWNER can never be demoted (LAST_OWNER). */
export async function changeRole(prisma: PrismaClient, projectId: string, raw: ChangeRoleInput): Promise<Member> {
  const input = parseInput(ChangeRoleInput, raw);
  await withProjectLock(prisma, projectId, async (tx) => {
    const m = await requireMembership(tx, projectId, input.userId);
    if (m.role === input.role) return;
    if (m.role === 'OWNER') {
      const owners = await tx.projectMembership.count({ where: { projectId, role: 'OWNER' } });
      if (owners <= 1)
        throw appError(
          'BAD_REQUEST',
          'LAST_OWNER',
          'A project needs at least one owner: make someone else owner first.',
        );
    }
    await tx.projectMembership.update({ where: { id: m.id }, data: { role: input.role } });
  });
  const members = await listMembers(prisma, projectId);
  return members.find((x) => x.userId === input.userId)!;
}

export const RemoveMemberInput = z.object({ userId: Identifier }).strict();
export type RemoveMemberInput = z.input<typeof RemoveMemberInput>;

/** Removes a member. The last OWNER can never be removed (LAST_OWNER). Their issues stay. */
export async function removeMember(
  prisma: PrismaClient,
  projectId: string,
  raw: RemoveMemberInput,
): Promise<{ userId: string; removed: true }> {
  const input = parseInput(RemoveMemberInput, raw);
  await withProjectLock(prisma, projectId, async (tx) => {
    const m = await requireMembership(tx, projectId, input.userId);
    if (m.role === 'OWNER') {
      const owners = await tx.projectMembership.count({ where: { projectId, role: 'OWNER' } });
      if (owners <= 1) throw appError('BAD_REQUEST', 'LAST_OWNER', 'The last owner cannot be removed.');
    }
    await tx.projectMembership.delete({ where: { id: m.id } });
    // Issues assigned to someone who left are unassigned.
    await tx.issue.updateMany({ where: { projectId, assigneeId: input.userId }, data: { assigneeId: null } });
  });
  return { userId: input.userId, removed: true };
}

// ---------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------

export const WebhookUrlSchema = SafeText.trim()
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

// ---------------------------------------------------------------------------------------------
// Project API keys (listing only; creation/revocation live in src/server/api-keys.ts)
// ---------------------------------------------------------------------------------------------

export interface ProjectKeyInfo {
  id: string;
  name: string;
  publicKey: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  status: 'active' | 'revoked' | 'expired';
  createdBy: { id: string; name: string } | null;
  /** The tools the key may list and call (fixed at creation). */
  scopes: Scope[];
}

/** PROJECT keys of a project, newest first. Never includes secrets or hashes. */
export async function listProjectKeys(prisma: PrismaClient, projectId: string): Promise<ProjectKeyInfo[]> {
  const rows = await prisma.apiKey.findMany({
    where: { projectId, kind: 'PROJECT' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    select: {
      id: true,
      name: true,
      publicKey: true,
      createdAt: true,
      lastUsedAt: true,
      expiresAt: true,
      revokedAt: true,
      scopes: true,
      createdBy: { select: { id: true, name: true } },
    },
  });
  const now = Date.now();
  return rows.map((k) => ({
    ...k,
    scopes: storedKeyScopes(k.scopes),
    status: k.revokedAt ? 'revoked' : k.expiresAt && k.expiresAt.getTime() <= now ? 'expired' : 'active',
  }));
}

export const CreateKeyInput = z
  .object({
    name: SafeText.trim().min(1, 'Name is required.').max(100),
    /** Days until the key expires; omitted for no expiry. */
    expiresInDays: z.number().int().min(1).max(3650).optional(),
    /** What the key may do (a preset's list or individual scopes); never more than the creator's role. */
    scopes: KeyScopesInput,
  })
  .strict();
export type CreateKeyInput = z.input<typeof CreateKeyInput>;

export const KeyIdInput = z.object({ keyId: Identifier }).strict();

/** Finds a PROJECT key of this project; KEY_NOT_FOUND otherwise (also for other projects' keys). */
export async function requireProjectKey(
  prisma: PrismaClient,
  projectId: string,
  keyId: string,
): Promise<{ id: string }> {
  const k = await prisma.apiKey.findFirst({ where: { id: keyId, projectId, kind: 'PROJECT' }, select: { id: true } });
  if (!k) throw appError('NOT_FOUND', 'KEY_NOT_FOUND', 'API key not found.');
  return k;
}
