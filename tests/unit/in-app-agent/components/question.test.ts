// The panel's side of a question (`ask_user`): the control each field gets, the form's defaults,
// the answer built from what was typed (and checked as the server checks it), the one resume of a
// batch mixing approvals and questions, and the card as it renders open, read-only and answered.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { ConversationMessages } from '@/features/in-app-agent/components/ConversationMessages';
import { buildBatchResume, openRequests } from '@/features/in-app-agent/components/interrupts/batch';
import {
  contentOf,
  controlOf,
  initialQuestionDraft,
  questionEntry,
  questionProblems,
  type QuestionRequest,
} from '@/features/in-app-agent/components/interrupts/question';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import { RequestedSchemaSchema } from '@/features/in-app-agent/elicitation';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent } from '@/features/in-app-agent/schema';

const future = () => new Date(Date.now() + 5 * 60_000).toISOString();
const NOW = Date.now();

const schema = RequestedSchemaSchema.parse({
  type: 'object',
  properties: {
    who: { type: 'string', title: 'Who', enum: ['a', 'b', 'c'], enumNames: ['Ana', 'Ben', 'Cy'] },
    label: { type: 'string', title: 'Label', enum: ['1', '2', '3', '4', '5', '6'] },
    urgent: { type: 'boolean', title: 'Urgent', default: true },
    days: { type: 'integer', title: 'Days', minimum: 1, maximum: 9, description: 'How long it may take.' },
    note: { type: 'string', title: 'Note', maxLength: 40 },
    when: { type: 'string', title: 'When', format: 'date-time' },
  },
  required: ['who', 'days'],
});

const request: QuestionRequest = { interruptId: 'q1', toolCallId: 'call_q', message: 'Who takes it?', schema };

function questionRun(extra: AgentEvent[] = []): AgentEvent[] {
  return [
    { type: 'RUN_STARTED', threadId: 't', runId: 'run_1' },
    { type: 'TEXT_MESSAGE_START', messageId: 'u1', role: 'user' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: 'u1', delta: 'assign it' },
    { type: 'TEXT_MESSAGE_END', messageId: 'u1' },
    { type: 'TOOL_CALL_START', toolCallId: 'call_a', toolCallName: 'close_issue', parentMessageId: 'a1' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'call_a', delta: '{"number":3}' },
    { type: 'TOOL_CALL_END', toolCallId: 'call_a' },
    { type: 'TOOL_CALL_START', toolCallId: 'call_q', toolCallName: 'ask_user', parentMessageId: 'a1' },
    { type: 'TOOL_CALL_ARGS', toolCallId: 'call_q', delta: '{}' },
    { type: 'TOOL_CALL_END', toolCallId: 'call_q' },
    {
      type: 'RUN_FINISHED',
      threadId: 't',
      runId: 'run_1',
      outcome: {
        type: 'interrupt',
        interrupts: [
          {
            id: 'apr_a',
            reason: 'tool_approval',
            toolCallId: 'call_a',
            expiresAt: future(),
            metadata: {
              toolName: 'close_issue',
              args: { number: 3 },
              argsFingerprint: 'fp',
              approvalReason: 'mutating',
              why: 'Changes data.',
              destructive: false,
            },
          },
          {
            id: 'q1',
            reason: 'user_question',
            toolCallId: 'call_q',
            message: 'Who takes it?',
            expiresAt: future(),
            metadata: { requestedSchema: schema },
          },
        ],
      },
    },
    ...extra,
  ];
}

describe('the form of a question', () => {
  it('gives each field its control', () => {
    expect(Object.fromEntries(Object.entries(schema.properties).map(([k, p]) => [k, controlOf(p)]))).toEqual({
      who: 'radio',
      label: 'select',
      urgent: 'checkbox',
      days: 'number',
      note: 'text',
      when: 'text',
    });
  });

  it('starts from the defaults and builds the answer from what was typed', () => {
    const draft = initialQuestionDraft(request);
    expect(draft).toEqual({
      values: { who: '', label: '', urgent: true, days: '', note: '', when: '' },
      action: null,
    });
    // Empty fields are left out, so the required ones are reported.
    expect(questionProblems(request, draft).map((p) => p.field)).toEqual(['who', 'days']);
    const filled = {
      ...draft,
      values: { ...draft.values, who: 'b', days: ' 4 ', note: 'soon', when: '2026-11-30T10:00' },
    };
    const content = contentOf(request, filled);
    expect(content).toMatchObject({ who: 'b', days: 4, urgent: true, note: 'soon' });
    // A local date and time becomes a date-time with its zone.
    expect(content.when).toBe(new Date('2026-11-30T10:00').toISOString());
    expect(questionProblems(request, filled)).toEqual([]);
    // Text in a number field stays text, and is reported as not a number.
    const wrong = { ...filled, values: { ...filled.values, days: '4 days' } };
    expect(questionProblems(request, wrong)).toEqual([{ field: 'days', message: 'Enter a number.' }]);
  });

  it('becomes a resume entry only once it is answered and fits', () => {
    const draft = initialQuestionDraft(request);
    expect(questionEntry(request, draft)).toMatchObject({
      ok: false,
      error: expect.stringContaining('Send or Decline'),
    });
    expect(questionEntry(request, { ...draft, action: 'accept' })).toMatchObject({ ok: false });
    expect(questionEntry(request, { ...draft, action: 'decline' })).toEqual({
      ok: true,
      entry: { interruptId: 'q1', status: 'resolved', payload: { action: 'decline' } },
    });
    const answered = { values: { ...draft.values, who: 'a', days: '2' }, action: 'accept' as const };
    expect(questionEntry(request, answered)).toEqual({
      ok: true,
      entry: {
        interruptId: 'q1',
        status: 'resolved',
        payload: { action: 'accept', content: { who: 'a', urgent: true, days: 2 } },
      },
    });
  });
});

describe('a batch of an approval and a question', () => {
  const view = foldEvents(questionRun(), emptyView('t'));

  it('is one batch of open requests, sent as one resume in its order', () => {
    expect(openRequests(view).map((r) => `${r.kind}:${r.interruptId}`)).toEqual([
      'tool_approval:apr_a',
      'user_question:q1',
    ]);
    const questionDraft = { values: { who: 'c', days: '1' }, action: 'accept' as const };
    const approvalDraft = { decision: 'approve' as const, argsText: '{"number":3}', feedback: '' };
    // Each request must be answered before anything is sent.
    expect(buildBatchResume(view, { approvals: {}, questions: { q1: questionDraft } }, NOW)).toMatchObject({
      ok: false,
      error: expect.stringContaining('Approve or reject'),
    });
    expect(buildBatchResume(view, { approvals: { apr_a: approvalDraft }, questions: {} }, NOW)).toMatchObject({
      ok: false,
      error: expect.stringContaining('Who takes it?'),
    });
    const built = buildBatchResume(
      view,
      { approvals: { apr_a: approvalDraft }, questions: { q1: questionDraft } },
      NOW,
    );
    expect(built).toEqual({
      ok: true,
      resume: [
        { interruptId: 'apr_a', status: 'resolved', payload: { approved: true, argsFingerprint: 'fp' } },
        {
          interruptId: 'q1',
          status: 'resolved',
          payload: { action: 'accept', content: { who: 'c', urgent: false, days: 1 } },
        },
      ],
    });
    // Once expired, nothing of the batch is sent.
    expect(
      buildBatchResume(
        view,
        { approvals: { apr_a: approvalDraft }, questions: { q1: questionDraft } },
        NOW + 3_600_000,
      ),
    ).toMatchObject({ ok: false, error: expect.stringContaining('expired') });
  });
});

describe('the question card', () => {
  const render = (events: AgentEvent[], controls: boolean) =>
    renderToStaticMarkup(
      createElement(ConversationMessages, {
        view: foldEvents(events, emptyView('t')),
        now: NOW,
        ...(controls
          ? {
              questions: {
                drafts: {},
                onDraftChange: () => undefined,
                onAnswer: () => undefined,
                submitting: false,
                error: null,
              },
            }
          : {}),
      }),
    );

  it('renders an open form labelled by the titles, required fields marked, instead of a tool card', () => {
    const html = render(questionRun(), true);
    expect(html).toContain('data-testid="question-card" data-state="open"');
    expect(html).not.toContain('data-tool="ask_user"');
    // A fieldset of radio buttons for a short choice, a select for a long one.
    expect(html).toMatch(
      /<fieldset[^>]*data-field="who"[\s\S]*?<legend[^>]*>Who<span aria-hidden="true"[^>]*> \*<\/span><span class="sr-only"> \(required\)<\/span><\/legend>/,
    );
    expect((html.match(/type="radio"/g) ?? []).length).toBe(3);
    expect(html).toMatch(/<select[^>]*>[\s\S]*<option value=""[^>]*>Choose…<\/option>/);
    expect(html).toMatch(/type="checkbox"[^>]*checked/);
    expect(html).toMatch(/<input[^>]*type="number"[^>]*min="1"[^>]*max="9"/);
    expect(html).toContain('How long it may take. A whole number from 1 to 9.');
    expect(html).toContain('type="datetime-local"');
    expect(html).toContain('data-testid="question-send"');
    expect(html).toContain('data-testid="question-decline"');
  });

  it('is read-only without controls, and keeps the answer once answered', () => {
    expect(render(questionRun(), false)).toContain('data-outcome="waiting"');
    const answered = render(
      questionRun([
        { type: 'RUN_STARTED', threadId: 't', runId: 'run_2', parentRunId: 'run_1' },
        {
          type: 'CUSTOM',
          name: CUSTOM_EVENTS.questionAnswered,
          value: { toolCallId: 'call_q', action: 'accept', content: { who: 'b', urgent: false, days: 3 } },
        },
        { type: 'TOOL_CALL_RESULT', messageId: 'r1', toolCallId: 'call_q', content: '{"action":"accept"}' },
        { type: 'RUN_FINISHED', threadId: 't', runId: 'run_2', outcome: { type: 'success' } },
      ]),
      true,
    );
    expect(answered).toContain('data-testid="question-card" data-state="answered"');
    expect(answered).not.toContain('data-testid="question-form"');
    expect(answered).toMatch(/<dt[^>]*>Who<\/dt><dd[^>]*data-field="who">Ben<\/dd>/);
    expect(answered).toMatch(/data-field="urgent">No<\/dd>/);
    const declined = render(
      questionRun([
        { type: 'RUN_STARTED', threadId: 't', runId: 'run_2', parentRunId: 'run_1' },
        { type: 'CUSTOM', name: CUSTOM_EVENTS.questionAnswered, value: { toolCallId: 'call_q', action: 'decline' } },
        { type: 'RUN_FINISHED', threadId: 't', runId: 'run_2', outcome: { type: 'success' } },
      ]),
      true,
    );
    expect(declined).toContain('data-state="declined"');
  });
});
