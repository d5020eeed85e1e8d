/**
 * Tracker domain services: the single implementation of every project operation, shared by the
 * tRPC router and the MCP tools (pages read through the router's procedures). One file per entity:
 * projects.ts, issues.ts, comments.ts, labels.ts, members.ts, api-keys.ts; this file holds what
 * they share. Each function takes `(prisma, projectId, input[, actor])` and validates `input` with
 * the zod schema exported beside it (invalid input becomes BAD_REQUEST with appCode INVALID_INPUT,
 * never a 500).
 *
 * Services do NOT check authorization: callers (tRPC procedures, MCP tools) do that first with
 * `hasProjectAccess`. Every query is bound to `projectId`, so an issue number, member id or key id
 * of another project is simply "not found".
 *
 * Stable appCodes thrown by the services: INVALID_INPUT, PROJECT_NOT_FOUND, ISSUE_NOT_FOUND,
 * USER_NOT_FOUND, NOT_A_MEMBER, ALREADY_MEMBER, LABEL_NOT_FOUND, LAST_OWNER, KEY_NOT_FOUND.
 */
import { z } from 'zod';
import type { Prisma, PrismaClient } from '@/generated/prisma/client';
import { appError } from '@/server/trpc';
import type { IssueStatus } from '../constants';

export const MAX_PAGE_SIZE = 100;
/** An issue's per-project number (#N), as every issue and comment operation takes it. */
export const IssueNumberSchema = z.number().int().min(1).max(10_000_000);

/** One page of a list paged in the database. */
export const PageInput = z
  .object({
    offset: z.number().int().min(0).max(1_000_000),
    limit: z.number().int().min(1).max(MAX_PAGE_SIZE),
  })
  .strict();
export type PageInput = z.input<typeof PageInput>;

/**
 * Reads one page and the total at once: `count` counts every row, `rows` reads the page with the
 * `skip` and `take` it is given.
 */
export async function countedPage<T>(
  raw: PageInput,
  count: () => Promise<number>,
  rows: (page: { skip: number; take: number }) => Promise<T[]>,
): Promise<{ rows: T[]; total: number }> {
  const input = parseInput(PageInput, raw);
  const [total, found] = await Promise.all([count(), rows({ skip: input.offset, take: input.limit })]);
  return { rows: found, total };
}

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

export type Db = PrismaClient | Prisma.TransactionClient;

/** The transactions `withTransaction` opened that are still running (their clients). */
const openTransactions = new WeakSet<object>();

/**
 * Runs `fn` in a transaction whose client the services recognise: a service given that client runs
 * inside it instead of opening its own (an MCP tool call that records itself in the tool-call
 * ledger in the same transaction as its change: mcp/ledger.ts).
 */
export function withTransaction<T>(
  prisma: PrismaClient,
  fn: (db: PrismaClient) => Promise<T>,
  opts?: { maxWait?: number; timeout?: number },
): Promise<T> {
  return prisma.$transaction(async (tx) => {
    openTransactions.add(tx);
    try {
      return await fn(tx as unknown as PrismaClient);
    } finally {
      openTransactions.delete(tx);
    }
  }, opts);
}

/** Runs `fn` in a transaction, or in the caller's when `db` is one `withTransaction` opened. */
export function inTransaction<T>(db: PrismaClient, fn: (tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
  return openTransactions.has(db) ? fn(db as unknown as Prisma.TransactionClient) : db.$transaction(fn);
}

/** The issue an operation targets (id and status); ISSUE_NOT_FOUND when the project has no such number. */
export async function requireIssue(
  db: Db,
  projectId: string,
  number: number,
): Promise<{ id: string; status: IssueStatus }> {
  const issue = await db.issue.findUnique({
    where: { projectId_number: { projectId, number } },
    select: { id: true, status: true },
  });
  if (!issue) throw appError('NOT_FOUND', 'ISSUE_NOT_FOUND', `Issue #${number} not found.`);
  return issue;
}
