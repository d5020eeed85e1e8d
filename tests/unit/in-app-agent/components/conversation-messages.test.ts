import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  ConversationMessages,
  type ConversationMessagesProps,
} from '@/features/in-app-agent/components/ConversationMessages';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent } from '@/features/in-app-agent/schema';

const T = 'conv_1';
const future = () => new Date(Date.now() + 5 * 60_000).toISOString();

function userTurn(runId: string, id: string, text: string): AgentEvent[] {
  return [
    { type: 'RUN_STARTED', threadId: T, runId },
    { type: 'TEXT_MESSAGE_START', messageId: id, role: 'user' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: text },
    { type: 'TEXT_MESSAGE_END', messageId: id },
  ];
}

function interruptedRun(expiresAt = future()): AgentEvent[] {
  return [
    ...userTurn('run_1', 'u1', 'create an issue titled Panel test'),
    { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: "I'll create that issue once you approve." },
    { type: 'TEXT_MESSAGE_END', messageId: 'a1' },
    { type: 'TOOL_CALL_START', toolCallId: 'call_1', toolCallName: 'create_issue', parentMessageId: 'a1' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'call_1', delta: '{"title":"Panel test"}' },
    { type: 'TOOL_CALL_END', toolCallId: 'call_1' },
    {
      type: 'RUN_FINISHED',
      threadId: T,
      runId: 'run_1',
      outcome: {
        type: 'interrupt',
        interrupts: [
          {
            id: 'int_1',
            reason: 'tool_approval',
            toolCallId: 'call_1',
            expiresAt,
            metadata: {
              toolName: 'create_issue',
              args: { title: 'Panel test' },
              argsFingerprint: 'fp',
              approvalReason: 'mutating',
              why: 'Creating an issue changes the project.',
              destructive: false,
            },
          },
        ],
      },
    },
  ];
}

function render(events: AgentEvent[], props: Partial<ConversationMessagesProps> = {}): string {
  const view = foldEvents(events, emptyView());
  return renderToStaticMarkup(createElement(ConversationMessages, { view, now: Date.now(), ...props }));
}

const approvals = {
  drafts: {},
  onDraftChange: () => undefined,
  onSubmit: () => undefined,
  submitting: false,
  error: null,
};

describe('ConversationMessages', () => {
  it('shows an answerable approval card with editable args in the live panel', () => {
    const html = render(interruptedRun(), { approvals, onFeedback: async () => undefined });
    expect(html).toContain('data-testid="approval-card"');
    expect(html).toContain('data-state="open"');
    expect(html).toContain('data-testid="approval-args"');
    expect(html).toContain('data-testid="approval-submit"');
    expect(html).toContain('Why you are asked: Changes data');
    expect(html).toContain('Creating an issue changes the project.');
    expect(html).toMatch(/data-testid="tool-card"[^>]*data-status="awaiting-approval"/);
  });

  it('offers Approve all / Reject all (with shortcuts) on a batch of two or more, not on one card or read-only', () => {
    const single = interruptedRun();
    const finishedEvent = single.at(-1) as Extract<AgentEvent, { type: 'RUN_FINISHED' }>;
    const firstInterrupt = finishedEvent.outcome?.type === 'interrupt' ? finishedEvent.outcome.interrupts[0]! : null;
    const batch: AgentEvent[] = [
      ...single.slice(0, -1),
      { type: 'TOOL_CALL_START', toolCallId: 'call_2', toolCallName: 'create_issue', parentMessageId: 'a1' },
      { type: 'TOOL_CALL_ARGS', toolCallId: 'call_2', delta: '{"title":"Second"}' },
      { type: 'TOOL_CALL_END', toolCallId: 'call_2' },
      {
        ...finishedEvent,
        outcome: {
          type: 'interrupt',
          interrupts: [firstInterrupt!, { ...firstInterrupt!, id: 'int_2', toolCallId: 'call_2' }],
        },
      },
    ];
    const onAnswerAll = () => undefined;
    const html = render(batch, { approvals: { ...approvals, onAnswerAll } });
    expect(html).toMatch(/data-testid="approval-approve-all"[^>]*aria-keyshortcuts="Alt\+Shift\+A"/);
    expect(html).toMatch(/data-testid="approval-reject-all"[^>]*aria-keyshortcuts="Alt\+Shift\+R"/);
    expect(html).toContain('data-testid="approval-reject-all-note"');
    expect(html).toContain('Alt+Shift+A approves all');
    expect(render(single, { approvals: { ...approvals, onAnswerAll } })).not.toContain('approval-approve-all');
    expect(render(batch)).not.toContain('approval-approve-all');
  });

  it('read-only (review) shows an open request as waiting for the user, without controls; expired once expired', () => {
    const html = render(interruptedRun());
    expect(html).toContain('data-state="waiting"');
    expect(html).toContain('Open (waiting for the user)');
    expect(html).not.toContain('Not answered');
    expect(html).not.toContain('data-testid="approval-args"');
    expect(html).not.toContain('data-testid="approval-submit"');
    const expired = render(interruptedRun(new Date(Date.now() - 1000).toISOString()));
    expect(expired).toContain('data-state="expired"');
    expect(expired).not.toContain('waiting for the user');
  });

  it('an older request the user left for a new message shows as not answered', () => {
    const html = render([
      ...interruptedRun(),
      ...userTurn('run_2', 'u2', 'never mind'),
      { type: 'RUN_FINISHED', threadId: T, runId: 'run_2', outcome: { type: 'success' } },
    ]);
    expect(html).toContain('data-state="unanswered"');
    expect(html).toContain('Not answered');
  });

  it('keeps decided and expired cards in history with their outcome', () => {
    const decided = render(
      [
        ...interruptedRun(),
        { type: 'RUN_STARTED', threadId: T, runId: 'run_2' },
        {
          type: 'CUSTOM',
          name: CUSTOM_EVENTS.approvalDecided,
          value: { toolCallId: 'call_1', decision: 'rejected', feedback: 'wrong title' },
        },
        { type: 'TOOL_CALL_RESULT', messageId: 't1', toolCallId: 'call_1', content: '{"rejected":true}', role: 'tool' },
        { type: 'RUN_FINISHED', threadId: T, runId: 'run_2', outcome: { type: 'success' } },
      ],
      { approvals },
    );
    expect(decided).toContain('data-state="rejected"');
    expect(decided).toContain('Your note: wrong title');
    expect(decided).toMatch(/data-testid="tool-card"[^>]*data-status="rejected"/);
    expect(decided).not.toContain('data-testid="approval-submit"');
    // Once answered, the card no longer asks for attention.
    expect(decided).toContain('Approval request: Create issue');
    expect(decided).not.toContain('Approval needed');

    const expired = render(interruptedRun(new Date(Date.now() - 1000).toISOString()), { approvals });
    expect(expired).toContain('data-state="expired"');
    expect(expired).not.toContain('data-testid="approval-submit"');
  });

  it('marks a tool card approved with edited arguments: its arguments were only the proposal', () => {
    const approved = (edited: boolean) =>
      render(
        [
          ...interruptedRun(),
          { type: 'RUN_STARTED', threadId: T, runId: 'run_2' },
          {
            type: 'CUSTOM',
            name: CUSTOM_EVENTS.approvalDecided,
            value: { toolCallId: 'call_1', decision: 'approved', edited },
          },
          {
            type: 'TOOL_CALL_RESULT',
            messageId: 't1',
            toolCallId: 'call_1',
            content: '{"number":11,"title":"Panel test edited"}',
            role: 'tool',
          },
          { type: 'RUN_FINISHED', threadId: T, runId: 'run_2', outcome: { type: 'success' } },
        ],
        { approvals },
      );
    const edited = approved(true);
    expect(edited).toContain('Approved with edited arguments');
    // Decisions recorded before the executed arguments were carried still read well.
    expect(edited).toMatch(/data-testid="tool-card"[^>]*data-edited="true"/);
    expect(edited).toContain('Ran with the arguments you edited (see Result).');
    const plain = approved(false);
    expect(plain).not.toContain('data-edited="true"');
    expect(plain).not.toContain('Ran with the arguments you edited');
  });

  it('shows the arguments a call actually ran with, and the diff against the proposal when edited', () => {
    const ran = (value: Record<string, unknown>) =>
      render(
        [
          ...interruptedRun(),
          { type: 'RUN_STARTED', threadId: T, runId: 'run_2' },
          {
            type: 'CUSTOM',
            name: CUSTOM_EVENTS.approvalDecided,
            value: { toolCallId: 'call_1', decision: 'approved', ...value },
          },
          { type: 'TOOL_CALL_RESULT', messageId: 't1', toolCallId: 'call_1', content: '{"number":11}', role: 'tool' },
          { type: 'RUN_FINISHED', threadId: T, runId: 'run_2', outcome: { type: 'success' } },
        ],
        { approvals },
      );
    const edited = ran({ edited: true, args: { title: 'Panel test edited', priority: 'HIGH' } });
    expect(edited).toContain('data-testid="approval-ran-with"');
    expect(edited).toContain('&quot;title&quot;: &quot;Panel test edited&quot;');
    expect(edited).toContain('data-testid="approval-ran-diff"');
    expect(edited).toMatch(/<code>priority<\/code>:\s*added “HIGH”/);
    expect(edited).toMatch(
      /data-testid="tool-card-ran-with"[^>]*>Ran with: title: “Panel test edited”, priority: “HIGH”/,
    );
    // The proposal shows struck through on the tool card, labelled for screen readers.
    expect(edited).toContain('Proposed: </span>title: “Panel test”');
    expect(edited).not.toContain('Ran with the arguments you edited');

    const same = ran({ edited: false, args: { title: 'Panel test' } });
    expect(same).toContain('data-testid="approval-ran-with"');
    expect(same).not.toContain('data-testid="approval-ran-diff"');
    expect(same).toContain('Ran with: title: “Panel test”');
    expect(same).not.toContain('Proposed: </span>');
  });

  it('offers feedback only on completed assistant messages and shows the stored choice', () => {
    const streaming = render(
      [
        ...userTurn('run_1', 'u1', 'hi'),
        { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'Hel' },
      ],
      { onFeedback: async () => undefined },
    );
    expect(streaming).toContain('data-streaming="true"');
    expect(streaming).not.toContain('data-testid="feedback-up"');

    const done = render(
      [
        ...userTurn('run_1', 'u1', 'hi'),
        { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: 'Hello' },
        { type: 'TEXT_MESSAGE_END', messageId: 'a1' },
        { type: 'RUN_FINISHED', threadId: T, runId: 'run_1', outcome: { type: 'success' } },
      ],
      { onFeedback: async () => undefined, feedback: { a1: { value: -1, comment: 'too short' } } },
    );
    expect(done).toMatch(/data-testid="feedback-down"[^>]*aria-pressed="true"/);
    expect(done).toMatch(/data-testid="feedback-up"[^>]*aria-pressed="false"/);
    expect(done).toContain('too short');
  });

  it('shows a failed run as an error row with Retry, and a stopped run as stopped with its partial text', () => {
    const failed = render(
      [...userTurn('run_1', 'u1', 'hi'), { type: 'RUN_ERROR', code: 'MODEL_UNAVAILABLE', message: 'down' }],
      { onRetry: () => undefined },
    );
    expect(failed).toContain('data-testid="assistant-error"');
    expect(failed).toContain('data-code="MODEL_UNAVAILABLE"');
    expect(failed).toContain('data-testid="assistant-retry"');

    const stopped = render([
      ...userTurn('run_1', 'u1', 'write a long answer'),
      { type: 'TEXT_MESSAGE_START', messageId: 'a1', role: 'assistant' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a1', delta: '1. A good issue tracker' },
      { type: 'RUN_FINISHED', threadId: T, runId: 'run_1', outcome: { type: 'cancelled' } },
    ]);
    expect(stopped).toContain('data-testid="assistant-stopped"');
    expect(stopped).toContain('A good issue tracker');
    expect(stopped).toContain('data-streaming="false"');
  });
});
