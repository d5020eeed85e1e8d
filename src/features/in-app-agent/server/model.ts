/**
 * Model provider factory: Amazon Bedrock, any OpenAI-compatible endpoint (Ollama, vLLM, LM Studio,
 * llama.cpp server, OpenAI), or the offline demo model. Chosen by validated env.
 */
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { type Env, newId } from '../host';
import type { ModelInfo } from '../schema';
import { createDemoModel } from './demo-model';
import { type RuntimeModel, withDoStream } from './runtime-model';

export interface ModelHandle {
  model: RuntimeModel;
  info: ModelInfo;
  /** What the model reads besides text (default: `modelAccepts` of the settings). */
  accepts?: ModelAccepts;
}

export type ProviderName = ModelInfo['provider'];

/** Whether a model reads images and PDF documents attached to a message. */
export interface ModelAccepts {
  images: boolean;
  documents: boolean;
}

/**
 * What the configured model reads: `AGENT_MODEL_VISION` / `AGENT_MODEL_DOCUMENTS` when set, else the
 * provider's default. The demo model and Bedrock's Converse models take both; an OpenAI-compatible
 * server may serve a text-only model, so it takes neither until the settings say so.
 */
export function modelAccepts(
  e: Pick<Env, 'AGENT_MODEL_VISION' | 'AGENT_MODEL_DOCUMENTS'>,
  provider: ProviderName,
): ModelAccepts {
  const byDefault = provider !== 'openai-compatible';
  return { images: e.AGENT_MODEL_VISION ?? byDefault, documents: e.AGENT_MODEL_DOCUMENTS ?? byDefault };
}

/** Which provider the environment selects: explicit, else Bedrock when AWS is configured, else demo. */
export function selectProvider(e: Env): ProviderName {
  if (e.AGENT_MODEL_PROVIDER) return e.AGENT_MODEL_PROVIDER;
  if (e.AWS_REGION && e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY) return 'bedrock';
  return 'demo';
}

export class ModelConfigError extends Error {}

export function createModel(e: Env): ModelHandle {
  const provider = selectProvider(e);
  if (provider === 'bedrock') {
    if (!e.AWS_REGION) throw new ModelConfigError('AWS_REGION is required for the bedrock provider');
    const bedrock = createAmazonBedrock({
      region: e.AWS_REGION,
      ...(e.AWS_ACCESS_KEY_ID && e.AWS_SECRET_ACCESS_KEY
        ? {
            accessKeyId: e.AWS_ACCESS_KEY_ID,
            secretAccessKey: e.AWS_SECRET_ACCESS_KEY,
            sessionToken: e.AWS_SESSION_TOKEN,
          }
        : {}),
      ...(e.BEDROCK_BASE_URL ? { baseURL: e.BEDROCK_BASE_URL } : {}),
    });
    return {
      model: bedrock(e.BEDROCK_MODEL_ID) as unknown as RuntimeModel,
      info: { provider, modelId: e.BEDROCK_MODEL_ID, label: `Amazon Bedrock · ${e.BEDROCK_MODEL_ID}`, demo: false },
    };
  }
  if (provider === 'openai-compatible') {
    if (!e.OPENAI_COMPATIBLE_BASE_URL || !e.OPENAI_COMPATIBLE_MODEL) {
      throw new ModelConfigError(
        'OPENAI_COMPATIBLE_BASE_URL and OPENAI_COMPATIBLE_MODEL are required for the openai-compatible provider',
      );
    }
    const oa = createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: e.OPENAI_COMPATIBLE_BASE_URL,
      ...(e.OPENAI_COMPATIBLE_API_KEY ? { apiKey: e.OPENAI_COMPATIBLE_API_KEY } : {}),
      includeUsage: true,
    });
    return {
      model: oa.chatModel(e.OPENAI_COMPATIBLE_MODEL) as unknown as RuntimeModel,
      info: {
        provider,
        modelId: e.OPENAI_COMPATIBLE_MODEL,
        label: `${e.OPENAI_COMPATIBLE_MODEL} (OpenAI-compatible)`,
        demo: false,
      },
    };
  }
  return { model: createDemoModel(), info: DEMO_MODEL_INFO };
}

/**
 * The model of the current configuration, built once per validated environment (a provider client
 * per run would be wasted work). Configuration errors are not cached: they are thrown each time.
 */
let cachedModel: { env: Env; handle: ModelHandle } | undefined;
export function modelFor(e: Env): ModelHandle {
  if (cachedModel?.env !== e) cachedModel = { env: e, handle: createModel(e) };
  return cachedModel.handle;
}

export const DEMO_MODEL_INFO: ModelInfo = {
  provider: 'demo',
  modelId: 'demo',
  label: 'Demo model (offline)',
  demo: true,
};

type ProviderError = {
  statusCode?: number;
  status?: number;
  name?: string;
  message?: string;
  cause?: unknown;
  lastError?: unknown;
};

/**
 * The error and those it wraps, outermost first: the client's error after its retries carries the
 * last answer (`lastError`), a runtime's wrapper its `cause`. A few levels at most.
 */
function errorChain(err: unknown): ProviderError[] {
  const chain: ProviderError[] = [];
  let e: unknown = err;
  while (e && typeof e === 'object' && chain.length < 4) {
    const pe = e as ProviderError;
    chain.push(pe);
    e = pe.lastError ?? pe.cause;
  }
  return chain;
}

/** Wording of a provider throttling this account (Bedrock's in-stream body has no exception type). */
const THROTTLED = /throttl|too many (requests|tokens)|rate.?limit|rate exceeded|please wait before trying again/i;
/**
 * Wording of a provider too busy to take the request: OpenAI's and vLLM's "overloaded", Anthropic's
 * `overloaded_error`, Bedrock's ServiceUnavailableException (in the stream only its message, "Bedrock is
 * unable to process your request.") and ModelNotReadyException ("Model is not ready for inference").
 */
const OVERLOADED = /overloaded|service.?unavailable|unable to process your request|model is not ready|not ready yet/i;
/** Wording of a provider that could not be reached at all. */
const UNREACHABLE =
  /ECONNREFUSED|ENOTFOUND|ECONNRESET|EAI_AGAIN|cannot connect|fetch failed|socket hang up|timed? ?out/i;

const RATE_LIMITED = {
  code: 'MODEL_RATE_LIMITED',
  message: 'The model provider is throttling requests. Please try again in a moment.',
} as const;

/** Maps a provider failure to a stable run error code and a message safe to show. */
export function classifyModelError(err: unknown): {
  code: 'MODEL_RATE_LIMITED' | 'MODEL_OVERLOADED' | 'MODEL_UNAVAILABLE' | 'MODEL_ERROR';
  message: string;
} {
  const chain = errorChain(err);
  const status = chain.map((e) => e.statusCode ?? e.status).find((s) => typeof s === 'number');
  const text = chain.map((e) => `${e.name ?? ''} ${e.message ?? ''}`).join(' ');
  // Throttling is said in words (Bedrock's in-stream exception has no status); a 429 without them
  // may be a model that is not ready yet, which is the provider being busy.
  if (THROTTLED.test(text)) return RATE_LIMITED;
  if (status === 503 || status === 529 || OVERLOADED.test(text)) {
    return {
      code: 'MODEL_OVERLOADED',
      message: 'The model provider is overloaded right now. Please try again in a moment.',
    };
  }
  if (status === 429) return RATE_LIMITED;
  if (status === 502 || status === 504 || UNREACHABLE.test(text)) {
    return { code: 'MODEL_UNAVAILABLE', message: 'The model provider could not be reached. Please try again later.' };
  }
  return { code: 'MODEL_ERROR', message: 'The model returned an error. Please try again.' };
}

type StreamPart = { type: string; id?: string; toolCallId?: string } & Record<string, unknown>;
const freshIdModels = new WeakMap<object, RuntimeModel>();

/**
 * The model with its tool call ids replaced by ids of our own, fresh for each call of the model.
 * Providers' ids are unique within one response at best: some reuse `call_0` in every response or
 * conversation, which would make two calls of one conversation (their approvals, their results)
 * indistinguishable. Everything downstream (the runtime, tools, events, approvals, the history
 * sent back to the provider) sees only our ids. One wrapper per model, created once.
 */
export function withFreshToolCallIds(model: RuntimeModel): RuntimeModel {
  const known = freshIdModels.get(model);
  if (known) return known;
  const wrapped = withDoStream<{ stream: ReadableStream<StreamPart> }>(model, (doStream) => async (options) => {
    const res = await doStream(options);
    const rename = toolCallIdRenamer();
    // A pulled stream over the provider's reader rather than `pipeThrough`: one read per
    // part instead of a read, a write and a transform (measured: a tenth of the pipeline's
    // cost per text delta with a fast model).
    const source = res.stream.getReader();
    const stream = new ReadableStream<StreamPart>({
      async pull(controller) {
        const { done, value } = await source.read();
        if (done) controller.close();
        else controller.enqueue(rename(value));
      },
      cancel(reason) {
        return source.cancel(reason);
      },
    });
    return { ...res, stream };
  });
  freshIdModels.set(model, wrapped);
  return wrapped;
}

/**
 * The renaming of `withFreshToolCallIds` for one call of the model, for a wrapper that already reads
 * every part (a run's step checkpoints): the same ids without a stream layer of their own.
 */
export function toolCallIdRenamer(): <P extends StreamPart>(part: P) => P {
  const ids = new Map<string, string>();
  const ours = (id: string) => {
    let mine = ids.get(id);
    if (!mine) ids.set(id, (mine = newId('call_')));
    return mine;
  };
  return (part) =>
    part.type === 'tool-input-start' || part.type === 'tool-input-delta' || part.type === 'tool-input-end'
      ? { ...part, id: ours(String(part.id)) }
      : part.type === 'tool-call' || part.type === 'tool-result'
        ? { ...part, toolCallId: ours(String(part.toolCallId)) }
        : part;
}
