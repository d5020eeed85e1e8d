/**
 * Cases of a dataset, built from what the review studio shows: a turn of a conversation (its
 * history up to the user's message, the page it was asked from, the answer with its tool calls,
 * results and approvals, its rating) or a line of a feedback export file. Conversations are
 * replayed once each, masked as every export is.
 */
import type { PrismaClient } from '../host';
import {
  FEEDBACK_REASONS,
  ModelInfoSchema,
  normalizeFeedbackReasons,
  PageContextSchema,
  type ConversationView,
  type FeedbackReason,
  type ViewMessage,
} from '../schema';
import {
  EVAL_LIMITS,
  EvalImportLineSchema,
  type EvalCaseData,
  type EvalCaseFilter,
  type EvalToolCall,
} from '../eval/schema';
import { maskOptionsOf } from './data-policy';
import { type NewCase, membersAmong, pageContextsOf, projectConversation, ratedAnswers, ratingOf } from './eval-store';
import { EvalRefusal } from './eval-store';
import { replayConversation } from './persistence';
import { type MaskOptions, maskDeep } from './redaction';

function parseJson(s: string | undefined): unknown {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return { text: s };
  }
}

function argsOf(s: string): Record<string, unknown> {
  const v = parseJson(s || '{}');
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

type Rating = { value: number; reasons: string[]; comment: string | null } | null;

/**
 * The turn that ends with (or holds) the assistant message `messageId`: the messages before its
 * user message are the history; the answer runs to the next user message. Null when the message is
 * not an assistant message of the shown path.
 */
function turnCase(view: ConversationView, messageId: string, runPages: Map<string, unknown>, rating: Rating) {
  const at = view.messages.findIndex((m) => m.id === messageId && m.role === 'assistant');
  if (at < 0) return null;
  const u = view.messages.slice(0, at).findLastIndex((m) => m.role === 'user');
  if (u < 0) return null;
  const user = view.messages[u] as Extract<ViewMessage, { role: 'user' }>;
  const nextUser = view.messages.findIndex((m, i) => i > at && m.role === 'user');
  const answer = view.messages.slice(u + 1, nextUser < 0 ? undefined : nextUser);
  const results = new Map<string, string>();
  for (const m of answer) if (m.role === 'tool') results.set(m.toolCallId, m.content);
  const toolCalls: EvalToolCall[] = answer.flatMap((m) =>
    m.role === 'assistant'
      ? m.toolCalls.map((tc) => {
          const result = results.get(tc.id) ?? tc.result;
          const decision = view.decisions[tc.id]?.decision;
          return {
            id: tc.id,
            name: tc.name,
            args: argsOf(tc.args),
            ...(result !== undefined ? { result: parseJson(result) } : {}),
            ...(decision ? { decision } : {}),
          };
        })
      : [],
  );
  const history = view.messages.slice(0, u);
  const historyCalls = new Set(history.flatMap((m) => (m.role === 'assistant' ? m.toolCalls.map((t) => t.id) : [])));
  const turnRuns = new Set(answer.map((m) => m.runId));
  const runs = view.runs.filter((r) => r.runId === user.runId || turnRuns.has(r.runId));
  const model = runs.find((r) => r.model)?.model;
  const usage = runs.reduce(
    (sum, r) => ({
      inputTokens: (sum.inputTokens ?? 0) + (r.usage?.inputTokens ?? 0),
      outputTokens: (sum.outputTokens ?? 0) + (r.usage?.outputTokens ?? 0),
      ...(r.usage?.costUsd !== undefined || sum.costUsd !== undefined
        ? { costUsd: (sum.costUsd ?? 0) + (r.usage?.costUsd ?? 0) }
        : {}),
    }),
    {} as { inputTokens?: number; outputTokens?: number; costUsd?: number },
  );
  const page = PageContextSchema.safeParse(runPages.get(user.runId) ?? {});
  const reasons = normalizeFeedbackReasons(rating?.value === -1 ? rating.reasons : []);
  const data: EvalCaseData = {
    history,
    decisions: Object.fromEntries(Object.entries(view.decisions).filter(([id]) => historyCalls.has(id))),
    userMessage: { text: user.content, ...(user.parts ? { parts: user.parts } : {}) },
    pageContext: page.success ? page.data : {},
    original: {
      answer: answer.flatMap((m) => (m.role === 'assistant' && m.content.trim() ? [m.content] : [])).join('\n\n'),
      toolCalls,
      model: model ? { provider: model.provider, modelId: model.modelId } : null,
      usage: runs.some((r) => r.usage) ? usage : null,
    },
    rating: rating ? (rating.value < 0 ? -1 : 1) : null,
    reasons,
    comment: rating?.comment ?? null,
  };
  return data;
}

function toNewCase(
  data: EvalCaseData,
  source: NewCase['source'],
  ids: { conversationId: string | null; messageId: string; userId: string },
): NewCase {
  return {
    source,
    ...ids,
    rating: data.rating,
    reasons: data.reasons,
    model: data.original.model?.modelId ?? null,
    toolsUsed: [...new Set(data.original.toolCalls.map((c) => c.name))],
    data,
  };
}

/** Conversations replayed (once each) with the pages their runs were asked from. */
class Replays {
  private readonly views = new Map<string, { view: ConversationView; pages: Map<string, unknown> }>();
  constructor(
    private readonly prisma: PrismaClient,
    private readonly mask: MaskOptions,
  ) {}

  async of(conversationId: string) {
    let got = this.views.get(conversationId);
    if (!got) {
      // Masked as every export is (rows stored before masking existed included).
      const view = maskDeep(await replayConversation(this.prisma, conversationId), this.mask);
      const runIds = [...new Set(view.messages.flatMap((m) => (m.role === 'user' ? [m.runId] : [])))];
      got = { view, pages: await pageContextsOf(this.prisma, runIds) };
      this.views.set(conversationId, got);
    }
    return got;
  }
}

/** Whether a case passes the filters that are read from its answer (tools used, model). */
function passesAnswerFilters(c: NewCase, filter: EvalCaseFilter): boolean {
  if (filter.tools?.length && !filter.tools.some((t) => c.toolsUsed.includes(t))) return false;
  if (filter.model && c.model !== filter.model) return false;
  return true;
}

/** Rated answers of the project the filters select, as cases (at most `maxCasesPerAdd`). */
export async function casesFromRatings(
  prisma: PrismaClient,
  projectId: string,
  filter: EvalCaseFilter,
): Promise<NewCase[]> {
  const replays = new Replays(prisma, await maskOptionsOf(prisma, projectId));
  // Ratings are read in a bounded window: the answer filters (tools, model) drop some of them.
  const rows = await ratedAnswers(prisma, projectId, filter, EVAL_LIMITS.maxCasesPerAdd * 5);
  const out: NewCase[] = [];
  for (const row of rows) {
    if (out.length >= EVAL_LIMITS.maxCasesPerAdd) break;
    const { view, pages } = await replays.of(row.conversationId);
    const data = turnCase(view, row.messageId, pages, {
      value: row.value,
      reasons: row.reasons,
      comment: row.comment,
    });
    if (!data) continue;
    const c = toNewCase(data, 'conversation', {
      conversationId: row.conversationId,
      messageId: row.messageId,
      userId: row.userId,
    });
    if (passesAnswerFilters(c, filter)) out.push(c);
  }
  return out;
}

/**
 * One turn of a conversation as a case (`messageId`: an answer of it), or every turn of the
 * conversation when no message is named. Refused CONVERSATION_NOT_FOUND / MESSAGE_NOT_FOUND.
 */
export async function casesFromConversation(
  prisma: PrismaClient,
  projectId: string,
  conversationId: string,
  messageId?: string,
): Promise<NewCase[]> {
  const conversation = await projectConversation(prisma, projectId, conversationId);
  if (!conversation) throw new EvalRefusal('CONVERSATION_NOT_FOUND', 'Conversation not found.', 'NOT_FOUND');
  const { view, pages } = await new Replays(prisma, await maskOptionsOf(prisma, projectId)).of(conversationId);
  // A turn's answer is its last assistant message before the next user message.
  const answers: string[] = [];
  for (let i = 0; i < view.messages.length; i++) {
    const m = view.messages[i]!;
    if (m.role !== 'assistant') continue;
    const next = view.messages.slice(i + 1).find((n) => n.role !== 'tool');
    if (!next || next.role === 'user') answers.push(m.id);
  }
  const chosen = messageId ? answers.filter((id) => id === messageId) : answers;
  if (messageId && !chosen.length) {
    // Any assistant message of a turn names that turn.
    if (!view.messages.some((m) => m.id === messageId && m.role === 'assistant'))
      throw new EvalRefusal('MESSAGE_NOT_FOUND', 'That answer is not in the conversation.', 'NOT_FOUND');
    chosen.push(messageId);
  }
  const out: NewCase[] = [];
  for (const id of chosen.slice(0, EVAL_LIMITS.maxCasesPerAdd)) {
    const rating = await ratingOf(prisma, conversationId, id);
    const data = turnCase(view, id, pages, rating);
    if (data) out.push(toNewCase(data, 'conversation', { conversationId, messageId: id, userId: conversation.userId }));
  }
  return out;
}

/** A line of an import that was not taken, and why. */
export interface ImportProblem {
  line: number;
  code: 'INVALID_LINE' | 'NOT_A_MEMBER' | 'NO_USER_MESSAGE';
  message: string;
}

/**
 * The lines of a feedback export file (JSONL) as cases: each line's conversation up to its rated
 * answer. A line that does not parse, has no user message, or names a user who is not a member of
 * this project (their tools would have no role to run with) is reported, not taken.
 */
export async function casesFromExport(
  prisma: PrismaClient,
  projectId: string,
  text: string,
): Promise<{ cases: NewCase[]; problems: ImportProblem[] }> {
  const problems: ImportProblem[] = [];
  const parsed: Array<{ line: number; value: ReturnType<typeof EvalImportLineSchema.parse> }> = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    if (!raw.trim()) return;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      problems.push({ line: i + 1, code: 'INVALID_LINE', message: 'Not JSON.' });
      return;
    }
    const line = EvalImportLineSchema.safeParse(json);
    if (!line.success) {
      const issue = line.error.issues[0];
      problems.push({
        line: i + 1,
        code: 'INVALID_LINE',
        message: `Not a feedback export line: ${issue?.path.join('.') || '(line)'} ${issue?.message ?? 'invalid'}`,
      });
      return;
    }
    parsed.push({ line: i + 1, value: line.data });
  });
  if (parsed.length > EVAL_LIMITS.maxCasesPerAdd)
    throw new EvalRefusal('IMPORT_TOO_LARGE', `An import takes at most ${EVAL_LIMITS.maxCasesPerAdd} lines at a time.`);
  const members = await membersAmong(prisma, projectId, [...new Set(parsed.map((p) => p.value.userId))]);
  const cases: NewCase[] = [];
  for (const { line, value } of parsed) {
    if (!members.has(value.userId)) {
      problems.push({
        line,
        code: 'NOT_A_MEMBER',
        message: 'Its user is not a member of this project, so its tools have no role to run with.',
      });
      continue;
    }
    const view: ConversationView = { threadId: null, messages: [], runs: [], decisions: {}, navigations: [] };
    const runId = `import_${line}`;
    value.messages.forEach((m, i) => {
      const id = i === value.messages.length - 1 ? value.messageId : `${value.messageId}_${i}`;
      if (m.role === 'user') view.messages.push({ id, role: 'user', content: m.content, runId });
      else if (m.role === 'tool')
        view.messages.push({ id, role: 'tool', toolCallId: m.tool_call_id, content: m.content, runId });
      else
        view.messages.push({
          id,
          role: 'assistant',
          content: m.content,
          runId,
          streaming: false,
          toolCalls: (m.tool_calls ?? []).map((tc) => ({
            id: tc.id,
            name: tc.function.name,
            args: tc.function.arguments,
            status: 'done' as const,
          })),
        });
    });
    const model = value.model
      ? ModelInfoSchema.safeParse({
          provider: value.model.provider,
          modelId: value.model.id,
          label: value.model.label,
          demo: value.model.provider === 'demo',
        })
      : null;
    if (model?.success) view.runs.push({ runId, status: 'completed', interrupts: [], model: model.data });
    const data = turnCase(view, value.messageId, new Map(), {
      value: value.rating,
      reasons: value.reasons.filter((r): r is FeedbackReason => (FEEDBACK_REASONS as readonly string[]).includes(r)),
      comment: value.comment,
    });
    if (!data) {
      problems.push({ line, code: 'NO_USER_MESSAGE', message: 'The rated answer has no user message before it.' });
      continue;
    }
    cases.push(toNewCase(data, 'export', { conversationId: null, messageId: value.messageId, userId: value.userId }));
  }
  return { cases, problems: problems.sort((a, b) => a.line - b.line) };
}
