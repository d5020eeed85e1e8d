/**
 * The headless experiment (`npm run eval -- --dataset <name> --candidate <file>`): the same run as
 * the studio's, stored with the dataset's experiments, then a JSON report on stdout. Exit codes:
 * 0 every case passed; 1 a case failed an expectation or could not be answered, or the experiment
 * did not complete; 2 the command was wrong (arguments, candidate file, dataset).
 */
import { readFile } from 'node:fs/promises';
import type { PrismaClient } from '../host';
import { EvalCandidateSchema, EvalCaseResultSchema, type EvalReport } from '../eval/schema';
import { datasetsNamed, EvalRefusal, experimentResults, findExperiment } from './eval-store';
import { startExperiment, SYSTEM_PROMPT_VERSION } from './eval-runner';
import type { RunDeps } from './run-deps';

const USAGE = 'Usage: npm run eval -- --dataset <name> --candidate <file.json> [--project <projectId>]';

function parseArgs(argv: readonly string[]): { dataset: string; candidate: string; project?: string } | string {
  const out: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (!['--dataset', '--candidate', '--project'].includes(flag)) return `Unknown argument ${flag}. ${USAGE}`;
    const value = argv[i + 1];
    if (!value || value.startsWith('--')) return `${flag} needs a value. ${USAGE}`;
    out[flag.slice(2)] = value;
    i++;
  }
  if (!out.dataset || !out.candidate) return USAGE;
  return { dataset: out.dataset, candidate: out.candidate, ...(out.project ? { project: out.project } : {}) };
}

export interface EvalCommandIo {
  prisma: PrismaClient;
  out: (text: string) => void;
  err: (text: string) => void;
  /** The run's dependencies (tests pass their own; else as the process's handler would make them). */
  deps?: RunDeps;
}

/** Runs the command; resolves to its exit code. */
export async function runEvalCommand(argv: readonly string[], io: EvalCommandIo): Promise<number> {
  const args = parseArgs(argv);
  if (typeof args === 'string') {
    io.err(`${args}\n`);
    return 2;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(args.candidate, 'utf8'));
  } catch (err) {
    io.err(`The candidate file ${args.candidate} could not be read as JSON: ${(err as Error).message}\n`);
    return 2;
  }
  const candidate = EvalCandidateSchema.safeParse(raw);
  if (!candidate.success) {
    const issue = candidate.error.issues[0];
    io.err(
      `The candidate file is not a candidate: ${issue?.path.join('.') || '(file)'} ${issue?.message ?? 'invalid'}\n`,
    );
    return 2;
  }
  const found = (await datasetsNamed(io.prisma, args.dataset)).filter(
    (d) => !args.project || d.projectId === args.project,
  );
  if (found.length !== 1) {
    io.err(
      found.length
        ? `Several projects have a dataset named "${args.dataset}": name one with --project.\n`
        : `No dataset named "${args.dataset}"${args.project ? ' in that project' : ''}.\n`,
    );
    return 2;
  }
  const dataset = found[0]!;
  let started: Awaited<ReturnType<typeof startExperiment>>;
  try {
    started = await startExperiment(
      io.prisma,
      { projectId: dataset.projectId, datasetId: dataset.id, candidate: candidate.data, userId: null },
      ...(io.deps ? [io.deps] : []),
    );
  } catch (err) {
    if (err instanceof EvalRefusal) {
      io.err(`${err.code}: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const status = await started.done;
  const experiment = await findExperiment(io.prisma, dataset.projectId, started.experimentId);
  const cases = (await experimentResults(io.prisma, started.experimentId)).flatMap((r) => {
    const parsed = EvalCaseResultSchema.safeParse(r.result);
    return parsed.success ? [parsed.data] : [];
  });
  const report: EvalReport = {
    format: 'in-app-agent.eval-report',
    version: 1,
    dataset: dataset.name,
    experimentId: started.experimentId,
    candidate: candidate.data.name,
    systemPromptVersion: SYSTEM_PROMPT_VERSION,
    status,
    totals: {
      cases: cases.length,
      passed: cases.filter((c) => c.passed).length,
      failedExpectations: cases.reduce((n, c) => n + c.expectations.filter((e) => !e.passed).length, 0),
      errors: cases.filter((c) => c.outcome === 'error').length,
      inputTokens: experiment?.inputTokens ?? 0,
      outputTokens: experiment?.outputTokens ?? 0,
      costUsd: experiment?.costUsd ?? null,
    },
    cases,
  };
  io.out(`${JSON.stringify(report, null, 2)}\n`);
  return status === 'COMPLETED' && cases.every((c) => c.passed) ? 0 : 1;
}
