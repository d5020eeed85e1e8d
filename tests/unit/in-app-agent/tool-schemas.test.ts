/**
 * The run's tools with schemas converted once per process (server/tool-schemas.ts) against the
 * runtime's own per-run conversion: for each model the product configures, the model is called with
 * the same tools, and the tools' calls are validated the same way.
 */
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { createModel } from '@/features/in-app-agent/server/model';
import type { RuntimeModel } from '@/features/in-app-agent/server/runtime-model';
import { runtimeTool, withoutStrictFlags } from '@/features/in-app-agent/server/tool-schemas';
import { LOCAL_TOOL_DECLARATIONS } from '@/features/in-app-agent/tool-declarations';
import { MCP_TOOLS } from '@/features/mcp/registry';
import { parseEnv } from '@/server/env';

const TOOLS: Array<{ id: string; description: string; inputSchema: z.ZodType }> = [
  ...Object.entries(MCP_TOOLS).map(([id, t]) => ({ id, description: t.description, inputSchema: t.inputSchema })),
  ...Object.entries(LOCAL_TOOL_DECLARATIONS).map(([id, t]) => ({
    id,
    description: t.description,
    inputSchema: t.input as z.ZodType,
  })),
];

const base = { NODE_ENV: 'test' };
const MODELS: Array<[string, () => RuntimeModel]> = [
  [
    'an OpenAI-compatible server',
    () =>
      createModel(
        parseEnv({
          ...base,
          AGENT_MODEL_PROVIDER: 'openai-compatible',
          OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:9/v1',
          OPENAI_COMPATIBLE_MODEL: 'gpt-4o-mini',
        }),
      ).model,
  ],
  ...['anthropic.claude-3-5-sonnet-20241022-v2:0', 'meta.llama3-1-70b-instruct-v1:0', 'amazon.nova-pro-v1:0'].map(
    (id): [string, () => RuntimeModel] => [
      `Bedrock, ${id}`,
      () =>
        createModel(
          parseEnv({
            ...base,
            AWS_REGION: 'eu-west-1',
            AWS_ACCESS_KEY_ID: 'AKID',
            AWS_SECRET_ACCESS_KEY: 's',
            BEDROCK_MODEL_ID: id,
          }),
        ).model,
    ],
  ),
  ['the offline demo model', () => createModel(parseEnv(base)).model],
];

type Call = { tools?: Array<Record<string, unknown>>; prompt?: Array<{ role: string; content: unknown }> };

/**
 * The model with its calls answered here instead of by its provider: the first call asks for two
 * tools (one call the schema allows after the runtime's clean-up, one it refuses), the second answers.
 */
function scripted(model: RuntimeModel): { model: RuntimeModel; calls: Call[] } {
  const calls: Call[] = [];
  const v3 = model.specificationVersion === 'v3';
  const usage = v3
    ? {
        inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
        outputTokens: { total: 1, text: 1, reasoning: undefined },
      }
    : { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
  const finish = (reason: string) => ({
    type: 'finish',
    finishReason: v3 ? { unified: reason, raw: reason } : reason,
    usage,
  });
  const doStream = async (options: Call) => {
    calls.push(options);
    const parts: unknown[] =
      calls.length === 1
        ? [
            { type: 'stream-start', warnings: [] },
            {
              type: 'tool-call',
              toolCallId: 'call_1',
              toolName: 'list_issues',
              input: JSON.stringify({ status: null, assignee: null, page: 2 }),
            },
            { type: 'tool-call', toolCallId: 'call_2', toolName: 'search_issues', input: JSON.stringify({ limit: 0 }) },
            finish('tool-calls'),
          ]
        : [
            { type: 'stream-start', warnings: [] },
            { type: 'text-start', id: 't' },
            { type: 'text-delta', id: 't', delta: 'done' },
            { type: 'text-end', id: 't' },
            finish('stop'),
          ];
    return {
      stream: new ReadableStream({
        start(c) {
          for (const p of parts) c.enqueue(p);
          c.close();
        },
      }),
    };
  };
  return {
    calls,
    model: new Proxy(model, {
      get: (target, prop) => (prop === 'doStream' ? doStream : Reflect.get(target, prop, target)),
    }),
  };
}

const echo = async (input: unknown) => ({ received: input });

async function answer(model: RuntimeModel, tools: Record<string, unknown>): Promise<void> {
  const agent = new Agent({
    id: 'tools',
    name: 'tools',
    instructions: 'Use the tools.',
    model: model as never,
    tools: tools as never,
  });
  const output = await agent.stream('List my issues.', { maxSteps: 2 } as never);
  const reader = (output.fullStream as unknown as ReadableStream<unknown>).getReader();
  while (!(await reader.read()).done);
}

/** The tool results the model was sent back, by call id. */
function results(call: Call | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const message of call?.prompt ?? [])
    if (message.role === 'tool' && Array.isArray(message.content))
      for (const part of message.content as Array<{ toolCallId: string; output: unknown }>)
        out[part.toolCallId] = part.output;
  return out;
}

describe('tool schemas converted once per process', () => {
  it.each(MODELS)('sends %s the tools the runtime would, and validates their calls alike', async (_, make) => {
    const reference = scripted(make());
    await answer(
      reference.model,
      Object.fromEntries(
        TOOLS.map((t) => [t.id, createTool({ ...t, inputSchema: t.inputSchema as never, execute: echo as never })]),
      ),
    );
    const raw = make();
    const cached = scripted(raw);
    const tools = () => Object.fromEntries(TOOLS.map((t) => [t.id, runtimeTool({ ...t, execute: echo }, raw)]));
    // Twice: the first run converts, the second takes the conversion made by the first.
    for (let i = 0; i < 2; i++) {
      cached.calls.length = 0;
      await answer(withoutStrictFlags(cached.model), tools());
      expect(cached.calls).toHaveLength(2);
      expect(cached.calls[0]!.tools).toHaveLength(TOOLS.length);
      expect(cached.calls[0]!.tools).toEqual(reference.calls[0]!.tools);
      for (const t of cached.calls[0]!.tools ?? []) expect(t).not.toHaveProperty('strict');
      const got = results(cached.calls[1]);
      expect(got).toEqual(results(reference.calls[1]));
      // The calls were validated: the first ran with its nulls cleaned up, the second was refused.
      expect(JSON.stringify(got.call_1)).toContain('"page":2');
      expect(JSON.stringify(got.call_2)).toMatch(/validation/i);
    }
  });
});
