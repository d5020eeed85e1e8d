/**
 * Rated answers as an evaluation dataset: `GET /api/projects/:projectId/in-app-agent/feedback-export`
 * streams JSONL, one line per rated answer (FeedbackExportLineSchema in ../schema.ts): the
 * conversation up to and including the rated answer in chat-message form, the rating, reasons,
 * comment, who rated, the model and timestamps. Owners and admins only (`agent:review`).
 *
 * Ratings are read a page at a time and each page's conversations are replayed once, only when the
 * client asks for more (a pull stream): a large project is never loaded at once, and a client that
 * goes away stops the reading.
 */
import 'server-only';
import { TRPCError } from '@trpc/server';
import {
  type AgentFeedback,
  getPrisma,
  getSessionUser,
  hasProjectAccess,
  loadProjectAccess,
  log,
  type Prisma,
  type PrismaClient,
  type ProjectAccess,
} from '../host';
import type { AgentErrorCode } from '../error-codes';
import {
  FEEDBACK_EXPORT_FORMAT,
  FEEDBACK_EXPORT_VERSION,
  FeedbackExportQuerySchema,
  normalizeFeedbackReasons,
  type ConversationView,
  type ExportMessage,
  type FeedbackExportLine,
  type FeedbackExportQuery,
  type ViewMessage,
} from '../schema';
import { maskOptionsOf } from './data-policy';
import { replayConversation } from './persistence';
import { type MaskOptions, maskDeep } from './redaction';

/** Ratings read (and conversations replayed at most) per page. */
const FEEDBACK_EXPORT_PAGE_SIZE = 100;

const JSON_HEADERS = { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' };

function errorResponse(status: number, code: AgentErrorCode, message: string): Response {
  return new Response(JSON.stringify({ error: { code, message } }), { status, headers: JSON_HEADERS });
}

/** The query string as the export's filters: empty values (an unfilled form field) are absent. */
function parseExportQuery(
  params: URLSearchParams,
): { ok: true; query: FeedbackExportQuery } | { ok: false; message: string } {
  const raw: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key).filter((v) => v !== '');
    if (values.length === 0) continue;
    // `reason` may repeat (any of them); every other filter is given once.
    raw[key] = key === 'reason' ? values : values.length === 1 ? values[0]! : values;
  }
  const parsed = FeedbackExportQuerySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
    const what =
      issue?.code === 'unrecognized_keys'
        ? `unknown parameter(s) ${issue.keys.join(', ')}`
        : (issue?.message ?? 'invalid');
    return { ok: false, message: `Invalid export filter. ${where}${what}` };
  }
  const window = timeWindow(parsed.data);
  if (window.from && window.before && window.from >= window.before) {
    return { ok: false, message: 'Invalid export filter. from must not be after to.' };
  }
  return { ok: true, query: parsed.data };
}

const DAY_MS = 86_400_000;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** `from` inclusive; `to` inclusive, as an exclusive bound (a date means the whole day, UTC). */
function timeWindow(q: FeedbackExportQuery): { from?: Date; before?: Date } {
  const from = q.from ? new Date(DATE_ONLY.test(q.from) ? `${q.from}T00:00:00.000Z` : q.from) : undefined;
  const to = q.to ? new Date(DATE_ONLY.test(q.to) ? `${q.to}T00:00:00.000Z` : q.to) : undefined;
  const before = to ? new Date(to.getTime() + (DATE_ONLY.test(q.to!) ? DAY_MS : 1)) : undefined;
  return { ...(from ? { from } : {}), ...(before ? { before } : {}) };
}

function feedbackWhere(projectId: string, q: FeedbackExportQuery): Prisma.AgentFeedbackWhereInput {
  const { from, before } = timeWindow(q);
  return {
    conversation: { projectId },
    ...(from || before ? { updatedAt: { ...(from ? { gte: from } : {}), ...(before ? { lt: before } : {}) } } : {}),
    ...(q.rating ? { value: Number(q.rating) } : {}),
    // Reasons belong to thumbs down only; "any of" the reasons asked for.
    ...(q.reason?.length ? { AND: [{ value: -1 }, { reasons: { hasSome: q.reason } }] } : {}),
  };
}

/** The view's messages in the chat format evaluation tools read. */
function toExportMessages(messages: readonly ViewMessage[]): ExportMessage[] {
  return messages.map((m): ExportMessage => {
    if (m.role === 'user') return { role: 'user', content: m.content };
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.toolCallId, content: m.content };
    const calls = m.toolCalls.map((tc) => ({
      id: tc.id,
      type: 'function' as const,
      function: { name: tc.name, arguments: tc.args || '{}' },
    }));
    return { role: 'assistant', content: m.content, ...(calls.length ? { tool_calls: calls } : {}) };
  });
}

type RunTimes = Map<string, { startedAt: Date; finishedAt: Date | null }>;

/** One export line, or null when the rated answer is not in the replay (e.g. unreadable rows). */
function exportLine(
  row: AgentFeedback,
  projectId: string,
  view: ConversationView,
  runs: RunTimes,
): FeedbackExportLine | null {
  const at = view.messages.findIndex((m) => m.id === row.messageId && m.role === 'assistant');
  if (at < 0) return null;
  const answer = view.messages[at]!;
  const model = view.runs.find((r) => r.runId === answer.runId)?.model;
  const run = runs.get(answer.runId);
  return {
    format: FEEDBACK_EXPORT_FORMAT,
    version: FEEDBACK_EXPORT_VERSION,
    feedbackId: row.id,
    projectId,
    conversationId: row.conversationId,
    messageId: row.messageId,
    runId: answer.runId,
    userId: row.userId,
    rating: row.value < 0 ? -1 : 1,
    reasons: normalizeFeedbackReasons(row.reasons),
    comment: row.comment,
    model: model ? { provider: model.provider, id: model.modelId, label: model.label } : null,
    answerStartedAt: run ? run.startedAt.toISOString() : null,
    answerFinishedAt: run?.finishedAt ? run.finishedAt.toISOString() : null,
    ratedAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    messages: toExportMessages(view.messages.slice(0, at + 1)),
  };
}

/** The lines of one page of ratings: each conversation of the page is replayed once. */
async function pageLines(
  prisma: PrismaClient,
  projectId: string,
  rows: readonly AgentFeedback[],
  mask: MaskOptions,
): Promise<string> {
  const conversationIds = [...new Set(rows.map((r) => r.conversationId))];
  const views = new Map<string, ConversationView>();
  for (const id of conversationIds) views.set(id, await replayConversation(prisma, id));
  const runIds = [...new Set([...views.values()].flatMap((v) => v.messages.map((m) => m.runId)))];
  const runRows = await prisma.agentRun.findMany({
    where: { id: { in: runIds } },
    select: { id: true, startedAt: true, finishedAt: true },
  });
  const runs: RunTimes = new Map(runRows.map((r) => [r.id, r]));
  let text = '';
  for (const row of rows) {
    const line = exportLine(row, projectId, views.get(row.conversationId)!, runs);
    // Masked like stored text (rows stored before masking existed included).
    if (line) text += `${JSON.stringify(maskDeep(line, mask))}\n`;
    else
      log().warn(
        { event: 'feedback_export.message_missing', feedbackId: row.id, conversationId: row.conversationId },
        'a rated message is not in its conversation: left out of the export',
      );
  }
  return text;
}

/**
 * The export as a stream of JSONL text: the next page is read only when the consumer wants more.
 * Pages are walked by (createdAt, id), which a changed rating does not move, so no rating is
 * skipped or repeated while the export runs.
 */
function feedbackExportStream(
  prisma: PrismaClient,
  projectId: string,
  query: FeedbackExportQuery,
  mask: MaskOptions,
  pageSize = FEEDBACK_EXPORT_PAGE_SIZE,
): ReadableStream<Uint8Array> {
  const where = feedbackWhere(projectId, query);
  const encoder = new TextEncoder();
  let after: { createdAt: Date; id: string } | null = null;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // Keep reading until a page yields text or the ratings end: a pull that enqueues nothing
      // would not be called again, and the download would hang.
      for (;;) {
        const rows: AgentFeedback[] = await prisma.agentFeedback.findMany({
          where: after
            ? {
                AND: [
                  where,
                  {
                    OR: [{ createdAt: { gt: after.createdAt } }, { createdAt: after.createdAt, id: { gt: after.id } }],
                  },
                ],
              }
            : where,
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
          take: pageSize,
        });
        const last = rows.at(-1);
        if (!last) {
          controller.close();
          return;
        }
        after = { createdAt: last.createdAt, id: last.id };
        const text = await pageLines(prisma, projectId, rows, mask);
        if (text) controller.enqueue(encoder.encode(text));
        if (rows.length < pageSize) {
          controller.close();
          return;
        }
        if (text) return;
      }
    },
  });
}

export interface FeedbackExportHandlerOptions {
  /** Ratings per page (tests use small pages to cross page boundaries). */
  pageSize?: number;
}

type RouteContext = { params: Promise<{ projectId: string }> };

/** The route handler: session, project role (`agent:review`), filters, then the stream. */
export function createFeedbackExportHandler(opts: FeedbackExportHandlerOptions = {}) {
  // biome-ignore lint/correctness/noComponentHookFactories: a route handler named after its HTTP method, not a component
  return async function GET(req: Request, ctx: RouteContext): Promise<Response> {
    // A read with no side effects: no same-origin check, as for any page. Another site can make a
    // signed-in browser download the file, but never read it.
    const user = await getSessionUser(req);
    if (!user) return errorResponse(401, 'UNAUTHENTICATED', 'Sign in to export feedback.');
    const { projectId } = await ctx.params;
    const prisma = await getPrisma();
    let access: ProjectAccess;
    try {
      access = await loadProjectAccess(prisma, user, projectId);
    } catch (err) {
      if (err instanceof TRPCError && err.code === 'NOT_FOUND')
        return errorResponse(404, 'PROJECT_NOT_FOUND', 'Project not found.');
      throw err;
    }
    if (!hasProjectAccess(access, 'agent:review')) {
      return errorResponse(403, 'FORBIDDEN', 'Only owners and admins can export assistant feedback.');
    }
    const parsed = parseExportQuery(new URL(req.url).searchParams);
    if (!parsed.ok) return errorResponse(400, 'INVALID_REQUEST', parsed.message);

    const day = new Date().toISOString().slice(0, 10);
    const mask = await maskOptionsOf(prisma, projectId);
    return new Response(feedbackExportStream(prisma, projectId, parsed.query, mask, opts.pageSize), {
      status: 200,
      headers: {
        'content-type': 'application/x-ndjson; charset=utf-8',
        'content-disposition': `attachment; filename="assistant-feedback-${projectId}-${day}.jsonl"`,
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
      },
    });
  };
}
