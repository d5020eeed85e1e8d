/**
 * Step boundaries a run can be taken over from. After each model step that called tools, before
 * any of them runs, the step's output (its text, its tool calls) and the usage so far are stored as
 * the run's checkpoint (`RunRecorder.checkpoint`): an instance that takes the run over goes on from
 * there and asks the model again only for a step that was cut off. The step that ends the answer
 * (no tool calls) is stored by the run's end instead (run-to-end.ts), in the same statement.
 *
 * How the boundary is made reliable. The runtime starts a step's tools once the model's stream for
 * that step has ended (`eagerToolExecution: false`; by default it would start each tool as soon as
 * its call is streamed), and the run reads the runtime's output stream on its own, a little behind.
 * So the model is wrapped: when the provider's `finish` part of a step arrives, the wrapper holds
 * it until the run's reader has turned everything the step streamed into events (its text, every
 * tool call) and the checkpoint is stored, then lets it through. Only then can the runtime end the
 * step and run its tools. A reader that does not catch up within `catchUpMs` (it never should) or
 * a checkpoint that fails skips this step's checkpoint (logged): a takeover then goes on from the
 * previous one, which is slower but never wrong.
 */
import { toolCallIdRenamer } from './model';
import { type RuntimeModel, withDoStream } from './runtime-model';
import type { Usage } from './usage';

type StreamPart = { type: string; [k: string]: unknown };

/** One model step's end, as the checkpoint stores it. */
export interface StepEnd {
  /** The provider's usage of this step (input and output tokens), when it said. */
  usage: Usage;
  /** The step made no tool call: the answer is complete (the run's end stores it). */
  final: boolean;
}

/**
 * A token count of a provider's `finish` part: a number, or (the provider interface of AI SDK 6)
 * an object whose `total` is the count. Anything else is no count.
 */
export function tokenCount(v: unknown): number | undefined {
  const n = typeof v === 'object' && v !== null ? (v as { total?: unknown }).total : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** What the run's reader has turned into events so far (fed by the normalizer). */
export class StepProgress {
  private text = 0;
  private readonly calls = new Set<string>();
  private waiter: (() => void) | undefined;

  /** The reader sent this many characters of a text delta. */
  sawText(chars: number): void {
    this.text += chars;
    this.waiter?.();
  }

  /** The reader sent a complete tool call. */
  sawCall(toolCallId: string): void {
    this.calls.add(toolCallId);
    this.waiter?.();
  }

  /** Resolves true once the reader has sent `text` characters and every call in `calls`; false on timeout. */
  caughtUp(text: number, calls: readonly string[], timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    const done = () => this.text >= text && calls.every((c) => this.calls.has(c));
    if (done()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const finish = (ok: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiter = undefined;
        resolve(ok);
      };
      const onAbort = () => finish(false);
      const timer = setTimeout(() => finish(false), timeoutMs);
      signal.addEventListener('abort', onAbort);
      this.waiter = () => {
        if (done()) finish(true);
      };
    });
  }
}

/**
 * The model as a run calls it, with a checkpoint after each step (see above). `onStep` stores the
 * checkpoint; it is called once per step that ended with the provider's `finish`, after the reader
 * caught up. One wrapper per run. With `freshToolCallIds` it also gives the tool calls ids of the
 * product's own, as `withFreshToolCallIds` does (model.ts), in the same stream layer: every text
 * delta of a run passes one wrapper, not two.
 */
export function withStepCheckpoints(
  model: RuntimeModel,
  progress: StepProgress,
  opts: {
    signal: AbortSignal;
    onStep: (step: StepEnd, caughtUp: boolean) => Promise<void>;
    catchUpMs?: number;
    freshToolCallIds?: boolean;
  },
): RuntimeModel {
  // Totals since the run began: the reader's counts are cumulative too.
  let text = 0;
  const calls: string[] = [];
  return withDoStream<{ stream: ReadableStream<StreamPart> }>(model, (doStream) => async (options) => {
    const res = await doStream(options);
    const source = res.stream.getReader();
    const rename = opts.freshToolCallIds ? toolCallIdRenamer() : undefined;
    let stepCalls = 0;
    const stream = new ReadableStream<StreamPart>({
      async pull(controller) {
        const read = await source.read();
        if (read.done) return controller.close();
        const value = rename ? rename(read.value) : read.value;
        if (value.type === 'text-delta') text += String(value.delta ?? '').length;
        else if (value.type === 'tool-call') {
          calls.push(String(value.toolCallId));
          stepCalls += 1;
        } else if (value.type === 'finish') {
          const caughtUp = await progress.caughtUp(text, calls, opts.catchUpMs ?? 5_000, opts.signal);
          const u = (value.usage ?? {}) as { inputTokens?: unknown; outputTokens?: unknown };
          const inputTokens = tokenCount(u.inputTokens);
          const outputTokens = tokenCount(u.outputTokens);
          await opts.onStep(
            {
              usage: {
                ...(inputTokens !== undefined ? { inputTokens } : {}),
                ...(outputTokens !== undefined ? { outputTokens } : {}),
              },
              final: stepCalls === 0,
            },
            caughtUp,
          );
        }
        controller.enqueue(value);
      },
      cancel(reason) {
        return source.cancel(reason);
      },
    });
    return { ...res, stream };
  });
}
