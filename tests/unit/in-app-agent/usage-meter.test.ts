// What a run used when it did not finish: completed model calls as their provider reported them,
// plus an estimate for the call cut off (its prompt and what it streamed, about four characters a
// token), marked as estimated.
import { describe, expect, it } from 'vitest';
import type { RuntimeModel } from '@/features/in-app-agent/server/runtime-model';
import { promptChars, UsageMeter } from '@/features/in-app-agent/server/usage';

/** A model whose calls only record what they were sent. */
function fakeModel(): RuntimeModel & { calls: unknown[] } {
  const calls: unknown[] = [];
  return {
    specificationVersion: 'v2',
    provider: 'test',
    modelId: 'm',
    calls,
    async doStream(options: unknown) {
      calls.push(options);
      return { stream: new ReadableStream() };
    },
  };
}

const call = (model: RuntimeModel, options: unknown) =>
  (model as unknown as { doStream: (o: unknown) => Promise<unknown> }).doStream(options);

const PROMPT = {
  prompt: [
    { role: 'system', content: 'You are helpful.' }, // 16
    { role: 'user', content: [{ type: 'text', text: 'list the issues' }] }, // 15
    {
      role: 'assistant',
      content: [{ type: 'tool-call', toolCallId: 'c', toolName: 'list_issues', input: { status: 'OPEN' } }], // 11 + 17
    },
    {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'list_issues', output: { type: 'json', value: [] } }],
    },
  ],
  tools: [{ type: 'function', name: 'list_issues', inputSchema: { type: 'object' } }],
};

describe('promptChars', () => {
  it('counts the texts, tool calls and results, and tool definitions a call is sent', () => {
    const result = JSON.stringify({ type: 'json', value: [] }).length + 'list_issues'.length;
    const tools = JSON.stringify(PROMPT.tools).length;
    expect(promptChars(PROMPT)).toBe(16 + 15 + (11 + 17) + result + tools);
    expect(promptChars(undefined)).toBe(0);
    expect(promptChars({ prompt: [{ role: 'user', content: 42 }] })).toBe(0);
  });
});

describe('UsageMeter', () => {
  it("reports the provider's total when the stream finished", () => {
    const meter = new UsageMeter();
    meter.stepFinished({ inputTokens: 10, outputTokens: 5 });
    meter.finished({ inputTokens: 10, outputTokens: 5 });
    expect(meter.usage()).toEqual({ inputTokens: 10, outputTokens: 5 });
  });

  it('adds an estimate for the call cut off after it streamed, and says so', async () => {
    const meter = new UsageMeter();
    const model = meter.watch(fakeModel());
    await call(model, { prompt: [{ role: 'user', content: 'hi' }] });
    meter.stepFinished({ inputTokens: 11, outputTokens: 7 });
    await call(model, PROMPT);
    meter.streamed(10);
    meter.streamed(3);
    expect(meter.usage()).toEqual({
      inputTokens: 11 + Math.ceil(promptChars(PROMPT) / 4),
      outputTokens: 7 + Math.ceil(13 / 4),
      estimated: true,
    });
    // The watched model still makes the call, with the same options.
    expect((model as unknown as { calls: unknown[] }).calls.at(-1)).toBe(PROMPT);
  });

  it("keeps the next call's prompt when its start is seen before the previous call's end is read", async () => {
    const meter = new UsageMeter();
    const model = meter.watch(fakeModel());
    await call(model, { prompt: [{ role: 'user', content: 'hi' }] });
    meter.streamed(8);
    await call(model, PROMPT); // the runtime is ahead of the reader
    meter.stepFinished({ inputTokens: 11, outputTokens: 7 });
    meter.streamed(4);
    expect(meter.usage()).toEqual({
      inputTokens: 11 + Math.ceil(promptChars(PROMPT) / 4),
      outputTokens: 8,
      estimated: true,
    });
  });

  it('counts nothing for a call cut off before it streamed, and nothing at all without a call', async () => {
    const meter = new UsageMeter();
    expect(meter.usage()).toEqual({});
    const model = meter.watch(fakeModel());
    await call(model, PROMPT);
    expect(meter.usage()).toEqual({});
    meter.stepFinished({ inputTokens: 11, outputTokens: 7 });
    await call(model, PROMPT);
    expect(meter.usage()).toEqual({ inputTokens: 11, outputTokens: 7 });
  });
});
