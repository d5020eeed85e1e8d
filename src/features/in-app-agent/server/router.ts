/**
 * tRPC for the assistant: conversation list, replay, rename, delete/restore, feedback, model info,
 * and the review of all conversations of a project (ADMIN and OWNER). Only the owner of a
 * conversation sees it through `conversations.*`; another user's id is NOT_FOUND.
 */
import { z } from 'zod';
import type { PrismaClient } from '@/generated/prisma/client';
import { env } from '@/server/env';
import { newId } from '@/server/ids';
import { appError, ProjectInput, projectProcedure, router } from '@/server/trpc';
import { LIMITS } from '../constants';
import { ConversationIdSchema, FeedbackReasonSchema, FeedbackSubmitSchema, normalizeFeedbackReasons } from '../schema';
import { createModel, DEMO_MODEL_INFO, ModelConfigError } from './model';
import { loadStoredEvents, replayPage, runningRunOf, selectVersion } from './persistence';

const ConversationInput = ProjectInput.extend({ conversationId: ConversationIdSchema });
const PAGE = 20;

function cursorOf(d: Date, id: string): string {
  return Buffer.from(`${d.toISOString()}|${id}`).toString('base64url');
}
function parseCursor(c: string | undefined): { at: Date; id: string } | null {
  if (!c) return null;
  const [iso, id] = Buffer.from(c, 'base64url').toString('utf8').split('|');
  const at = new Date(iso ?? '');
  if (!id || Number.isNaN(at.getTime())) throw appError('BAD_REQUEST', 'INVALID_CURSOR', 'Invalid cursor.');
  return { at, id };
}
/** Keyset pagination on (updatedAt desc, id desc). */
function afterCursor(c: { at: Date; id: string } | null) {
  return c ? { OR: [{ updatedAt: { lt: c.at } }, { updatedAt: c.at, id: { lt: c.id } }] } : {};
}

async function ownConversation(
  prisma: PrismaClient,
  projectId: string,
  userId: string,
  conversationId: string,
  includeDeleted = false,
) {
  const c = await prisma.agentConversation.findFirst({
    where: { id: conversationId, projectId, userId, ...(includeDeleted ? {} : { deletedAt: null }) },
  });
  if (!c) throw appError('NOT_FOUND', 'CONVERSATION_NOT_FOUND', 'Conversation not found.');
  return c;
}

async function lastRunStatuses(prisma: PrismaClient, ids: string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const runs = await prisma.agentRun.findMany({
    where: { conversationId: { in: ids } },
    orderBy: { startedAt: 'desc' },
    distinct: ['conversationId'],
    select: { conversationId: true, status: true },
  });
  return new Map(runs.map((r) => [r.conversationId, r.status]));
}

/** A stored rating as the panel and the review show it (reasons this build does not know are left out). */
function feedbackView(r: { value: number; comment: string | null; reasons: string[] }) {
  return { value: (r.value < 0 ? -1 : 1) as 1 | -1, comment: r.comment, reasons: normalizeFeedbackReasons(r.reasons) };
}

async function feedbackMap(prisma: PrismaClient, conversationId: string, userId: string) {
  const rows = await prisma.agentFeedback.findMany({ where: { conversationId, userId } });
  return Object.fromEntries(rows.map((r) => [r.messageId, feedbackView(r)]));
}

export const agentRouter = router({
  conversations: router({
    list: projectProcedure('agent:use')
      .input(
        z.object({
          cursor: z.string().max(200).optional(),
          search: z.string().max(200).optional(),
          limit: z.number().int().min(1).max(100).optional(),
        }),
      )
      .query(async ({ ctx, input }) => {
        const take = input.limit ?? PAGE;
        const rows = await ctx.prisma.agentConversation.findMany({
          where: {
            projectId: input.projectId,
            userId: ctx.user.id,
            deletedAt: null,
            ...(input.search?.trim() ? { title: { contains: input.search.trim(), mode: 'insensitive' as const } } : {}),
            ...afterCursor(parseCursor(input.cursor)),
          },
          orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
          take: take + 1,
        });
        const page = rows.slice(0, take);
        const statuses = await lastRunStatuses(
          ctx.prisma,
          page.map((r) => r.id),
        );
        const last = page[page.length - 1];
        return {
          items: page.map((r) => ({
            id: r.id,
            title: r.title,
            createdAt: r.createdAt,
            updatedAt: r.updatedAt,
            lastRunStatus: statuses.get(r.id) ?? null,
          })),
          nextCursor: rows.length > take && last ? cursorOf(last.updatedAt, last.id) : null,
        };
      }),

    get: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }))
      .query(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId);
        const [page, feedback, liveRunId] = await Promise.all([
          replayPage(ctx.prisma, c.id, { page: { runs: LIMITS.replayPageRuns } }),
          feedbackMap(ctx.prisma, c.id, ctx.user.id),
          runningRunOf(ctx.prisma, c.id),
        ]);
        // The newest page of the conversation (`olderBefore` asks for the one before it), and
        // `liveRunId`: a run still answering (on any instance), which the panel follows.
        return {
          conversation: { id: c.id, title: c.title, createdAt: c.createdAt, updatedAt: c.updatedAt },
          view: page.view,
          olderBefore: page.olderBefore,
          feedback,
          liveRunId,
        };
      }),

    /** The page of the conversation before the run `before` (scrolling back in a long conversation). */
    older: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }).extend({ before: z.string().min(1).max(64) }))
      .query(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId);
        return replayPage(ctx.prisma, c.id, { page: { runs: LIMITS.replayPageRuns, before: input.before } });
      }),

    /** Shows another version of a turn (the arrows of "2 / 3"); not while an answer is being written. */
    selectVersion: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }).extend({ runId: z.string().min(1).max(64) }))
      .mutation(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId);
        if (!(await selectVersion(ctx.prisma, c.id, input.runId))) {
          throw appError(
            'CONFLICT',
            'VERSION_NOT_SELECTABLE',
            'That version cannot be shown now (an answer is being written, or it is gone).',
          );
        }
        return replayPage(ctx.prisma, c.id, { page: { runs: LIMITS.replayPageRuns } });
      }),

    rename: projectProcedure('agent:use')
      .input(
        ConversationInput.pick({ conversationId: true }).extend({
          title: z.string().trim().min(1).max(LIMITS.maxTitleChars),
        }),
      )
      .mutation(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId);
        const updated = await ctx.prisma.agentConversation.update({
          where: { id: c.id },
          data: { title: input.title },
        });
        return { id: updated.id, title: updated.title };
      }),

    delete: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }))
      .mutation(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId);
        await ctx.prisma.agentConversation.update({
          where: { id: c.id },
          data: { deletedAt: new Date(), updatedAt: c.updatedAt },
        });
        return { id: c.id, deleted: true };
      }),

    restore: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }))
      .mutation(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId, true);
        await ctx.prisma.agentConversation.update({
          where: { id: c.id },
          data: { deletedAt: null, updatedAt: c.updatedAt },
        });
        return { id: c.id, deleted: false };
      }),
  }),

  feedback: router({
    submit: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }))
      .input(FeedbackSubmitSchema)
      .mutation(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId);
        // The rated message, found by its id (one indexed row, not a replay of the conversation).
        const target = await ctx.prisma.agentEvent.findFirst({
          where: { conversationId: c.id, messageId: input.messageId, type: 'TEXT_MESSAGE' },
          select: { payload: true },
        });
        if ((target?.payload as { role?: string } | undefined)?.role !== 'assistant') {
          throw appError('NOT_FOUND', 'MESSAGE_NOT_FOUND', 'Message not found.');
        }
        // A comment is kept with either rating (what was good is worth as much as what was not).
        const comment = input.comment ? input.comment : null;
        // Reasons explain a thumbs down; a new rating replaces the old one's reasons (none for a
        // thumbs up), so a changed mind never leaves stale reasons behind.
        const reasons = input.value === -1 ? normalizeFeedbackReasons(input.reasons ?? []) : [];
        const row = await ctx.prisma.agentFeedback.upsert({
          where: { messageId_userId: { messageId: input.messageId, userId: ctx.user.id } },
          update: { value: input.value, comment, reasons },
          create: {
            id: newId('fb_'),
            conversationId: c.id,
            messageId: input.messageId,
            userId: ctx.user.id,
            value: input.value,
            comment,
            reasons,
          },
        });
        return { messageId: row.messageId, ...feedbackView(row) };
      }),
  }),

  model: router({
    info: projectProcedure('agent:use').query(() => {
      try {
        return createModel(env()).info;
      } catch (err) {
        if (err instanceof ModelConfigError) return { ...DEMO_MODEL_INFO, label: `Misconfigured: ${err.message}` };
        throw err;
      }
    }),
  }),

  review: router({
    list: projectProcedure('agent:review')
      .input(
        z.object({
          filter: z.enum(['all', 'negative', 'failed', 'approvals']).optional(),
          /** Only conversations with a thumbs down giving this reason (combines with `filter`). */
          reason: FeedbackReasonSchema.optional(),
          cursor: z.string().max(200).optional(),
        }),
      )
      .query(async ({ ctx, input }) => {
        const filter = input.filter ?? 'all';
        // Deleted conversations stay reviewable (flagged `deleted`): deleting hides a conversation
        // from its owner's list, not from the project's review.
        const rows = await ctx.prisma.agentConversation.findMany({
          where: {
            projectId: input.projectId,
            ...(filter === 'negative' ? { feedback: { some: { value: -1 } } } : {}),
            ...(filter === 'failed' ? { runs: { some: { status: 'FAILED' } } } : {}),
            ...(filter === 'approvals' ? { approvals: { some: {} } } : {}),
            ...(input.reason ? { AND: [{ feedback: { some: { value: -1, reasons: { has: input.reason } } } }] } : {}),
            ...afterCursor(parseCursor(input.cursor)),
          },
          orderBy: [{ updatedAt: 'desc' }, { id: 'desc' }],
          take: PAGE + 1,
          include: {
            user: { select: { id: true, name: true, email: true } },
            feedback: { select: { value: true, reasons: true } },
            _count: { select: { approvals: true } },
          },
        });
        const page = rows.slice(0, PAGE);
        const ids = page.map((r) => r.id);
        const statuses = await lastRunStatuses(ctx.prisma, ids);
        // Tool calls as replay shows them: one stored TOOL_CALL row per call (MCP and local tools,
        // executed, rejected or interrupted alike), counted without replaying every conversation.
        const toolCounts = ids.length
          ? await ctx.prisma.agentEvent.groupBy({
              by: ['conversationId'],
              where: { conversationId: { in: ids }, type: 'TOOL_CALL' },
              _count: { _all: true },
            })
          : [];
        const perConversation = new Map(toolCounts.map((t) => [t.conversationId, t._count._all]));
        const usage = await usageByConversation(ctx.prisma, ids);
        const last = page[page.length - 1];
        return {
          items: page.map((r) => ({
            id: r.id,
            title: r.title,
            user: r.user,
            updatedAt: r.updatedAt,
            deleted: r.deletedAt !== null,
            lastRunStatus: statuses.get(r.id) ?? null,
            negativeFeedback: r.feedback.filter((f) => f.value < 0).length,
            positiveFeedback: r.feedback.filter((f) => f.value > 0).length,
            /** Every reason given with this conversation's thumbs down, in the product's order. */
            reasons: normalizeFeedbackReasons(r.feedback.flatMap((f) => (f.value < 0 ? f.reasons : []))),
            approvals: r._count.approvals,
            toolCalls: perConversation.get(r.id) ?? 0,
            usage: usage.get(r.id) ?? { inputTokens: 0, outputTokens: 0, costUsd: null },
          })),
          nextCursor: rows.length > PAGE && last ? cursorOf(last.updatedAt, last.id) : null,
        };
      }),

    get: projectProcedure('agent:review')
      .input(ConversationInput.pick({ conversationId: true }))
      .query(async ({ ctx, input }) =>
        reviewDetail(ctx.prisma, input.projectId, input.conversationId, { runs: LIMITS.replayPageRuns }),
      ),

    /**
     * Tokens and cost of the project's assistant over the last `days` days: per day (UTC), per
     * user, and in total. Cost is null where no price was configured.
     */
    usage: projectProcedure('agent:review')
      .input(z.object({ days: z.number().int().min(1).max(366).optional() }))
      .query(async ({ ctx, input }) => projectUsage(ctx.prisma, input.projectId, input.days ?? 30)),

    /** The page of a reviewed conversation before the run `before`. */
    older: projectProcedure('agent:review')
      .input(ConversationInput.pick({ conversationId: true }).extend({ before: z.string().min(1).max(64) }))
      .query(async ({ ctx, input }) => {
        const c = await ctx.prisma.agentConversation.findFirst({
          where: { id: input.conversationId, projectId: input.projectId },
          select: { id: true },
        });
        if (!c) throw appError('NOT_FOUND', 'CONVERSATION_NOT_FOUND', 'Conversation not found.');
        return replayPage(ctx.prisma, c.id, { page: { runs: LIMITS.replayPageRuns, before: input.before } });
      }),

    /**
     * Everything about one conversation: the shown path, and every version of every turn as stored
     * events (`events`, each with its run; `runs` carries each run's `precedingRunId`).
     */
    export: projectProcedure('agent:review')
      .input(ConversationInput.pick({ conversationId: true }))
      .query(async ({ ctx, input }) => {
        const detail = await reviewDetail(ctx.prisma, input.projectId, input.conversationId);
        const [runs, events] = await Promise.all([
          ctx.prisma.agentRun.findMany({
            where: { conversationId: input.conversationId },
            orderBy: { startedAt: 'asc' },
          }),
          loadStoredEvents(ctx.prisma, input.conversationId),
        ]);
        return {
          format: 'in-app-agent.conversation',
          version: 2,
          exportedAt: new Date().toISOString(),
          ...detail,
          runs,
          events,
        };
      }),
  }),
});

type UsageTotals = { inputTokens: number; outputTokens: number; costUsd: number | null };

/** Tokens and cost per conversation (sums over its runs). */
async function usageByConversation(prisma: PrismaClient, ids: string[]): Promise<Map<string, UsageTotals>> {
  if (!ids.length) return new Map();
  const rows = await prisma.agentRun.groupBy({
    by: ['conversationId'],
    where: { conversationId: { in: ids } },
    _sum: { inputTokens: true, outputTokens: true, costUsd: true },
  });
  return new Map(
    rows.map((r) => [
      r.conversationId,
      { inputTokens: r._sum.inputTokens ?? 0, outputTokens: r._sum.outputTokens ?? 0, costUsd: r._sum.costUsd ?? null },
    ]),
  );
}

async function projectUsage(prisma: PrismaClient, projectId: string, days: number) {
  const since = new Date(Date.now() - days * 86_400_000);
  type Row = {
    key: string;
    name: string | null;
    runs: bigint | number;
    input: bigint | number | null;
    output: bigint | number | null;
    cost: number | null;
  };
  const totals = (r: Row) => ({
    runs: Number(r.runs),
    inputTokens: Number(r.input ?? 0),
    outputTokens: Number(r.output ?? 0),
    costUsd: r.cost === null ? null : Math.round(Number(r.cost) * 1e6) / 1e6,
  });
  const [byDay, byUser] = await Promise.all([
    prisma.$queryRaw<Row[]>`
      SELECT to_char(date_trunc('day', r."startedAt"), 'YYYY-MM-DD') AS key, NULL AS name, count(*) AS runs,
        sum(r."inputTokens") AS input, sum(r."outputTokens") AS output, sum(r."costUsd") AS cost
      FROM "AgentRun" r JOIN "AgentConversation" c ON c."id" = r."conversationId"
      WHERE c."projectId" = ${projectId} AND r."startedAt" >= ${since}
      GROUP BY 1 ORDER BY 1 DESC`,
    prisma.$queryRaw<Row[]>`
      SELECT u."id" AS key, u."name" AS name, count(*) AS runs,
        sum(r."inputTokens") AS input, sum(r."outputTokens") AS output, sum(r."costUsd") AS cost
      FROM "AgentRun" r JOIN "AgentConversation" c ON c."id" = r."conversationId" JOIN "User" u ON u."id" = r."userId"
      WHERE c."projectId" = ${projectId} AND r."startedAt" >= ${since}
      GROUP BY u."id", u."name" ORDER BY sum(r."inputTokens") + sum(r."outputTokens") DESC NULLS LAST`,
  ]);
  const all = [...byDay].map(totals);
  const sum = (f: (t: ReturnType<typeof totals>) => number) => all.reduce((n, t) => n + f(t), 0);
  const priced = all.some((t) => t.costUsd !== null);
  return {
    days,
    byDay: byDay.map((r) => ({ day: r.key, ...totals(r) })),
    byUser: byUser.map((r) => ({ user: { id: r.key, name: r.name ?? '' }, ...totals(r) })),
    total: {
      runs: sum((t) => t.runs),
      inputTokens: sum((t) => t.inputTokens),
      outputTokens: sum((t) => t.outputTokens),
      costUsd: priced ? Math.round(sum((t) => t.costUsd ?? 0) * 1e6) / 1e6 : null,
    },
  };
}

async function reviewDetail(prisma: PrismaClient, projectId: string, conversationId: string, page?: { runs: number }) {
  const c = await prisma.agentConversation.findFirst({
    where: { id: conversationId, projectId },
    include: { user: { select: { id: true, name: true, email: true } } },
  });
  if (!c) throw appError('NOT_FOUND', 'CONVERSATION_NOT_FOUND', 'Conversation not found.');
  const runs = await prisma.agentRun.findMany({ where: { conversationId }, select: { id: true } });
  const [replayed, feedbackRows, audit, approvals] = await Promise.all([
    replayPage(prisma, conversationId, page ? { page } : {}),
    prisma.agentFeedback.findMany({ where: { conversationId } }),
    prisma.toolCallAudit.findMany({ where: { runId: { in: runs.map((r) => r.id) } }, orderBy: { startedAt: 'asc' } }),
    prisma.agentPendingApproval.findMany({ where: { conversationId }, orderBy: { createdAt: 'asc' } }),
  ]);
  const usage = (await usageByConversation(prisma, [conversationId])).get(conversationId) ?? {
    inputTokens: 0,
    outputTokens: 0,
    costUsd: null,
  };
  return {
    conversation: { id: c.id, title: c.title, createdAt: c.createdAt, updatedAt: c.updatedAt, deletedAt: c.deletedAt },
    usage,
    user: c.user,
    view: replayed.view,
    olderBefore: replayed.olderBefore,
    feedback: Object.fromEntries(feedbackRows.map((f) => [f.messageId, feedbackView(f)])),
    audit: audit.map((a) => ({
      id: a.id,
      tool: a.tool,
      status: a.status,
      errorCode: a.errorCode,
      argsPreview: a.argsPreview,
      resultPreview: a.resultPreview,
      durationMs: a.durationMs,
      startedAt: a.startedAt,
      toolCallId: a.toolCallId,
      runId: a.runId,
    })),
    approvals: approvals.map((a) => ({
      toolCallId: a.toolCallId,
      toolName: a.toolName,
      status: a.status,
      reason: a.reason,
      feedback: a.feedback,
      decidedAt: a.decidedAt,
    })),
  };
}
