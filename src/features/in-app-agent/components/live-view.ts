/**
 * The conversation view while events stream in: one mutable `ConversationView` folded in place
 * with the module's reducer (`fold.ts`, the same one the server replays with), and render
 * snapshots taken at most once per frame. A snapshot gives new objects only to the messages an
 * event touched since the last one; the others keep their identity, so memoized bubbles do not
 * re-render per token.
 */
import { emptyView, foldEvent } from '../fold';
import type { AgentEvent, ConversationView, ViewMessage } from '../schema';

function cloneMessage(message: ViewMessage): ViewMessage {
  return message.role === 'assistant'
    ? { ...message, toolCalls: message.toolCalls.map((call) => ({ ...call })) }
    : { ...message };
}

export class LiveView {
  private working: ConversationView;
  private rendered: ConversationView;
  private dirty: Set<string> | 'all' = 'all';

  constructor(initial: ConversationView = emptyView()) {
    this.working = structuredClone(initial);
    this.rendered = this.snapshot();
  }

  /** The working view (mutable: read it, do not change it outside `apply`). */
  get current(): ConversationView {
    return this.working;
  }

  /** Folds one event and notes which messages it touched. */
  apply(event: AgentEvent): void {
    foldEvent(this.working, event);
    switch (event.type) {
      case 'TEXT_MESSAGE_START':
      case 'TEXT_MESSAGE_CONTENT':
      case 'TEXT_MESSAGE_END':
        this.mark(event.messageId);
        break;
      case 'TOOL_CALL_START':
        this.mark(event.parentMessageId ?? `msg_${event.toolCallId}`);
        break;
      case 'TOOL_CALL_ARGS':
      case 'TOOL_CALL_END': {
        const owner = this.working.messages.findLast(
          (m) => m.role === 'assistant' && m.toolCalls.some((call) => call.id === event.toolCallId),
        );
        if (owner) this.mark(owner.id);
        break;
      }
      default:
        // Run boundaries, results, decisions and snapshots change cards across messages.
        this.dirty = 'all';
    }
  }

  /** Replaces the whole view (a conversation loaded from the server). */
  replace(next: ConversationView): void {
    this.working = structuredClone(next);
    this.dirty = 'all';
  }

  /**
   * The versions of the turns shown (live events never carry them: the store sets them when it
   * starts a new version, the server's replay otherwise).
   */
  setVersions(versions: ConversationView['versions']): void {
    if (versions && Object.keys(versions).length) this.working.versions = structuredClone(versions);
    else delete this.working.versions;
    this.dirty = 'all';
  }

  get hasChanges(): boolean {
    return this.dirty === 'all' || this.dirty.size > 0;
  }

  /** A render snapshot of the working view (see the file comment). */
  snapshot(): ConversationView {
    const previous = new Map((this.rendered?.messages ?? []).map((m) => [m.id, m]));
    const dirty = this.dirty;
    const view: ConversationView = {
      threadId: this.working.threadId,
      messages: this.working.messages.map((m) => {
        const old = previous.get(m.id);
        return dirty === 'all' || !old || dirty.has(m.id) ? cloneMessage(m) : old;
      }),
      runs: this.working.runs.map((run) => ({ ...run, interrupts: [...run.interrupts] })),
      decisions: { ...this.working.decisions },
      ...(this.working.answers ? { answers: { ...this.working.answers } } : {}),
      navigations: [...this.working.navigations],
      ...(this.working.versions ? { versions: { ...this.working.versions } } : {}),
    };
    this.dirty = new Set();
    this.rendered = view;
    return view;
  }

  private mark(messageId: string): void {
    if (this.dirty !== 'all') this.dirty.add(messageId);
  }
}
