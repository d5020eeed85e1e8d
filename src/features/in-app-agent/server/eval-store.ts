/**
 * Every query of the evaluation studio: datasets and their cases, the rated answers a dataset is
 * built from, experiments (their counters, heartbeat, Stop, the end) and their results, and the
 * short-lived key an experiment's read tools run with. Nothing here writes a table a run reads.
 */
import { agentKeyMaterial, newId, Prisma, type PrismaClient } from '../host';
import {
  EVAL_LIMITS,
  type EvalCandidate,
  type EvalCaseData,
  type EvalCaseFilter,
  type EvalCaseResult,
} from '../eval/schema';
import { NOW } from './persistence';

/** A refusal of the evaluation studio: a stable code and the tRPC status it answers with. */
export class EvalRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: 'BAD_REQUEST' | 'NOT_FOUND' | 'CONFLICT' = 'BAD_REQUEST',
  ) {
    super(message);
  }
}

const isUnique = (err: unknown) => err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';

// ------------------------------------------------------------------------------------------------
// Datasets
// ------------------------------------------------------------------------------------------------

export async function createDataset(prisma: PrismaClient, input: { projectId: string; name: string; userId: string }) {
  try {
    return await prisma.agentEvalDataset.create({
      data: { id: newId('ds_'), projectId: input.projectId, name: input.name, createdById: input.userId },
      select: { id: true, name: true },
    });
  } catch (err) {
    if (isUnique(err) || String((err as Error).message).includes('AgentEvalDataset_projectId_name_key'))
      throw new EvalRefusal('DATASET_NAME_TAKEN', `A dataset named "${input.name}" already exists.`, 'CONFLICT');
    throw err;
  }
}

export async function listDatasets(prisma: PrismaClient, projectId: string) {
  const rows = await prisma.agentEvalDataset.findMany({
    where: { projectId },
    orderBy: { createdAt: 'desc' },
    select: {
      id: true,
      name: true,
      createdAt: true,
      _count: { select: { cases: true, experiments: true } },
    },
  });
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    createdAt: r.createdAt,
    cases: r._count.cases,
    experiments: r._count.experiments,
  }));
}

/** The project's dataset by id or by name, or null. */
export function findDataset(prisma: PrismaClient, projectId: string, by: { id: string } | { name: string }) {
  return prisma.agentEvalDataset.findFirst({
    where: { projectId, ...by },
    select: { id: true, name: true, projectId: true, createdAt: true },
  });
}

/** The datasets of every project with this name (the headless run names a dataset only). */
export function datasetsNamed(prisma: PrismaClient, name: string) {
  return prisma.agentEvalDataset.findMany({ where: { name }, select: { id: true, name: true, projectId: true } });
}

export async function deleteDataset(prisma: PrismaClient, projectId: string, datasetId: string): Promise<boolean> {
  const running = await prisma.agentEvalExperiment.count({ where: { datasetId, status: 'RUNNING' } });
  if (running)
    throw new EvalRefusal('EXPERIMENT_RUNNING', 'An experiment of this dataset is running. Stop it first.', 'CONFLICT');
  return (await prisma.agentEvalDataset.deleteMany({ where: { id: datasetId, projectId } })).count > 0;
}

// ------------------------------------------------------------------------------------------------
// Cases
// ------------------------------------------------------------------------------------------------

export interface NewCase {
  source: 'conversation' | 'export';
  conversationId: string | null;
  messageId: string;
  userId: string;
  rating: number | null;
  reasons: string[];
  model: string | null;
  toolsUsed: string[];
  data: EvalCaseData;
}

/**
 * Adds cases (a case already in the dataset, by its answer's message id, is skipped). Refused
 * DATASET_FULL when the dataset would hold more than its limit. The number added.
 */
export async function insertCases(prisma: PrismaClient, datasetId: string, cases: readonly NewCase[]): Promise<number> {
  if (!cases.length) return 0;
  return prisma.$transaction(async (tx) => {
    // One writer per dataset at a time: the count and the insert see the same cases.
    await tx.$executeRaw`SELECT 1 FROM "AgentEvalDataset" WHERE "id" = ${datasetId} FOR UPDATE`;
    const existing = await tx.agentEvalCase.findMany({
      where: { datasetId, messageId: { in: cases.map((c) => c.messageId) } },
      select: { messageId: true },
    });
    const known = new Set(existing.map((e) => e.messageId));
    const fresh = cases.filter(
      (c, i) => !known.has(c.messageId) && cases.findIndex((d) => d.messageId === c.messageId) === i,
    );
    const count = await tx.agentEvalCase.count({ where: { datasetId } });
    if (count + fresh.length > EVAL_LIMITS.maxCases)
      throw new EvalRefusal(
        'DATASET_FULL',
        `A dataset holds at most ${EVAL_LIMITS.maxCases} cases; this one has ${count} and ${fresh.length} would be added.`,
      );
    const base = Date.now();
    await tx.agentEvalCase.createMany({
      data: fresh.map((c, i) => ({
        id: newId('case_'),
        datasetId,
        source: c.source,
        conversationId: c.conversationId,
        messageId: c.messageId,
        userId: c.userId,
        rating: c.rating,
        reasons: c.reasons,
        model: c.model,
        toolsUsed: c.toolsUsed,
        data: c.data as unknown as Prisma.InputJsonValue,
        // Cases keep the order they were added in.
        createdAt: new Date(base + i),
      })),
    });
    return fresh.length;
  });
}

const CASE_SUMMARY = {
  id: true,
  source: true,
  conversationId: true,
  messageId: true,
  userId: true,
  rating: true,
  reasons: true,
  model: true,
  toolsUsed: true,
  expectations: true,
  createdAt: true,
} as const;

export function listCases(prisma: PrismaClient, datasetId: string) {
  return prisma.agentEvalCase.findMany({
    where: { datasetId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { ...CASE_SUMMARY, data: true },
  });
}

export function casesToRun(prisma: PrismaClient, datasetId: string) {
  return prisma.agentEvalCase.findMany({
    where: { datasetId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    select: { id: true, userId: true, conversationId: true, data: true, expectations: true },
  });
}

export function countCases(prisma: PrismaClient, datasetId: string) {
  return prisma.agentEvalCase.count({ where: { datasetId } });
}

export async function setCaseExpectations(
  prisma: PrismaClient,
  input: { projectId: string; caseId: string; expectations: unknown[] },
): Promise<boolean> {
  const done = await prisma.agentEvalCase.updateMany({
    where: { id: input.caseId, dataset: { projectId: input.projectId } },
    data: { expectations: input.expectations as Prisma.InputJsonValue },
  });
  return done.count > 0;
}

export async function deleteCase(prisma: PrismaClient, projectId: string, caseId: string): Promise<boolean> {
  return (await prisma.agentEvalCase.deleteMany({ where: { id: caseId, dataset: { projectId } } })).count > 0;
}

// ------------------------------------------------------------------------------------------------
// What cases are built from
// ------------------------------------------------------------------------------------------------

const DAY_MS = 86_400_000;

/** The project's ratings the filters select (rating, reasons, when rated), oldest first. */
export function ratedAnswers(prisma: PrismaClient, projectId: string, filter: EvalCaseFilter, take: number) {
  const from = filter.from ? new Date(`${filter.from}T00:00:00.000Z`) : undefined;
  const before = filter.to ? new Date(new Date(`${filter.to}T00:00:00.000Z`).getTime() + DAY_MS) : undefined;
  return prisma.agentFeedback.findMany({
    where: {
      conversation: { projectId, deletedAt: null },
      ...(from || before ? { updatedAt: { ...(from ? { gte: from } : {}), ...(before ? { lt: before } : {}) } } : {}),
      ...(filter.rating ? { value: filter.rating } : {}),
      ...(filter.reasons?.length ? { AND: [{ value: -1 }, { reasons: { hasSome: filter.reasons } }] } : {}),
    },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take,
    select: { conversationId: true, messageId: true, userId: true, value: true, reasons: true, comment: true },
  });
}

/** One rating of a message, when there is one. */
export function ratingOf(prisma: PrismaClient, conversationId: string, messageId: string) {
  return prisma.agentFeedback.findFirst({
    where: { conversationId, messageId },
    select: { value: true, reasons: true, comment: true },
  });
}

/** A conversation of the project (not deleted) and its owner, or null. */
export function projectConversation(prisma: PrismaClient, projectId: string, conversationId: string) {
  return prisma.agentConversation.findFirst({
    where: { id: conversationId, projectId, deletedAt: null },
    select: { id: true, userId: true },
  });
}

/** The page each run was asked from (stored with the run), by run id. */
export async function pageContextsOf(prisma: PrismaClient, runIds: readonly string[]): Promise<Map<string, unknown>> {
  if (!runIds.length) return new Map();
  const rows = await prisma.agentRun.findMany({
    where: { id: { in: [...runIds] } },
    select: { id: true, input: true },
  });
  return new Map(rows.map((r) => [r.id, (r.input as { pageContext?: unknown } | null)?.pageContext]));
}

/** Which of these users are members of the project. */
export async function membersAmong(prisma: PrismaClient, projectId: string, userIds: readonly string[]) {
  const rows = await prisma.projectMembership.findMany({
    where: { projectId, userId: { in: [...userIds] } },
    select: { userId: true },
  });
  return new Set(rows.map((r) => r.userId));
}

// ------------------------------------------------------------------------------------------------
// Experiments
// ------------------------------------------------------------------------------------------------

export async function insertExperiment(
  prisma: PrismaClient,
  input: {
    id: string;
    datasetId: string;
    projectId: string;
    candidate: EvalCandidate;
    systemPromptVersion: string;
    total: number;
    owner: string;
    userId: string | null;
  },
): Promise<void> {
  try {
    await prisma.agentEvalExperiment.create({
      data: {
        id: input.id,
        datasetId: input.datasetId,
        projectId: input.projectId,
        name: input.candidate.name,
        candidate: input.candidate as unknown as Prisma.InputJsonValue,
        systemPromptVersion: input.systemPromptVersion,
        total: input.total,
        owner: input.owner,
        createdById: input.userId,
      },
    });
  } catch (err) {
    if (isUnique(err) || String((err as Error).message).includes('AgentEvalExperiment_one_running_per_dataset'))
      throw new EvalRefusal('EXPERIMENT_RUNNING', 'An experiment of this dataset is already running.', 'CONFLICT');
    throw err;
  }
}

/** Whether Stop was asked for (from any instance). */
export async function stopWasRequested(prisma: PrismaClient, experimentId: string): Promise<boolean> {
  const row = await prisma.agentEvalExperiment.findUnique({
    where: { id: experimentId },
    select: { stopRequested: true },
  });
  return row?.stopRequested !== false;
}

/** One case's result and the experiment's counters, together. */
export async function recordResult(prisma: PrismaClient, experimentId: string, result: EvalCaseResult): Promise<void> {
  await prisma.$transaction([
    prisma.agentEvalResult.create({
      data: {
        id: newId('res_'),
        experimentId,
        caseId: result.caseId,
        outcome: result.outcome,
        passed: result.passed,
        result: result as unknown as Prisma.InputJsonValue,
      },
    }),
    prisma.$executeRaw`UPDATE "AgentEvalExperiment" SET
      "done" = "done" + 1,
      "passed" = "passed" + ${result.passed ? 1 : 0},
      "errored" = "errored" + ${result.outcome === 'error' ? 1 : 0},
      "inputTokens" = "inputTokens" + ${result.usage.inputTokens ?? 0},
      "outputTokens" = "outputTokens" + ${result.usage.outputTokens ?? 0},
      "costUsd" = CASE WHEN ${result.usage.costUsd ?? null}::float8 IS NULL THEN "costUsd"
        ELSE COALESCE("costUsd", 0) + ${result.usage.costUsd ?? null}::float8 END,
      "heartbeatAt" = ${NOW}
      WHERE "id" = ${experimentId}`,
  ]);
}

export async function heartbeat(prisma: PrismaClient, experimentId: string): Promise<void> {
  await prisma.$executeRaw`UPDATE "AgentEvalExperiment" SET "heartbeatAt" = ${NOW}
    WHERE "id" = ${experimentId} AND "status" = 'RUNNING'`;
}

export async function finishExperiment(
  prisma: PrismaClient,
  experimentId: string,
  end: { status: 'COMPLETED' | 'STOPPED' | 'FAILED'; errorCode?: string },
): Promise<void> {
  await prisma.$executeRaw`UPDATE "AgentEvalExperiment" SET "status" = ${end.status}::"AgentEvalStatus",
    "errorCode" = ${end.errorCode ?? null}, "finishedAt" = ${NOW}
    WHERE "id" = ${experimentId} AND "status" = 'RUNNING'`;
}

/** Stop: recorded for the instance running it (it stops before its next case). False: not running. */
export async function requestStop(prisma: PrismaClient, projectId: string, experimentId: string): Promise<boolean> {
  const done = await prisma.agentEvalExperiment.updateMany({
    where: { id: experimentId, projectId, status: 'RUNNING' },
    data: { stopRequested: true },
  });
  return done.count > 0;
}

/**
 * Experiments whose instance stopped beating (it went away mid-run) end FAILED with
 * EXPERIMENT_LOST: their results so far are kept, and the dataset may run again.
 */
export async function closeLostExperiments(prisma: PrismaClient, projectId: string, staleSeconds: number) {
  await prisma.$executeRaw`UPDATE "AgentEvalExperiment" SET "status" = 'FAILED', "errorCode" = 'EXPERIMENT_LOST',
    "finishedAt" = ${NOW}
    WHERE "projectId" = ${projectId} AND "status" = 'RUNNING'
      AND "heartbeatAt" < ${NOW} - make_interval(secs => ${staleSeconds})`;
}

const EXPERIMENT = {
  id: true,
  datasetId: true,
  name: true,
  candidate: true,
  systemPromptVersion: true,
  status: true,
  total: true,
  done: true,
  passed: true,
  errored: true,
  inputTokens: true,
  outputTokens: true,
  costUsd: true,
  stopRequested: true,
  errorCode: true,
  startedAt: true,
  finishedAt: true,
} as const;

export function listExperiments(prisma: PrismaClient, datasetId: string) {
  return prisma.agentEvalExperiment.findMany({
    where: { datasetId },
    orderBy: { startedAt: 'desc' },
    select: EXPERIMENT,
  });
}

export function findExperiment(prisma: PrismaClient, projectId: string, experimentId: string) {
  return prisma.agentEvalExperiment.findFirst({ where: { id: experimentId, projectId }, select: EXPERIMENT });
}

export function experimentResults(prisma: PrismaClient, experimentId: string) {
  return prisma.agentEvalResult.findMany({
    where: { experimentId },
    orderBy: [{ case: { createdAt: 'asc' } }, { caseId: 'asc' }],
    select: { caseId: true, outcome: true, passed: true, result: true },
  });
}

// ------------------------------------------------------------------------------------------------
// The key an experiment's read tools run with
// ------------------------------------------------------------------------------------------------

/**
 * A short-lived key bound to the case's user (the MCP server reads their current role for every
 * call), audited under the experiment's id. Revoked when the case ends.
 */
export async function insertExperimentKey(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; experimentId: string; ttlSeconds: number },
): Promise<{ id: string; secret: string }> {
  const { row, secret } = agentKeyMaterial(input.experimentId, input.ttlSeconds);
  await prisma.apiKey.create({
    data: {
      id: row.id,
      kind: 'IN_APP_AGENT',
      name: `assistant experiment ${input.experimentId}`,
      publicKey: row.publicKey,
      secretHash: row.secretHash,
      projectId: input.projectId,
      userId: input.userId,
      runId: input.experimentId,
      expiresAt: new Date(Date.now() + input.ttlSeconds * 1000),
    },
  });
  return { id: row.id, secret };
}

/** Each case's question (the user's message), by case id: what the result pages name cases by. */
export async function caseQuestions(prisma: PrismaClient, datasetId: string): Promise<Record<string, string>> {
  const rows = await prisma.agentEvalCase.findMany({ where: { datasetId }, select: { id: true, data: true } });
  return Object.fromEntries(
    rows.map((r) => [r.id, String((r.data as { userMessage?: { text?: unknown } } | null)?.userMessage?.text ?? '')]),
  );
}
