// What the conversation shows of versions, edit and regenerate, earlier messages and usage: the
// controls appear where they belong and only when offered, and read well to screen readers.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import {
  ConversationMessages,
  formatUsage,
  type ConversationMessagesProps,
} from '@/features/in-app-agent/components/ConversationMessages';
import { emptyView, foldEvents } from '@/features/in-app-agent/fold';
import type { AgentEvent, ConversationView, TokenUsage } from '@/features/in-app-agent/schema';

const T = 'conv_1';

function turn(runId: string, question: string, answer: string, usage?: TokenUsage, end = true): AgentEvent[] {
  return [
    { type: 'RUN_STARTED', threadId: T, runId },
    { type: 'TEXT_MESSAGE_START', messageId: `u-${runId}`, role: 'user' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: `u-${runId}`, delta: question },
    { type: 'TEXT_MESSAGE_END', messageId: `u-${runId}` },
    { type: 'TEXT_MESSAGE_START', messageId: `a-${runId}`, role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: `a-${runId}`, delta: answer },
    ...(end
      ? ([
          { type: 'TEXT_MESSAGE_END', messageId: `a-${runId}` },
          {
            type: 'RUN_FINISHED',
            threadId: T,
            runId,
            outcome: { type: 'success' },
            ...(usage ? { usage: [usage] } : {}),
          },
        ] as AgentEvent[])
      : []),
  ];
}

function conversation(): ConversationView {
  const events = [
    ...turn('run_1', 'first question', 'First answer.'),
    ...turn('run_2b', 'second question', 'Second answer.'),
  ];
  const view = foldEvents(events, emptyView(T));
  view.versions = { run_2b: { index: 2, count: 3, runIds: ['run_2', 'run_2b', 'run_2c'] } };
  return view;
}

const noop = () => undefined;
const live = {
  revise: { onEdit: noop, onRegenerate: noop },
  versions: { onSelect: noop, disabled: false },
};

function render(view: ConversationView, props: Partial<ConversationMessagesProps> = {}): string {
  return renderToStaticMarkup(createElement(ConversationMessages, { view, now: Date.now(), ...props }));
}

/** The element with this data-testid, start tag to its end, as a string (first match). */
function part(html: string, testid: string): string {
  const start = html.indexOf(`data-testid="${testid}"`);
  if (start < 0) return '';
  const open = html.lastIndexOf('<', start);
  const tag = /^<(\w+)/.exec(html.slice(open))![1]!;
  let depth = 0;
  const re = new RegExp(`<${tag}[\\s>]|</${tag}>`, 'g');
  re.lastIndex = open;
  for (let m = re.exec(html); m; m = re.exec(html)) {
    depth += m[0].startsWith('</') ? -1 : 1;
    if (depth === 0) return html.slice(open, m.index + m[0].length);
  }
  return html.slice(open);
}

describe('versions of a turn', () => {
  it('shows "2 / 3" with previous and next buttons named for screen readers, on the turn that has them', () => {
    const html = render(conversation(), live);
    const switcher = part(html, 'assistant-versions');
    expect(switcher).toContain('data-run-id="run_2b"');
    expect(switcher).toContain('role="group"');
    expect(switcher).toContain('aria-label="Versions of this answer"');
    expect(switcher).toMatch(/data-testid="assistant-version-position"[^>]*>2 \/ 3</);
    expect(switcher).toContain('<span class="sr-only">Version 2 of 3</span>');
    expect(switcher).toMatch(/<button[^>]*aria-label="Previous version"(?![^>]*disabled="")[^>]*>/);
    expect(switcher).toMatch(/<button[^>]*aria-label="Next version"(?![^>]*disabled="")[^>]*>/);
    // Only the turn with several versions has a switcher.
    expect(html.match(/data-testid="assistant-versions"/g)).toHaveLength(1);
  });

  it('disables the arrow at either end, and both while an answer runs', () => {
    const first = conversation();
    first.versions = { run_2b: { index: 1, count: 2, runIds: ['run_2b', 'run_2c'] } };
    const atStart = part(render(first, live), 'assistant-versions');
    expect(atStart).toMatch(/aria-label="Previous version"[^>]*disabled=""/);
    expect(atStart).not.toMatch(/aria-label="Next version"[^>]*disabled=""/);

    const busy = part(
      render(conversation(), { ...live, versions: { onSelect: noop, disabled: true } }),
      'assistant-versions',
    );
    expect(busy).toMatch(/aria-label="Previous version"[^>]*disabled=""/);
    expect(busy).toMatch(/aria-label="Next version"[^>]*disabled=""/);
  });

  it('read-only rendering (the review) shows no switcher, no Edit and no Regenerate', () => {
    const html = render(conversation());
    expect(html).not.toContain('assistant-versions');
    expect(html).not.toContain('assistant-edit-message');
    expect(html).not.toContain('assistant-regenerate');
    expect(html).not.toContain('assistant-usage');
  });
});

describe('edit and regenerate', () => {
  it('offers Edit on the newest user message only and Regenerate on the newest answer only', () => {
    const html = render(conversation(), live);
    expect(html.match(/data-testid="assistant-edit-message"/g)).toHaveLength(1);
    expect(html).toMatch(/data-message-id="u-run_2b"[\s\S]*data-testid="assistant-edit-message"/);
    expect(html).not.toMatch(/data-testid="assistant-edit-message"[\s\S]*data-message-id="u-run_2b"/);
    expect(html).toContain('aria-label="Edit your message"');
    expect(html.match(/data-testid="assistant-regenerate"/g)).toHaveLength(1);
    expect(part(html, 'assistant-turn-tools')).toContain('data-run-id="run_2b"');
    // The user's text is unchanged inside its bubble (the button sits beside it, not in it).
    expect(part(html, 'assistant-message')).not.toContain('Edit');
  });

  it('offers no Regenerate when the newest user message has no answer yet', () => {
    const view = foldEvents(
      [...turn('run_1', 'q', 'A.'), { type: 'RUN_STARTED', threadId: T, runId: 'run_2' }],
      emptyView(T),
    );
    view.messages.push({ id: 'u-run_2', role: 'user', content: 'and then?', runId: 'run_2' });
    const html = render(view, live);
    expect(html).not.toContain('assistant-regenerate');
  });
});

describe('usage of an answer', () => {
  it('formats tokens with separators and the cost only when it is known', () => {
    expect(formatUsage({ inputTokens: 1234, outputTokens: 567, costUsd: 0.0123 })).toBe('1,234 in · 567 out · $0.0123');
    expect(formatUsage({ inputTokens: 1234, outputTokens: 567 })).toBe('1,234 in · 567 out');
    expect(formatUsage({ model: 'x' })).toBeNull();
    expect(formatUsage(undefined)).toBeNull();
    expect(formatUsage({ inputTokens: 10, outputTokens: 2, costUsd: 0.00036 })).toBe('10 in · 2 out · $0.00036');
  });

  it('shows a Usage disclosure (keyboard: a summary) under each finished answer, none while it runs', () => {
    const view = foldEvents(
      [
        ...turn('run_1', 'first', 'A.', { inputTokens: 1234, outputTokens: 567, costUsd: 0.0123 }),
        ...turn('run_2', 'second', 'B', { inputTokens: 10, outputTokens: 2 }, false),
      ],
      emptyView(T),
    );
    const html = render(view, { showUsage: true });
    expect(html.match(/data-testid="assistant-usage"/g)).toHaveLength(1);
    const usage = part(html, 'assistant-usage');
    expect(usage).toMatch(/^<details/);
    expect(usage).toContain('<summary');
    expect(usage).toContain('1,234 in · 567 out · $0.0123');
    expect(usage).toContain('title="1,234 input tokens, 567 output tokens, cost $0.0123"');
  });
});

describe('one Usage per turn', () => {
  it('a turn that went on after approvals shows one Usage, under its last run, with both runs summed', () => {
    const view = foldEvents(
      [
        ...turn('run_1', 'close issue 3', "I'll close it once you approve.", undefined, false),
        { type: 'TEXT_MESSAGE_END', messageId: 'a-run_1' },
        {
          type: 'RUN_FINISHED',
          threadId: T,
          runId: 'run_1',
          outcome: { type: 'interrupt', interrupts: [{ id: 'int_1', reason: 'tool_approval' }] },
          usage: [{ inputTokens: 1000, outputTokens: 20, costUsd: 0.0033 }],
        },
        { type: 'RUN_STARTED', threadId: T, runId: 'run_2', parentRunId: 'run_1' },
        { type: 'TEXT_MESSAGE_START', messageId: 'a-run_2', role: 'assistant' },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a-run_2', delta: 'Closed issue #3.' },
        { type: 'TEXT_MESSAGE_END', messageId: 'a-run_2' },
        {
          type: 'RUN_FINISHED',
          threadId: T,
          runId: 'run_2',
          outcome: { type: 'success' },
          usage: [{ inputTokens: 1100, outputTokens: 6, costUsd: 0.00339 }],
        },
        ...turn('run_3', 'thanks', 'You are welcome.', { inputTokens: 50, outputTokens: 5, costUsd: 0.000225 }),
      ],
      emptyView(T),
    );
    const html = render(view, { showUsage: true });
    expect(html.match(/data-testid="assistant-usage"/g)).toHaveLength(2);
    expect(part(html, 'assistant-usage')).toContain('2,100 in · 26 out');
    expect(html.indexOf('data-testid="assistant-usage"')).toBeGreaterThan(html.indexOf('Closed issue #3.'));
  });

  it('offers Retry, not Regenerate beside it, under a half-written failed answer', () => {
    const view = foldEvents(
      [
        ...turn('run_1', 'summarize the project', 'Half an ans', undefined, false),
        { type: 'RUN_ERROR', code: 'MODEL_UNAVAILABLE', message: 'The model is not reachable right now.' },
      ],
      emptyView(T),
    );
    const html = render(view, { ...live, onRetry: noop });
    expect(html).toContain('data-testid="assistant-retry"');
    expect(html).not.toContain('data-testid="assistant-regenerate"');
  });
});

describe('earlier messages', () => {
  it('offers "Show earlier messages" at the top when there are earlier ones, and says so while loading or failing', () => {
    const view = conversation();
    const idle = render(view, { earlier: { onLoad: noop, loading: false, error: null } });
    expect(idle.indexOf('data-testid="assistant-earlier"')).toBeLessThan(
      idle.indexOf('data-testid="assistant-message"'),
    );
    expect(part(idle, 'assistant-earlier')).toContain('>Show earlier messages</button>');
    const loading = part(render(view, { earlier: { onLoad: noop, loading: true, error: null } }), 'assistant-earlier');
    expect(loading).toContain('disabled=""');
    expect(loading).toContain('Loading earlier messages…');
    const failed = render(view, {
      earlier: { onLoad: noop, loading: false, error: 'Could not load earlier messages.' },
    });
    expect(failed).toMatch(/role="alert"[^>]*>Could not load earlier messages\./);
    expect(render(view)).not.toContain('assistant-earlier');
  });
});
