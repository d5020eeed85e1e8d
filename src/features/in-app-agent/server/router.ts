/**
 * tRPC for the assistant: conversation list, replay, rename, delete/restore, feedback, model info,
 * and the review of all conversations of a project (ADMIN and OWNER). Only the owner of a
 * conversation sees it through `conversations.*`; another user's id is NOT_FOUND. Procedures hold
 * no queries: they call the named functions of `queries.ts` and `persistence.ts`.
 */
import 'server-only';
import { z } from 'zod';
import { appError, env, type PrismaClient, ProjectInput, projectProcedure, router } from '../host';
import { LIMITS } from '../constants';
import { ConversationIdSchema, FeedbackReasonSchema, FeedbackSubmitSchema, normalizeFeedbackReasons } from '../schema';
import { maskOptionsOf } from './data-policy';
import { createModel, DEMO_MODEL_INFO, ModelConfigError, modelAccepts } from './model';
import { loadStoredEvents, replayPage, runningRunOf, selectVersion } from './persistence';
import {
  decodeCursor,
  feedbackByMessage,
  findOwnConversation,
  findProjectConversationId,
  isAssistantMessage,
  type ListCursor,
  listConversationRuns,
  listOwnConversations,
  listReviewConversations,
  projectUsage,
  renameConversation,
  reviewDetail,
  saveFeedback,
  setConversationDeleted,
} from './queries';
import { maskDeep, maskText } from './redaction';
import { budgetsRouter, dataPolicyRouter, memberDataRouter, waitingRouter } from './budget-data-router';
import { allowancesRouter, settingsRouter } from './settings-router';
import { evalRouter } from './eval-router';
import { settingsUsedBy } from './settings-store';

const ConversationInput = ProjectInput.extend({ conversationId: ConversationIdSchema });
const PAGE = 20;

function parseCursor(c: string | undefined): ListCursor | null {
  if (!c) return null;
  const cursor = decodeCursor(c);
  if (!cursor) throw appError('BAD_REQUEST', 'INVALID_CURSOR', 'Invalid cursor.');
  return cursor;
}

function notFound(): never {
  throw appError('NOT_FOUND', 'CONVERSATION_NOT_FOUND', 'Conversation not found.');
}

/** The user's own conversation, or NOT_FOUND (also for another user's id: never revealed). */
async function ownConversation(
  prisma: PrismaClient,
  projectId: string,
  userId: string,
  conversationId: string,
  includeDeleted = false,
) {
  return (await findOwnConversation(prisma, { projectId, userId, conversationId }, includeDeleted)) ?? notFound();
}

export const agentRouter = router({
  /** The project's assistant settings (tool permissions, instructions) and their history. */
  settings: settingsRouter,
  /** A conversation's "always allow" grants. */
  allowances: allowancesRouter,

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
        return listOwnConversations(ctx.prisma, {
          projectId: input.projectId,
          userId: ctx.user.id,
          search: input.search,
          cursor: parseCursor(input.cursor),
          take: input.limit ?? PAGE,
        });
      }),

    get: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }))
      .query(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId);
        const [page, feedback, liveRunId] = await Promise.all([
          replayPage(ctx.prisma, c.id, { page: { runs: LIMITS.replayPageRuns } }),
          feedbackByMessage(ctx.prisma, c.id, ctx.user.id),
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
        return renameConversation(ctx.prisma, c.id, input.title);
      }),

    delete: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }))
      .mutation(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId);
        await setConversationDeleted(ctx.prisma, c, true);
        return { id: c.id, deleted: true };
      }),

    restore: projectProcedure('agent:use')
      .input(ConversationInput.pick({ conversationId: true }))
      .mutation(async ({ ctx, input }) => {
        const c = await ownConversation(ctx.prisma, input.projectId, ctx.user.id, input.conversationId, true);
        await setConversationDeleted(ctx.prisma, c, false);
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
        if (!(await isAssistantMessage(ctx.prisma, c.id, input.messageId))) {
          throw appError('NOT_FOUND', 'MESSAGE_NOT_FOUND', 'Message not found.');
        }
        // A comment is kept with either rating (what was good is worth as much as what was not),
        // masked like all stored text.
        const comment = input.comment
          ? maskText(input.comment, await maskOptionsOf(ctx.prisma, input.projectId))
          : null;
        // Reasons explain a thumbs down; a new rating replaces the old one's reasons (none for a
        // thumbs up), so a changed mind never leaves stale reasons behind.
        const reasons = input.value === -1 ? normalizeFeedbackReasons(input.reasons ?? []) : [];
        return saveFeedback(ctx.prisma, {
          conversationId: c.id,
          messageId: input.messageId,
          userId: ctx.user.id,
          value: input.value,
          comment,
          reasons,
        });
      }),
  }),

  model: router({
    info: projectProcedure('agent:use').query(() => {
      try {
        const settings = env();
        const model = createModel(settings);
        // What a message may attach with this model: the panel's file picker offers only that.
        const accepts = model.accepts ?? modelAccepts(settings, model.info.provider);
        return {
          ...model.info,
          attachments: {
            ...accepts,
            maxFileBytes: settings.AGENT_ATTACHMENT_MAX_BYTES,
            maxFilesPerMessage: settings.AGENT_ATTACHMENTS_PER_MESSAGE,
          },
        };
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
        return listReviewConversations(ctx.prisma, {
          projectId: input.projectId,
          filter: input.filter ?? 'all',
          reason: input.reason,
          cursor: parseCursor(input.cursor),
          take: PAGE,
        });
      }),

    get: projectProcedure('agent:review')
      .input(ConversationInput.pick({ conversationId: true }))
      .query(async ({ ctx, input }) => {
        const [detail, settingsUsed] = await Promise.all([
          reviewDetail(ctx.prisma, input.projectId, input.conversationId, { runs: LIMITS.replayPageRuns }),
          settingsUsedBy(ctx.prisma, input.conversationId),
        ]);
        // Which tool permissions and instructions the conversation's runs went by.
        return detail ? { ...detail, settingsUsed } : notFound();
      }),

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
        const id = (await findProjectConversationId(ctx.prisma, input.projectId, input.conversationId)) ?? notFound();
        return replayPage(ctx.prisma, id, { page: { runs: LIMITS.replayPageRuns, before: input.before } });
      }),

    /**
     * Everything about one conversation: the shown path, and every version of every turn as stored
     * events (`events`, each with its run; `runs` carries each run's `precedingRunId`).
     */
    export: projectProcedure('agent:review')
      .input(ConversationInput.pick({ conversationId: true }))
      .query(async ({ ctx, input }) => {
        const detail = (await reviewDetail(ctx.prisma, input.projectId, input.conversationId)) ?? notFound();
        const [runs, events, mask] = await Promise.all([
          listConversationRuns(ctx.prisma, input.conversationId),
          loadStoredEvents(ctx.prisma, input.conversationId),
          maskOptionsOf(ctx.prisma, input.projectId),
        ]);
        // Exports are masked like stored text (rows stored before masking existed included).
        return maskDeep(
          {
            format: 'in-app-agent.conversation',
            version: 2,
            exportedAt: new Date().toISOString(),
            ...detail,
            runs,
            events,
          },
          mask,
        );
      }),
  }),

  // The project's settings for the assistant (budgets, retention, one member's data) and what
  // waits for the caller: budget-data-router.ts.
  budgets: budgetsRouter,
  dataPolicy: dataPolicyRouter,
  memberData: memberDataRouter,
  waiting: waitingRouter,
  /** Datasets of rated answers, experiments against a candidate, comparisons (eval-router.ts). */
  eval: evalRouter,
});
