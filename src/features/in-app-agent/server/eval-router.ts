/**
 * tRPC `agent.eval.*`: the evaluation studio of the review pages. Reading datasets, experiments,
 * comparisons and exports needs `agent:review`; creating datasets, adding cases, writing
 * expectations and running or stopping experiments needs `agent:manage`. Procedures hold no
 * queries: they call `eval-store.ts`, `eval-cases.ts` and `eval-runner.ts`.
 */
import 'server-only';
import { z } from 'zod';
import { appError, type PrismaClient, projectProcedure, router } from '../host';
import { ConversationIdSchema } from '../schema';
import {
  DatasetNameSchema,
  EVAL_LIMITS,
  EvalCandidateSchema,
  EvalCaseFilterSchema,
  EvalCaseResultSchema,
  EvalExpectationsSchema,
  type EvalCaseResult,
} from '../eval/schema';
import { compareCase } from '../eval/diff';
import { casesFromConversation, casesFromExport, casesFromRatings } from './eval-cases';
import {
  createDataset,
  deleteCase,
  deleteDataset,
  EvalRefusal,
  experimentResults,
  findDataset,
  findExperiment,
  insertCases,
  listCases,
  listDatasets,
  listExperiments,
  setCaseExpectations,
  casesToRun,
  caseQuestions,
} from './eval-store';
import { closeLost, estimateCost, startExperiment, stopExperiment, SYSTEM_PROMPT_VERSION } from './eval-runner';

const Id = z.string().min(1).max(64);

/** Refusals of the studio as tRPC errors with their stable codes. */
async function refusing<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof EvalRefusal) throw appError(err.status, err.code, err.message);
    throw err;
  }
}

async function dataset(prisma: PrismaClient, projectId: string, datasetId: string) {
  const d = await findDataset(prisma, projectId, { id: datasetId });
  if (!d) throw appError('NOT_FOUND', 'DATASET_NOT_FOUND', 'Dataset not found.');
  return d;
}

async function experiment(prisma: PrismaClient, projectId: string, experimentId: string) {
  const e = await findExperiment(prisma, projectId, experimentId);
  if (!e) throw appError('NOT_FOUND', 'EXPERIMENT_NOT_FOUND', 'Experiment not found.');
  return e;
}

/** Stored results read back through the contract (a row that does not read is left out). */
function resultsOf(rows: Array<{ result: unknown }>): EvalCaseResult[] {
  return rows.flatMap((r) => {
    const parsed = EvalCaseResultSchema.safeParse(r.result);
    return parsed.success ? [parsed.data] : [];
  });
}

const failedExpectations = (r: EvalCaseResult) => r.expectations.filter((e) => !e.passed).length;

export const evalRouter = router({
  /** This build's system prompt version (what a candidate file may name). */
  info: projectProcedure('agent:review').query(() => ({
    systemPromptVersion: SYSTEM_PROMPT_VERSION,
    limits: EVAL_LIMITS,
  })),

  datasets: router({
    list: projectProcedure('agent:review').query(({ ctx, input }) => listDatasets(ctx.prisma, input.projectId)),

    get: projectProcedure('agent:review')
      .input(z.object({ datasetId: Id }))
      .query(async ({ ctx, input }) => {
        const d = await dataset(ctx.prisma, input.projectId, input.datasetId);
        await closeLost(ctx.prisma, input.projectId);
        const [cases, experiments] = await Promise.all([
          listCases(ctx.prisma, d.id),
          listExperiments(ctx.prisma, d.id),
        ]);
        return { ...d, cases, experiments };
      }),

    /** A new dataset, with the rated answers the filters select when given. */
    create: projectProcedure('agent:manage')
      .input(z.object({ name: DatasetNameSchema, filter: EvalCaseFilterSchema.optional() }))
      .mutation(({ ctx, input }) =>
        refusing(async () => {
          const cases = input.filter ? await casesFromRatings(ctx.prisma, input.projectId, input.filter) : [];
          const d = await createDataset(ctx.prisma, {
            projectId: input.projectId,
            name: input.name,
            userId: ctx.user.id,
          });
          const added = await insertCases(ctx.prisma, d.id, cases);
          return { id: d.id, name: d.name, added };
        }),
      ),

    /** Adds the rated answers the filters select (rating, reasons, dates, tools used, model). */
    addRated: projectProcedure('agent:manage')
      .input(z.object({ datasetId: Id, filter: EvalCaseFilterSchema }))
      .mutation(({ ctx, input }) =>
        refusing(async () => {
          const d = await dataset(ctx.prisma, input.projectId, input.datasetId);
          const cases = await casesFromRatings(ctx.prisma, input.projectId, input.filter);
          return { added: await insertCases(ctx.prisma, d.id, cases), matched: cases.length };
        }),
      ),

    /** Adds one turn of a conversation (`messageId`: its answer), or every turn of it. */
    addConversation: projectProcedure('agent:manage')
      .input(z.object({ datasetId: Id, conversationId: ConversationIdSchema, messageId: Id.optional() }))
      .mutation(({ ctx, input }) =>
        refusing(async () => {
          const d = await dataset(ctx.prisma, input.projectId, input.datasetId);
          const cases = await casesFromConversation(ctx.prisma, input.projectId, input.conversationId, input.messageId);
          return { added: await insertCases(ctx.prisma, d.id, cases), matched: cases.length };
        }),
      ),

    /** Adds the lines of a feedback export file (JSONL); lines not taken are reported. */
    import: projectProcedure('agent:manage')
      .input(z.object({ datasetId: Id, jsonl: z.string().min(1).max(EVAL_LIMITS.maxImportBytes) }))
      .mutation(({ ctx, input }) =>
        refusing(async () => {
          const d = await dataset(ctx.prisma, input.projectId, input.datasetId);
          const { cases, problems } = await casesFromExport(ctx.prisma, input.projectId, input.jsonl);
          return { added: await insertCases(ctx.prisma, d.id, cases), problems };
        }),
      ),

    delete: projectProcedure('agent:manage')
      .input(z.object({ datasetId: Id }))
      .mutation(({ ctx, input }) =>
        refusing(async () => {
          if (!(await deleteDataset(ctx.prisma, input.projectId, input.datasetId)))
            throw appError('NOT_FOUND', 'DATASET_NOT_FOUND', 'Dataset not found.');
          return { deleted: true };
        }),
      ),
  }),

  cases: router({
    setExpectations: projectProcedure('agent:manage')
      .input(z.object({ caseId: Id, expectations: EvalExpectationsSchema }))
      .mutation(async ({ ctx, input }) => {
        if (!(await setCaseExpectations(ctx.prisma, { ...input, projectId: input.projectId })))
          throw appError('NOT_FOUND', 'CASE_NOT_FOUND', 'Case not found.');
        return { caseId: input.caseId, expectations: input.expectations };
      }),
    remove: projectProcedure('agent:manage')
      .input(z.object({ caseId: Id }))
      .mutation(async ({ ctx, input }) => {
        if (!(await deleteCase(ctx.prisma, input.projectId, input.caseId)))
          throw appError('NOT_FOUND', 'CASE_NOT_FOUND', 'Case not found.');
        return { removed: true };
      }),
  }),

  experiments: router({
    /** What running the dataset against the candidate would take (tokens, and cost when priced). */
    estimate: projectProcedure('agent:manage')
      .input(z.object({ datasetId: Id, candidate: EvalCandidateSchema }))
      .query(async ({ ctx, input }) => {
        const d = await dataset(ctx.prisma, input.projectId, input.datasetId);
        return estimateCost(await casesToRun(ctx.prisma, d.id), input.candidate);
      }),

    start: projectProcedure('agent:manage')
      .input(z.object({ datasetId: Id, candidate: EvalCandidateSchema }))
      .mutation(({ ctx, input }) =>
        refusing(async () => {
          const d = await dataset(ctx.prisma, input.projectId, input.datasetId);
          const started = await startExperiment(ctx.prisma, {
            projectId: input.projectId,
            datasetId: d.id,
            candidate: input.candidate,
            userId: ctx.user.id,
          });
          return { experimentId: started.experimentId };
        }),
      ),

    stop: projectProcedure('agent:manage')
      .input(z.object({ experimentId: Id }))
      .mutation(async ({ ctx, input }) => {
        await experiment(ctx.prisma, input.projectId, input.experimentId);
        return { stopping: await stopExperiment(ctx.prisma, input.projectId, input.experimentId) };
      }),

    /** An experiment with its progress and the results so far. */
    get: projectProcedure('agent:review')
      .input(z.object({ experimentId: Id }))
      .query(async ({ ctx, input }) => {
        await closeLost(ctx.prisma, input.projectId);
        const e = await experiment(ctx.prisma, input.projectId, input.experimentId);
        const d = await dataset(ctx.prisma, input.projectId, e.datasetId);
        const [results, questions] = await Promise.all([
          experimentResults(ctx.prisma, e.id).then(resultsOf),
          caseQuestions(ctx.prisma, d.id),
        ]);
        return { ...e, dataset: { id: d.id, name: d.name }, results, questions };
      }),

    /** Two experiments of one dataset, case by case: which got better or worse. */
    compare: projectProcedure('agent:review')
      .input(z.object({ baseId: Id, otherId: Id }))
      .query(async ({ ctx, input }) => {
        const [a, b] = await Promise.all([
          experiment(ctx.prisma, input.projectId, input.baseId),
          experiment(ctx.prisma, input.projectId, input.otherId),
        ]);
        if (a.datasetId !== b.datasetId)
          throw appError('BAD_REQUEST', 'NOT_SAME_DATASET', 'Only experiments of the same dataset can be compared.');
        const d = await dataset(ctx.prisma, input.projectId, a.datasetId);
        const [ra, rb, questions] = await Promise.all([
          experimentResults(ctx.prisma, a.id).then(resultsOf),
          experimentResults(ctx.prisma, b.id).then(resultsOf),
          caseQuestions(ctx.prisma, d.id),
        ]);
        const byCase = new Map(rb.map((r) => [r.caseId, r]));
        const cases = ra.flatMap((x) => {
          const y = byCase.get(x.caseId);
          if (!y) return [];
          const view = (r: EvalCaseResult) => ({
            outcome: r.outcome,
            passed: r.passed,
            failedExpectations: failedExpectations(r),
            calls: r.toolCalls.map((c) => c.name),
            answer: r.answer,
          });
          return [{ caseId: x.caseId, verdict: compareCase(view(x), view(y)), base: x, other: y }];
        });
        const count = (v: string) => cases.filter((c) => c.verdict === v).length;
        return {
          dataset: { id: d.id, name: d.name },
          base: a,
          other: b,
          summary: { better: count('better'), worse: count('worse'), changed: count('changed'), same: count('same') },
          cases,
          questions,
        };
      }),

    /** The results as JSONL (one case a line, EvalCaseResultSchema with the experiment's id). */
    export: projectProcedure('agent:review')
      .input(z.object({ experimentId: Id }))
      .query(async ({ ctx, input }) => {
        const e = await experiment(ctx.prisma, input.projectId, input.experimentId);
        const results = resultsOf(await experimentResults(ctx.prisma, e.id));
        return {
          filename: `assistant-experiment-${e.id}.jsonl`,
          jsonl: results.map((r) => `${JSON.stringify({ experimentId: e.id, candidate: e.name, ...r })}\n`).join(''),
        };
      }),
  }),
});
