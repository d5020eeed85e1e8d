/**
 * tRPC for what the project's admins set for the assistant and what waits for a user:
 *
 * - `budgets` ("Budgets" in the project's settings): the budgets, with what each window spent
 *   (also the review's usage page); set by admins (`agent:manage`), in US dollars when the model's
 *   prices are configured, else in tokens.
 * - `dataPolicy` ("Retention"): how long conversations are kept, whether contacts are masked.
 * - `memberData`: one member's assistant data, exported (JSONL, a page at a time) or deleted.
 * - `waiting`: the approvals and questions waiting for the caller, across their conversations.
 *
 * Mounted in the module's router (router.ts). Procedures hold no queries.
 */
import 'server-only';
import { z } from 'zod';
import { appError, env, isIdentifier, projectProcedure, router } from '../host';
import { BUDGET_SCOPES, type BudgetScope, type BudgetUnit, MAX_BUDGET } from '../budgets';
import { budgetUsage, saveBudgets } from './budgets';
import { loadDataPolicy, MAX_RETENTION_DAYS, maskOptionsOf, saveDataPolicy } from './data-policy';
import { deleteMemberData, memberExportHeader, memberExportPage, peopleWithAssistantData } from './member-data';
import { listWaiting } from './waiting';

/** The unit budgets are set in now: dollars when both prices are configured, else tokens. */
function configuredUnit(): BudgetUnit {
  const settings = env();
  return settings.AGENT_MODEL_PRICE_INPUT !== undefined && settings.AGENT_MODEL_PRICE_OUTPUT !== undefined
    ? 'USD'
    : 'TOKENS';
}

const Amount = z.number().positive().max(MAX_BUDGET.TOKENS).nullable();
const BudgetsInput = z
  .object(
    Object.fromEntries(BUDGET_SCOPES.map((s) => [s, Amount.optional()])) as Record<
      BudgetScope,
      z.ZodOptional<typeof Amount>
    >,
  )
  .strict();

const MemberInput = z.object({
  userId: z.string().min(1).max(64).refine(isIdentifier, 'not an id'),
});

export const budgetsRouter = router({
  /** The budgets, the unit new ones are set in, and what the current windows spent (per member too). */
  get: projectProcedure('agent:review').query(async ({ ctx, input }) => ({
    unit: configuredUnit(),
    ...(await budgetUsage(ctx.prisma, input.projectId)),
  })),

  /** Sets or clears budgets (null clears); amounts in the configured unit. Holds from the next run. */
  set: projectProcedure('agent:manage')
    .input(z.object({ budgets: BudgetsInput }))
    .mutation(async ({ ctx, input }) => {
      const unit = configuredUnit();
      for (const [scope, amount] of Object.entries(input.budgets)) {
        if (typeof amount !== 'number') continue;
        if (unit === 'USD' && amount > MAX_BUDGET.USD)
          throw appError('BAD_REQUEST', 'BUDGET_TOO_LARGE', `The ${scope} budget is larger than any budget can be.`);
        if (unit === 'TOKENS' && !Number.isInteger(amount))
          throw appError('BAD_REQUEST', 'BUDGET_NOT_WHOLE', 'A budget in tokens is a whole number of tokens.');
      }
      await saveBudgets(ctx.prisma, { projectId: input.projectId, userId: ctx.user.id, unit, budgets: input.budgets });
      return { unit, ...(await budgetUsage(ctx.prisma, input.projectId)) };
    }),
});

export const dataPolicyRouter = router({
  get: projectProcedure('agent:review').query(async ({ ctx, input }) => loadDataPolicy(ctx.prisma, input.projectId)),

  /** Retention in days after a conversation's last activity (null: kept), and contact masking. */
  set: projectProcedure('agent:manage')
    .input(
      z.object({
        retentionDays: z.number().int().min(1).max(MAX_RETENTION_DAYS).nullable(),
        maskContacts: z.boolean(),
      }),
    )
    .mutation(async ({ ctx, input }) =>
      saveDataPolicy(ctx.prisma, {
        projectId: input.projectId,
        userId: ctx.user.id,
        retentionDays: input.retentionDays,
        maskContacts: input.maskContacts,
      }),
    ),
});

export const memberDataRouter = router({
  /** Everyone with assistant conversations in the project (members, and people who left). */
  people: projectProcedure('agent:manage').query(async ({ ctx, input }) =>
    peopleWithAssistantData(ctx.prisma, input.projectId),
  ),

  /**
   * A page of the export: `header` (first page only) and one line per conversation, masked like
   * stored text; ask again with `nextCursor` until it is null. JSONL: one line per object.
   */
  export: projectProcedure('agent:manage')
    .input(MemberInput.extend({ cursor: z.string().min(1).max(200).optional() }))
    .query(async ({ ctx, input }) => {
      const mask = await maskOptionsOf(ctx.prisma, input.projectId);
      const [header, page] = await Promise.all([
        input.cursor ? null : memberExportHeader(ctx.prisma, input.projectId, input.userId),
        memberExportPage(ctx.prisma, {
          projectId: input.projectId,
          userId: input.userId,
          cursor: input.cursor ?? null,
          mask,
        }),
      ]);
      return { header, ...page };
    }),

  /** Deletes the member's conversations here (not one with an answer being written: `running`). */
  delete: projectProcedure('agent:manage')
    .input(MemberInput)
    .mutation(async ({ ctx, input }) =>
      deleteMemberData(ctx.prisma, { projectId: input.projectId, userId: input.userId, byUserId: ctx.user.id }),
    ),
});

export const waitingRouter = router({
  /** The caller's approvals and questions that can still be answered, per conversation. */
  list: projectProcedure('agent:use').query(async ({ ctx, input }) =>
    listWaiting(ctx.prisma, input.projectId, ctx.user.id),
  ),
});
