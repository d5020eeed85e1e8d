/**
 * The floor of `npm run bench:next`: the bare Mastra agent (no tools, a short system prompt, no
 * memory) on the same OpenAI-compatible model the product uses, through the same provider package,
 * streamed as AG-UI server-sent events. No authentication, no database, no persistence. Served by
 * the Next.js route of this folder (`app/api/agent/route.ts`) and by a plain `node:http` server
 * (`plain-server.ts`), so the product can be compared with both.
 */
import { randomUUID } from 'node:crypto';
import { EventEncoder } from '@ag-ui/encoder';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { Agent } from '@mastra/core/agent';
import { z } from 'zod';

/** What the floor reads from a request: AG-UI's run input, only the messages. */
const FloorRequestSchema = z.object({
  messages: z.array(z.object({ role: z.string(), content: z.string() })).min(1),
});

export class FloorInputError extends Error {}

/** Parses a request body; a body that is no AG-UI run input throws a FloorInputError. */
export function parseFloorRequest(text: string): { prompt: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new FloorInputError('the body is not JSON');
  }
  const parsed = FloorRequestSchema.safeParse(json);
  if (!parsed.success) throw new FloorInputError('the body is no AG-UI run input with messages');
  return { prompt: parsed.data.messages.at(-1)!.content };
}

const SettingsSchema = z.object({
  OPENAI_COMPATIBLE_BASE_URL: z.url(),
  OPENAI_COMPATIBLE_MODEL: z.string().min(1),
});

/** The provider's model, built once per process (as the product builds its own once). */
let model: ReturnType<ReturnType<typeof createOpenAICompatible>['chatModel']> | undefined;
function floorModel() {
  if (!model) {
    const settings = SettingsSchema.parse(process.env);
    model = createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: settings.OPENAI_COMPATIBLE_BASE_URL,
      includeUsage: true,
    }).chatModel(settings.OPENAI_COMPATIBLE_MODEL);
  }
  return model;
}

/**
 * The answer's headers, as the product sends them: `no-transform` keeps Next.js from compressing the
 * stream (it gzips a response otherwise when the client accepts it, as fetch and browsers do).
 */
export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  'x-accel-buffering': 'no',
};

const encoder = new EventEncoder();
type Chunk = { type: string; payload?: { text?: string; error?: unknown } };

/** The AG-UI events of one answer, as SSE frames: a run, one assistant message of text deltas, its end. */
export async function* floorEvents(prompt: string): AsyncGenerator<string> {
  const threadId = randomUUID();
  const runId = randomUUID();
  const messageId = randomUUID();
  yield encoder.encodeSSE({ type: 'RUN_STARTED', threadId, runId } as never);
  const agent = new Agent({
    id: 'floor',
    name: 'floor',
    instructions: 'You answer questions briefly.',
    model: floorModel() as never,
  });
  const output = await agent.stream([{ role: 'user', content: prompt }] as never);
  yield encoder.encodeSSE({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' } as never);
  for await (const chunk of output.fullStream as unknown as AsyncIterable<Chunk>) {
    if (chunk.type === 'text-delta')
      yield `data: ${JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId, delta: chunk.payload?.text ?? '' })}\n\n`;
    else if (chunk.type === 'error') {
      // A failed answer ends as AG-UI says, and the server's log says why.
      console.error('floor: the model stream failed:', chunk.payload?.error);
      yield encoder.encodeSSE({ type: 'RUN_ERROR', message: 'the model stream failed', code: 'MODEL_ERROR' } as never);
      return;
    }
  }
  yield encoder.encodeSSE({ type: 'TEXT_MESSAGE_END', messageId } as never);
  yield encoder.encodeSSE({ type: 'RUN_FINISHED', threadId, runId } as never);
}
