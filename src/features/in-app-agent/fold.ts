/**
 * Folds AG-UI events into the conversation view the panel renders. The same reducer runs live in
 * the browser and over replayed events on the server, so what a user saw while streaming is what
 * they see after a reload (a property test checks replay(compact(stream)) == fold(stream)).
 * Pure and isomorphic: no Node or browser APIs.
 */
import { CUSTOM_EVENTS } from './constants';
import { QuestionAnsweredValueSchema } from './elicitation';
import {
  ApprovalDecidedValueSchema,
  ConversationViewSchema,
  MessagePartsValueSchema,
  ModelInfoSchema,
  NavigateValueSchema,
  ReferencesValueSchema,
  SuggestionsValueSchema,
  ResumedValueSchema,
  type AgentEvent,
  type ConversationView,
  type RunState,
  type ViewMessage,
} from './schema';

export function emptyView(threadId: string | null = null): ConversationView {
  return { threadId, messages: [], runs: [], decisions: {}, navigations: [] };
}

type Assistant = Extract<ViewMessage, { role: 'assistant' }>;

function currentRun(view: ConversationView): RunState | undefined {
  return view.runs[view.runs.length - 1];
}

function findAssistant(view: ConversationView, id: string): Assistant | undefined {
  for (let i = view.messages.length - 1; i >= 0; i--) {
    const m = view.messages[i]!;
    if (m.id === id) return m.role === 'assistant' ? m : undefined;
  }
  return undefined;
}

function findToolCall(view: ConversationView, toolCallId: string) {
  for (let i = view.messages.length - 1; i >= 0; i--) {
    const m = view.messages[i]!;
    if (m.role !== 'assistant') continue;
    const tc = m.toolCalls.find((t) => t.id === toolCallId);
    if (tc) return tc;
  }
  return undefined;
}

/** Ends whatever the run left open (a cancelled or failed run stops mid-message). */
function settleRun(view: ConversationView, runId: string): void {
  for (const m of view.messages) {
    if (m.role !== 'assistant' || m.runId !== runId) continue;
    m.streaming = false;
    for (const tc of m.toolCalls) if (tc.status === 'streaming') tc.status = 'called';
  }
}

/**
 * A run taken over by another instance keeps only what its stored steps hold: its other messages
 * and tool calls (the step that was cut off, results asked again) are dropped, to be streamed anew.
 */
function dropUnkept(
  view: ConversationView,
  runId: string,
  keep: { messageIds: string[]; toolCallIds: string[] },
): void {
  const messages = new Set(keep.messageIds);
  const calls = new Set(keep.toolCallIds);
  view.messages = view.messages.filter((m) => {
    if (m.runId !== runId) return true;
    if (m.role === 'assistant') {
      m.toolCalls = m.toolCalls.filter((tc) => calls.has(tc.id));
      return messages.has(m.id) || m.toolCalls.length > 0;
    }
    return messages.has(m.id);
  });
}

/** Applies one event in place and returns the view (callers that need immutability clone first). */
export function foldEvent(view: ConversationView, event: AgentEvent): ConversationView {
  const runId = currentRun(view)?.runId ?? '';
  switch (event.type) {
    case 'RUN_STARTED':
      view.threadId = event.threadId;
      view.runs.push({
        runId: event.runId,
        status: 'running',
        interrupts: [],
        ...(event.parentRunId ? { parentRunId: event.parentRunId } : {}),
      });
      break;
    case 'TEXT_MESSAGE_START':
      if (event.role === 'user') view.messages.push({ id: event.messageId, role: 'user', content: '', runId });
      else
        view.messages.push({
          id: event.messageId,
          role: 'assistant',
          content: '',
          runId,
          streaming: true,
          toolCalls: [],
        });
      break;
    case 'TEXT_MESSAGE_CONTENT': {
      const m = view.messages.findLast((x) => x.id === event.messageId);
      if (m && m.role !== 'tool') m.content += event.delta;
      break;
    }
    case 'TEXT_MESSAGE_END': {
      const m = findAssistant(view, event.messageId);
      if (m) m.streaming = false;
      break;
    }
    case 'TOOL_CALL_START': {
      const parentId = event.parentMessageId ?? `msg_${event.toolCallId}`;
      let parent = findAssistant(view, parentId);
      if (!parent) {
        parent = { id: parentId, role: 'assistant', content: '', runId, streaming: false, toolCalls: [] };
        view.messages.push(parent);
      }
      parent.toolCalls.push({ id: event.toolCallId, name: event.toolCallName, args: '', status: 'streaming' });
      break;
    }
    case 'TOOL_CALL_ARGS': {
      const tc = findToolCall(view, event.toolCallId);
      if (tc) tc.args += event.delta;
      break;
    }
    case 'TOOL_CALL_END': {
      const tc = findToolCall(view, event.toolCallId);
      if (tc && tc.status === 'streaming') tc.status = 'called';
      break;
    }
    case 'TOOL_CALL_RESULT': {
      const tc = findToolCall(view, event.toolCallId);
      if (tc) {
        tc.result = event.content;
        tc.status = isErrorResult(event.content) ? 'error' : 'done';
      }
      view.messages.push({
        id: event.messageId,
        role: 'tool',
        toolCallId: event.toolCallId,
        content: event.content,
        runId,
      });
      break;
    }
    case 'CUSTOM': {
      if (event.name === CUSTOM_EVENTS.model) {
        const parsed = ModelInfoSchema.safeParse(event.value);
        const run = currentRun(view);
        if (parsed.success && run) run.model = parsed.data;
      } else if (event.name === CUSTOM_EVENTS.navigate) {
        const parsed = NavigateValueSchema.safeParse(event.value);
        if (parsed.success) view.navigations.push(parsed.data.href);
      } else if (event.name === CUSTOM_EVENTS.approvalDecided) {
        const parsed = ApprovalDecidedValueSchema.safeParse(event.value);
        if (parsed.success) view.decisions[parsed.data.toolCallId] = parsed.data;
      } else if (event.name === CUSTOM_EVENTS.questionAnswered) {
        const parsed = QuestionAnsweredValueSchema.safeParse(event.value);
        if (parsed.success) view.answers = { ...view.answers, [parsed.data.toolCallId]: parsed.data };
      } else if (event.name === CUSTOM_EVENTS.messageParts) {
        const parsed = MessagePartsValueSchema.safeParse(event.value);
        const m = parsed.success ? view.messages.findLast((x) => x.id === parsed.data.messageId) : undefined;
        if (parsed.success && m?.role === 'user') m.parts = parsed.data.parts;
      } else if (event.name === CUSTOM_EVENTS.references) {
        const parsed = ReferencesValueSchema.safeParse(event.value);
        const m = parsed.success ? findAssistant(view, parsed.data.messageId) : undefined;
        if (parsed.success && m) m.references = parsed.data.issues;
      } else if (event.name === CUSTOM_EVENTS.suggestions) {
        const parsed = SuggestionsValueSchema.safeParse(event.value);
        const m = parsed.success ? findAssistant(view, parsed.data.messageId) : undefined;
        if (parsed.success && m) m.suggestions = parsed.data.suggestions;
      } else if (event.name === CUSTOM_EVENTS.resumed) {
        const parsed = ResumedValueSchema.safeParse(event.value);
        if (parsed.success) dropUnkept(view, runId, parsed.data.keep);
      } else if (event.name === CUSTOM_EVENTS.snapshot) {
        // The conversation so far (a watcher attaching without a position): replaces everything.
        const parsed = ConversationViewSchema.safeParse((event.value as { view?: unknown } | null)?.view);
        if (parsed.success) Object.assign(view, parsed.data);
      }
      break;
    }
    case 'MESSAGES_SNAPSHOT':
      break; // for stock AG-UI clients; the custom snapshot carries the whole view
    case 'RUN_FINISHED': {
      const run = view.runs.find((r) => r.runId === event.runId) ?? currentRun(view);
      if (!run) break;
      const outcome = event.outcome ?? { type: 'success' as const };
      run.status =
        outcome.type === 'interrupt' ? 'interrupted' : outcome.type === 'cancelled' ? 'cancelled' : 'completed';
      run.interrupts = outcome.type === 'interrupt' ? outcome.interrupts : [];
      const usage = event.usage?.[0];
      if (usage && (usage.inputTokens !== undefined || usage.outputTokens !== undefined)) run.usage = usage;
      settleRun(view, run.runId);
      break;
    }
    case 'RUN_ERROR': {
      const run = currentRun(view);
      if (!run) break;
      run.status = 'failed';
      run.error = { code: event.code, message: event.message };
      settleRun(view, run.runId);
      break;
    }
  }
  return view;
}

export function foldEvents(events: Iterable<AgentEvent>, view: ConversationView = emptyView()): ConversationView {
  for (const e of events) foldEvent(view, e);
  return view;
}

/** Tool results are JSON; an object with `isError: true` is a failure (anything else is a result). */
export function isErrorResult(content: string): boolean {
  if (!content.startsWith('{')) return false;
  try {
    const v = JSON.parse(content) as Record<string, unknown>;
    return v.isError === true;
  } catch {
    return false;
  }
}

/** Interrupts still waiting for an answer: those of the last run, when it ended interrupted. */
export function openInterrupts(view: ConversationView): RunState['interrupts'] {
  const last = currentRun(view);
  if (last?.status !== 'interrupted') return [];
  return last.interrupts.filter(
    (i) => !(i.toolCallId && (view.decisions[i.toolCallId] || view.answers?.[i.toolCallId])),
  );
}
