/**
 * Issues: listing, search, one issue with its comments, and the writes (create, update, assign,
 * close, reopen, delete). Every write records who wrote each text field (see ContentSource), so
 * text that came through an API key stays marked untrusted until a member rewrites it.
 */
import { z } from 'zod';
import type { Prisma, PrismaClient } from '@/generated/prisma/client';
import { newId } from '@/server/ids';
import { SafeText } from '@/server/text';
import { appError } from '@/server/trpc';
import { ISSUE_PRIORITIES, ISSUE_STATUSES, type IssuePriority, type IssueStatus } from '../constants';
import { COMMENT_SELECT, type IssueComment, toIssueComment } from './comments';
import { LabelNamesSchema, LabelNameSchema, resolveLabelIds } from './labels';
import { resolveMember, UserRefSchema } from './members';
import {
  type Actor,
  type ContentSource,
  IssueNumberSchema,
  MAX_PAGE_SIZE,
  parseInput,
  requireIssue,
  sourceOf,
  inTransaction,
} from './shared';

const IssueStatusSchema = z.enum(ISSUE_STATUSES);
const IssuePrioritySchema = z.enum(ISSUE_PRIORITIES);
const IssueTitleSchema = SafeText.trim().min(1, 'Title is required.').max(200);
const IssueBodySchema = SafeText.max(20_000);

/** The columns an issue row is read with (for `toSummary`). */
export const issueSummarySelect = {
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

export function toSummary(row: IssueSummaryRow): IssueSummary {
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

/** An issue with its body and reporter, without comments: what the write paths return. */
export interface IssueRecord extends IssueSummary {
  body: string;
  reporter: { id: string; name: string; email: string } | null;
}

/** The newest comments an issue page shows (older ones are counted, not loaded). */
export const MAX_ISSUE_COMMENTS = 200;

export interface IssueDetail extends IssueRecord {
  /** The newest comments (MAX_ISSUE_COMMENTS unless asked for fewer), oldest first. */
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

/**
 * An issue with its newest `maxComments` comments (MAX_ISSUE_COMMENTS unless given; oldest first)
 * and the comment count.
 */
export async function getIssue(
  prisma: PrismaClient,
  projectId: string,
  raw: GetIssueInput,
  { maxComments = MAX_ISSUE_COMMENTS }: { maxComments?: number } = {},
): Promise<IssueDetail> {
  const input = parseInput(GetIssueInput, raw);
  const row = await prisma.issue.findUnique({
    where: { projectId_number: { projectId, number: input.number } },
    select: {
      ...issueRecordSelect,
      _count: { select: { comments: true } },
      comments: {
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: maxComments,
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
  const number = await inTransaction(prisma, async (tx) => {
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
  await inTransaction(prisma, async (tx) => {
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
  await inTransaction(prisma, async (tx) => {
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
