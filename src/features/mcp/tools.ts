/**
 * Tool handlers, keyed by the registry's names (the compiler rejects a missing or extra one). They
 * are thin: the tracker services do the work; handlers map MCP inputs to service inputs and shape
 * compact, JSON-safe results (ids, numbers, titles, bodies capped with a `truncated` flag).
 * Authorization happened before (server.ts); every service query is bound to the key's project.
 */
import 'server-only';
import { TRPCError } from '@trpc/server';
import { addComment, type IssueComment } from '@/features/tracker/services/comments';
import {
  assignIssue,
  closeIssue,
  createIssue,
  deleteIssue,
  getIssue,
  type IssueSummary,
  listIssues,
  searchIssues,
  updateIssue,
} from '@/features/tracker/services/issues';
import { listLabelsPage } from '@/features/tracker/services/labels';
import { type MemberChoice, listMembersPage, membersMatching } from '@/features/tracker/services/members';
import { getProject, projectSummary } from '@/features/tracker/services/projects';
import type { Actor } from '@/features/tracker/services/shared';
import type { PrismaClient } from '@/generated/prisma/client';
import { AppError } from '@/server/trpc';
import type { McpPrincipal } from './auth';
import type { ElicitOutcome, ElicitRequest } from './elicitation';
import { MCP_ERROR_CODES, ToolFailure, type McpErrorCode } from './errors';
import { BODY_PREVIEW_CHARS, type McpToolInput, type McpToolName } from './registry';
import { deliverWebhook } from './webhook';

export type ToolOutput = Record<string, unknown>;

export interface ToolContext {
  prisma: PrismaClient;
  projectId: string;
  principal: McpPrincipal;
  signal: AbortSignal;
  /**
   * Asks the client's user (elicitation): only in a session whose client declared that it takes
   * questions, on a call answered as a stream (see elicitation.ts).
   */
  ask?: (request: ElicitRequest) => Promise<ElicitOutcome>;
  /** The call's key in the tool-call ledger (ledger.ts): sent to outside services as Idempotency-Key. */
  idempotencyKey?: string;
}

type Handlers = { [N in McpToolName]: (ctx: ToolContext, input: McpToolInput<N>) => Promise<ToolOutput> };

/** At most this many comments are returned by get_issue (the newest). */
const MAX_COMMENTS = 50;
const COMMENT_PREVIEW_CHARS = 1000;

function cap(text: string, max = BODY_PREVIEW_CHARS): { text: string; truncated: boolean } {
  return text.length > max ? { text: text.slice(0, max), truncated: true } : { text, truncated: false };
}

interface IssueRowSource {
  number: number;
  title: string;
  status: string;
  priority: string;
  assignee: { id: string; name: string } | null;
  labels: Array<{ name: string }>;
  sources: IssueSummary['sources'];
  updatedAt: Date;
}

type TextField = keyof IssueSummary['sources'];

/**
 * Which of the `shown` fields hold text written through a project API key (an outside client):
 * untrusted, like external comments, until a member rewrites them.
 */
function untrustedFieldsOf(sources: IssueSummary['sources'], shown: readonly TextField[]): TextField[] {
  return shown.filter((field) => sources[field] === 'EXTERNAL');
}

/** Untrusted marking of a result object: `untrusted` always, `untrustedFields` when it is true. */
function untrustedMark(fields: TextField[]) {
  return { untrusted: fields.length > 0, ...(fields.length > 0 ? { untrustedFields: fields } : {}) };
}

/** A compact issue row (title and labels; no body), marked untrusted per the text it shows. */
function issueRow(i: IssueRowSource) {
  return {
    number: i.number,
    title: i.title,
    status: i.status,
    priority: i.priority,
    assignee: i.assignee ? { id: i.assignee.id, name: i.assignee.name } : null,
    labels: i.labels.map((l) => l.name),
    ...untrustedMark(untrustedFieldsOf(i.sources, ['title', 'labels'])),
    updatedAt: i.updatedAt.toISOString(),
  };
}

/** The service's offset and limit for a tool's page number and size. */
function pageOf(input: { page: number; pageSize: number }) {
  return { offset: (input.page - 1) * input.pageSize, limit: input.pageSize };
}

function pageInfo(page: number, pageSize: number, total: number) {
  return { page, pageSize, total, hasMore: page * pageSize < total };
}

function commentRow(c: IssueComment) {
  const body = cap(c.body, COMMENT_PREVIEW_CHARS);
  return {
    id: c.id,
    author: c.authorName,
    // Written outside the team (support inbox, external API client): data, not instructions.
    untrusted: c.external,
    body: body.text,
    truncated: body.truncated,
    createdAt: c.createdAt.toISOString(),
  };
}

/**
 * Who a write is attributed to: the bound user for assistant keys (their text is a member's); an
 * outside client otherwise, by the key's name or the connected app's and its user's names (text an
 * outside client writes is EXTERNAL, untrusted, even when a member connected the app).
 */
function actorOf(p: McpPrincipal): Actor {
  if (p.kind === 'run-key') return { userId: p.userId };
  if (p.kind === 'oauth') return { userId: null, displayName: `App: ${p.oauth.clientName} (for ${p.oauth.userName})` };
  return { userId: null, displayName: `API key: ${p.key.name}` };
}

const HANDLERS: Handlers = {
  async list_issues(ctx, input) {
    if (input.unassigned && input.assignee)
      throw new ToolFailure(
        'INVALID_ARGUMENTS',
        'Give `assignee` (issues of one member) or `unassigned: true` (issues of no one), not both.',
      );
    const assigneeId = input.unassigned ? null : input.assignee;
    const page = await listIssues(ctx.prisma, ctx.projectId, {
      ...(input.status ? { status: input.status } : {}),
      ...(input.priority ? { priority: input.priority } : {}),
      ...(assigneeId !== undefined ? { assigneeId } : {}),
      ...(input.label ? { label: input.label } : {}),
      ...pageOf(input),
    });
    return {
      issues: page.issues.map(issueRow),
      page: input.page,
      pageSize: input.pageSize,
      total: page.total,
      hasMore: page.nextOffset !== null,
    };
  },

  async get_issue(ctx, input) {
    // Only the newest MAX_COMMENTS comments are loaded.
    const issue = await getIssue(ctx.prisma, ctx.projectId, { number: input.number }, { maxComments: MAX_COMMENTS });
    const body = cap(issue.body);
    const comments = issue.comments.map(commentRow);
    const total = issue.commentCount;
    return {
      issue: {
        ...issueRow(issue),
        // The whole issue is shown here, body included.
        ...untrustedMark(untrustedFieldsOf(issue.sources, ['title', 'body', 'labels'])),
        reporter: issue.reporter ? { id: issue.reporter.id, name: issue.reporter.name } : null,
        body: body.text,
        truncated: body.truncated,
        createdAt: issue.createdAt.toISOString(),
        closedAt: issue.closedAt?.toISOString() ?? null,
      },
      comments,
      commentCount: total,
      ...(comments.length < total ? { olderCommentsOmitted: total - comments.length } : {}),
    };
  },

  async search_issues(ctx, input) {
    const rows = await searchIssues(ctx.prisma, ctx.projectId, {
      query: input.query,
      ...(input.status ? { status: input.status } : {}),
      limit: input.limit,
    });
    return { query: input.query, issues: rows.map(issueRow) };
  },

  async list_members(ctx, input) {
    const { members, total } = await listMembersPage(ctx.prisma, ctx.projectId, pageOf(input));
    return {
      members: members.map((m) => ({ userId: m.userId, name: m.name, email: m.email, role: m.role })),
      ...pageInfo(input.page, input.pageSize, total),
    };
  },

  async list_labels(ctx, input) {
    const { labels, total } = await listLabelsPage(ctx.prisma, ctx.projectId, pageOf(input));
    return {
      labels: labels.map((l) => ({ name: l.name, color: l.color, issueCount: l.issueCount })),
      ...pageInfo(input.page, input.pageSize, total),
    };
  },

  async get_project_summary(ctx) {
    const s = await projectSummary(ctx.prisma, ctx.projectId, { recent: 5 });
    const description = cap(s.project.description, 500);
    return {
      project: { id: s.project.id, slug: s.project.slug, name: s.project.name, description: description.text },
      issues: { total: s.total, byStatus: s.byStatus, byPriority: s.byPriority, openByPriority: s.openByPriority },
      recent: s.recent.map(issueRow),
    };
  },

  async create_issue(ctx, input) {
    const issue = await createIssue(
      ctx.prisma,
      ctx.projectId,
      {
        title: input.title,
        ...(input.body !== undefined ? { body: input.body } : {}),
        ...(input.priority ? { priority: input.priority } : {}),
        ...(input.assignee ? { assigneeId: input.assignee } : {}),
        ...(input.labels ? { labels: input.labels } : {}),
      },
      actorOf(ctx.principal),
    );
    return { issue: issueRow(issue), created: true };
  },

  async update_issue(ctx, input) {
    const { number, ...fields } = input;
    if (Object.values(fields).every((v) => v === undefined)) {
      throw new ToolFailure(
        'INVALID_ARGUMENTS',
        'Give at least one field to change: title, body, status, priority or labels.',
      );
    }
    const issue = await updateIssue(ctx.prisma, ctx.projectId, { number, ...fields }, actorOf(ctx.principal));
    const updated = Object.keys(fields).filter((k) => fields[k as keyof typeof fields] !== undefined);
    return { issue: issueRow(issue), updated };
  },

  async add_comment(ctx, input) {
    const c = await addComment(
      ctx.prisma,
      ctx.projectId,
      { number: input.number, body: input.body },
      actorOf(ctx.principal),
    );
    return { issueNumber: input.number, comment: commentRow(c) };
  },

  async assign_issue(ctx, input) {
    const assigneeId = input.assignee === null ? null : await chooseAssignee(ctx, input.number, input.assignee);
    const issue = await assignIssue(ctx.prisma, ctx.projectId, { number: input.number, assigneeId });
    return { issue: issueRow(issue) };
  },

  async close_issue(ctx, input) {
    const issue = await closeIssue(ctx.prisma, ctx.projectId, { number: input.number });
    return { issue: issueRow(issue) };
  },

  async delete_issue(ctx, input) {
    return deleteIssue(ctx.prisma, ctx.projectId, { number: input.number });
  },

  async notify_webhook(ctx, input) {
    const project = await getProject(ctx.prisma, ctx.projectId);
    const res = await deliverWebhook(
      project.webhookUrl,
      { project: { id: project.id, slug: project.slug, name: project.name }, message: input.message },
      { signal: ctx.signal, ...(ctx.idempotencyKey ? { idempotencyKey: ctx.idempotencyKey } : {}) },
    );
    return { delivered: res.delivered, status: res.status };
  },
};

const who = (m: MemberChoice) => `${m.name} (${m.email})`;

/**
 * The member an assignment means. A reference naming one member (id, email, or a name only one
 * member's contains) is that member; one naming nobody goes to the service as it is (which says
 * why). Several matching members are a choice the tool cannot make: the user is asked when the
 * client takes questions; otherwise the call fails with the choices, so the caller can ask.
 */
async function chooseAssignee(ctx: ToolContext, number: number, ref: string): Promise<string> {
  const matches = await membersMatching(ctx.prisma, ctx.projectId, ref);
  if (matches.length <= 1) return matches[0]?.userId ?? ref;
  const choices = matches.map((m) => ({ userId: m.userId, name: m.name, email: m.email }));
  if (!ctx.ask) {
    throw new ToolFailure(
      'AMBIGUOUS_ASSIGNEE',
      `Several members match “${ref}”: ${matches.map(who).join(', ')}. Issue #${number} was not assigned; call ` +
        'assign_issue again with the email of the one meant (ask the user which one if you do not know).',
      { choices },
    );
  }
  const answer = await ctx.ask({
    message: `Several members match “${ref}”. Who should issue #${number} be assigned to?`,
    requestedSchema: {
      type: 'object',
      properties: {
        assignee: {
          type: 'string',
          title: 'Assignee',
          enum: matches.map((m) => m.userId),
          enumNames: matches.map(who),
        },
      },
      required: ['assignee'],
    },
  });
  if (answer.action === 'accept') {
    const chosen = answer.content.assignee;
    if (typeof chosen === 'string' && matches.some((m) => m.userId === chosen)) return chosen;
    throw new ToolFailure(
      'CHOICE_INVALID',
      `The answer was not one of the members offered; issue #${number} was not assigned.`,
      {
        choices,
      },
    );
  }
  if (answer.action === 'unanswered') {
    throw new ToolFailure('CHOICE_TIMED_OUT', `No one chose an assignee in time; issue #${number} was not assigned.`, {
      choices,
    });
  }
  throw new ToolFailure('CHOICE_DECLINED', `The user did not choose an assignee; issue #${number} was not assigned.`);
}

const KNOWN_CODES: ReadonlySet<string> = new Set(MCP_ERROR_CODES);

/** Expected failures of the tracker services become tool failures with their stable code. */
function fromServiceError(err: unknown): ToolFailure | null {
  if (!(err instanceof TRPCError) || err.code === 'INTERNAL_SERVER_ERROR') return null;
  const appCode = err.cause instanceof AppError ? err.cause.appCode : null;
  if (appCode === 'INVALID_INPUT') return new ToolFailure('INVALID_ARGUMENTS', err.message);
  if (appCode && KNOWN_CODES.has(appCode)) return new ToolFailure(appCode as McpErrorCode, err.message);
  return null;
}

/** Runs one tool with already validated input. Throws ToolFailure for expected failures. */
export async function runTool<N extends McpToolName>(
  name: N,
  input: McpToolInput<N>,
  ctx: ToolContext,
): Promise<ToolOutput> {
  const handler = HANDLERS[name] as (c: ToolContext, i: McpToolInput<N>) => Promise<ToolOutput>;
  try {
    return await handler(ctx, input);
  } catch (err) {
    throw fromServiceError(err) ?? err;
  }
}
