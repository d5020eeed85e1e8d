/**
 * What a run used, including when it did not finish. The provider reports usage per completed model
 * call (a step) and in total at the end; an answer that is stopped, or fails after it started
 * streaming, has one call cut off that reports nothing, though the provider was paid for it. For
 * that call the meter estimates: its input from the prompt it was sent (the messages and the tool
 * definitions), its output from what it streamed, at about four characters a token, and marks the
 * run's usage as estimated. A call cut off before it streamed anything counts nothing.
 *
 * One meter per run (dropped with it); the prompt is kept by reference and sized only when an
 * estimate is needed.
 */
import { type RuntimeModel, withDoStream } from './runtime-model';

export type Usage = {
  inputTokens?: number;
  outputTokens?: number;
  /** Part of it is an estimate (a model call cut off by Stop or a failure). */
  estimated?: true;
};

/** Characters a token, roughly, for English text and JSON (the estimate's only rule). */
const CHARS_PER_TOKEN = 4;
const tokens = (chars: number) => Math.ceil(chars / CHARS_PER_TOKEN);

type PromptPart = { type?: string; text?: unknown; input?: unknown; output?: unknown; toolName?: unknown };
type CallOptions = { prompt?: Array<{ content?: unknown }>; tools?: unknown[] };

const jsonLength = (v: unknown) => (v === undefined ? 0 : (JSON.stringify(v)?.length ?? 0));

/** Characters of what a model call is sent: the texts of its messages, its tool calls and results, its tools. */
export function promptChars(options: unknown): number {
  const o = (options ?? {}) as CallOptions;
  let n = 0;
  for (const message of o.prompt ?? []) {
    const content = message?.content;
    if (typeof content === 'string') {
      n += content.length;
      continue;
    }
    if (!Array.isArray(content)) continue;
    for (const part of content as PromptPart[]) {
      if (typeof part?.text === 'string') n += part.text.length;
      else
        n +=
          jsonLength(part?.input) +
          jsonLength(part?.output) +
          (typeof part?.toolName === 'string' ? part.toolName.length : 0);
    }
  }
  if (o.tools?.length) n += jsonLength(o.tools);
  return n;
}

export class UsageMeter {
  /**
   * @param lostOutputChars what a model call streamed before the run's instance stopped (a run
   *   taken over): that call was paid for and is asked again, so it is counted, estimated (its
   *   prompt is the first call's of this run).
   */
  constructor(private readonly lostOutputChars = 0) {}

  private firstCallOptions: unknown;
  private reportedInput = 0;
  private reportedOutput = 0;
  private reportedSteps = 0;
  /** Characters streamed since the last completed call was read (text, reasoning, tool-call arguments). */
  private streamedChars = 0;
  /**
   * The options of the latest call, as the model was called with them. Set by the call itself, so
   * it may already be the next call's while the reader is still at the previous call's end: only
   * the call side sets it, only the reader side counts steps and characters.
   */
  private callOptions: unknown;
  /** The provider's total, when the run's stream finished. */
  private total: Usage | undefined;

  /** The model as this run calls it: each call's options are noted (by reference) before it is made. */
  watch(model: RuntimeModel): RuntimeModel {
    return withDoStream(model, (doStream) => (options) => {
      this.callOptions = options;
      this.firstCallOptions ??= options;
      return doStream(options);
    });
  }

  /** The call in progress streamed this many characters of output. */
  streamed(chars: number): void {
    this.streamedChars += chars;
  }

  /** A call completed, with the usage its provider reported. */
  stepFinished(usage: { inputTokens?: number; outputTokens?: number } | undefined): void {
    this.reportedSteps += 1;
    this.reportedInput += usage?.inputTokens ?? 0;
    this.reportedOutput += usage?.outputTokens ?? 0;
    this.streamedChars = 0;
  }

  /** The run's stream finished, with the provider's total. */
  finished(usage: { inputTokens?: number; outputTokens?: number } | undefined): void {
    if (usage) this.total = { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens };
  }

  /**
   * The run's usage so far: the provider's total when its stream finished; otherwise the completed
   * calls as reported plus the estimate for a call cut off after it streamed; nothing when neither.
   */
  usage(): Usage {
    const own = this.ownUsage();
    if (this.lostOutputChars <= 0) return own;
    return {
      inputTokens: (own.inputTokens ?? 0) + tokens(promptChars(this.firstCallOptions)),
      outputTokens: (own.outputTokens ?? 0) + tokens(this.lostOutputChars),
      estimated: true,
    };
  }

  private ownUsage(): Usage {
    if (this.total) return this.total;
    const cut = this.streamedChars > 0;
    if (!cut && this.reportedSteps === 0) return {};
    return {
      inputTokens: this.reportedInput + (cut ? tokens(promptChars(this.callOptions)) : 0),
      outputTokens: this.reportedOutput + (cut ? tokens(this.streamedChars) : 0),
      ...(cut ? { estimated: true as const } : {}),
    };
  }
}
