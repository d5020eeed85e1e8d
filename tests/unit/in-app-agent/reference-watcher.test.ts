// The reference check's timing within a run: an answer's references go out after the message, only
// while nothing streams (a row of its own between the run's messages and calls, as compaction and
// reattach need), and at the latest before the run's end; each issue is looked up once per run.
import { describe, expect, it } from 'vitest';
import { CUSTOM_EVENTS } from '@/features/in-app-agent/constants';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { ReferenceWatcher, type RunReferences } from '@/features/in-app-agent/server/references';

function setup() {
  const lookups: number[][] = [];
  const waiting: Array<() => void> = [];
  const refs = {
    projectId: 'p1',
    origins: [],
    issues: (numbers: number[]) => {
      lookups.push(numbers);
      return new Promise((resolve) =>
        waiting.push(() =>
          resolve(numbers.filter((n) => n < 100).map((n) => ({ number: n, title: `T${n}`, status: 'OPEN' }))),
        ),
      );
    },
  } as unknown as RunReferences;
  const sent: AgentEvent[] = [];
  const watcher = new ReferenceWatcher(refs, (e) => sent.push(e), { runId: 'r', conversationId: 'c' });
  const send = (e: AgentEvent) => {
    sent.push(e);
    watcher.observe(e);
  };
  const answer = (id: string, text: string) => {
    send({ type: 'TEXT_MESSAGE_START', messageId: id, role: 'assistant' });
    send({ type: 'TEXT_MESSAGE_CONTENT', messageId: id, delta: text });
    send({ type: 'TEXT_MESSAGE_END', messageId: id });
  };
  const resolveAll = async () => {
    for (const w of waiting.splice(0)) w();
    await new Promise((r) => setTimeout(r, 0));
  };
  return { watcher, sent, send, answer, lookups, resolveAll };
}

const names = (events: AgentEvent[]) =>
  events.map((e) => (e.type === 'CUSTOM' ? `CUSTOM:${(e.value as { messageId: string }).messageId}` : e.type));

describe('ReferenceWatcher', () => {
  it('sends a message’s references once nothing streams, never inside a call', async () => {
    const { sent, send, answer, resolveAll } = setup();
    answer('m1', 'About #1 and #500.');
    send({ type: 'TOOL_CALL_START', toolCallId: 't1', toolCallName: 'get_issue', parentMessageId: 'm1' });
    await resolveAll();
    expect(names(sent)).not.toContain('CUSTOM:m1');
    send({ type: 'TOOL_CALL_END', toolCallId: 't1' });
    expect(names(sent).slice(-2)).toEqual(['TOOL_CALL_END', 'CUSTOM:m1']);
    expect(sent.at(-1)).toMatchObject({
      name: CUSTOM_EVENTS.references,
      value: { messageId: 'm1', issues: [{ number: 1, title: 'T1', status: 'OPEN' }] },
    });
  });

  it('waits for checks still running before the run ends, and skips messages without references', async () => {
    const { watcher, sent, answer, lookups, resolveAll } = setup();
    answer('m1', 'No references here.');
    answer('m2', 'See issue 7.');
    expect(lookups).toEqual([[7]]);
    const settled = watcher.settle();
    await resolveAll();
    await settled;
    expect(names(sent).filter((n) => n.startsWith('CUSTOM'))).toEqual(['CUSTOM:m2']);
  });

  it('sends nothing for references that name no issue of the project', async () => {
    const { watcher, sent, answer, resolveAll } = setup();
    answer('m1', 'Only #404 and #999.');
    const settled = watcher.settle();
    await resolveAll();
    await settled;
    expect(names(sent).filter((n) => n.startsWith('CUSTOM'))).toEqual([]);
  });
});
