/**
 * The interrupts of a run, of every kind, as the panel answers them: one batch, sent as one resume.
 * Each kind registers how the panel reads its interrupt (a kind without an entry does not build);
 * its card is rendered by `ConversationMessages` (`ApprovalBatch` for approvals, `QuestionCard`
 * for questions). Pure, no React.
 */
import { openInterrupts } from '../../fold';
import type { InterruptKind } from '../../interrupt-kinds';
import { interruptKindOf } from '../../interrupt-kinds';
import type { ConversationView, Interrupt, ResumeEntry } from '../../schema';
import { approvalRequestOf, type BuildResumeResult, buildResume, type DraftAnswer, isExpired } from '../approval';
import { questionEntry, questionRequestOf, type QuestionDraft } from './question';

/** What every kind's request has: its interrupt and when it expires. */
interface AnswerableRequest {
  interruptId: string;
  expiresAt?: string;
}

/** How the panel reads each kind's interrupt (null: malformed, not answerable here). */
const PANEL_INTERRUPT_KINDS: {
  [K in InterruptKind]: { read(interrupt: Interrupt): AnswerableRequest | null; noun: string };
} = {
  tool_approval: { read: approvalRequestOf, noun: 'approval' },
  user_question: { read: questionRequestOf, noun: 'question' },
};

export interface OpenRequest extends AnswerableRequest {
  kind: InterruptKind;
}

const openByView = new WeakMap<ConversationView, OpenRequest[]>();
/** The requests still waiting for an answer, of every kind the panel answers, in the batch's order. */
export function openRequests(view: ConversationView): OpenRequest[] {
  let found = openByView.get(view);
  if (!found) {
    found = [];
    for (const interrupt of openInterrupts(view)) {
      const kind = interruptKindOf(interrupt.reason);
      const request = kind ? PANEL_INTERRUPT_KINDS[kind].read(interrupt) : null;
      if (kind && request) found.push({ kind, interruptId: request.interruptId, expiresAt: request.expiresAt });
    }
    openByView.set(view, found);
  }
  return found;
}

/** What waits, named for the input's hint: "approval", "question", or "request" when they are mixed. */
export function waitingNoun(requests: readonly OpenRequest[]): string {
  const kinds = new Set(requests.map((r) => r.kind));
  const [only] = kinds;
  return kinds.size === 1 && only ? PANEL_INTERRUPT_KINDS[only].noun : 'request';
}

/**
 * One resume entry per open request of the batch, in its order: approvals as `buildResume` builds
 * them, questions as their card answered them. The server refuses a batch in which any request
 * expired or any is left out, so both are reported here instead of being sent.
 */
export function buildBatchResume(
  view: ConversationView,
  drafts: {
    approvals: Record<string, DraftAnswer | undefined>;
    questions: Record<string, QuestionDraft | undefined>;
  },
  now: number,
): BuildResumeResult {
  const open = openInterrupts(view);
  const approvals = open.map(approvalRequestOf).filter((r) => r !== null);
  const questions = open.map(questionRequestOf).filter((r) => r !== null);
  if (!approvals.length && !questions.length) return { ok: false, error: 'There is nothing to answer.' };
  if (questions.some((q) => isExpired(q.expiresAt, now))) {
    return {
      ok: false,
      error: 'A request of this batch expired, so it can no longer be answered. Send a new message to ask again.',
    };
  }
  const entries = new Map<string, ResumeEntry>();
  if (approvals.length) {
    const built = buildResume(approvals, drafts.approvals, now);
    if (!built.ok) return built;
    for (const entry of built.resume) entries.set(entry.interruptId, entry);
  }
  for (const question of questions) {
    const built = questionEntry(question, drafts.questions[question.interruptId]);
    if (!built.ok) return built;
    entries.set(question.interruptId, built.entry);
  }
  return { ok: true, resume: open.flatMap((i) => entries.get(i.id) ?? []) };
}
