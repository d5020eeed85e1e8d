/**
 * The run's tools as the runtime takes them, with their input schemas converted once per process and
 * model instead of on every run.
 *
 * On every `agent.stream` the runtime turns each tool's schema into the JSON Schema the model is sent,
 * through the provider's compatibility layer (the OpenAI layer for an OpenAI-compatible model,
 * Anthropic's for Claude, …): three JSON copies and two walks of each schema, for every tool of every
 * run. What comes out depends only on the schema and the model (its provider and id), so it is made
 * here once, as the runtime makes it (the same layer, picked the same way), and the run's tools carry it ready.
 *
 * A tool marked `strict: false` is one the runtime passes through without its layer; the mark is
 * only that signal. `withoutStrictFlags` takes it off the tools of every model call again, so the
 * provider is sent exactly what it is sent without the cache (tests/unit/in-app-agent/tool-schemas.test.ts
 * compares the two, tool by tool, for each provider the product configures).
 */
import { createTool } from '@mastra/core/tools';
import {
  AnthropicSchemaCompatLayer,
  DeepSeekSchemaCompatLayer,
  GoogleSchemaCompatLayer,
  MetaSchemaCompatLayer,
  OpenAIReasoningSchemaCompatLayer,
  OpenAISchemaCompatLayer,
} from '@mastra/schema-compat';
import { standardSchemaToJSONSchema, toStandardSchema } from '@mastra/schema-compat/schema';
import type { z } from 'zod';
import { type RuntimeModel, withDoStream } from './runtime-model';

type JsonSchemaOptions = { target?: string; libraryOptions?: { override?: unknown } };
/** A standard schema with JSON Schema (what the runtime's tools take as their input schema). */
type StandardWithJson = {
  '~standard': {
    version: 1;
    vendor: string;
    validate: (value: unknown) => unknown;
    jsonSchema: Record<'input' | 'output', (options?: JsonSchemaOptions) => unknown>;
  };
};
type CompatLayer = { shouldApply(): boolean; processToCompatSchema(schema: unknown): unknown };

/** What the runtime's compatibility layers choose by (a configured model never changes these). */
const modelInfo = (model: RuntimeModel) => ({
  provider: model.provider,
  modelId: model.modelId,
  supportsStructuredOutputs: model.supportsStructuredOutputs === true,
});

/** By model: the compatibility layer the runtime applies to its tools' schemas (null: none). */
const layers = new Map<string, CompatLayer | null>();

/** The layer the runtime would pick for this model: the first of its layers, in its order, that applies. */
function compatLayer(model: RuntimeModel): CompatLayer | null {
  const info = modelInfo(model);
  const key = `${info.provider}\u0000${info.modelId}\u0000${info.supportsStructuredOutputs}`;
  let layer = layers.get(key);
  if (layer === undefined) {
    const all: CompatLayer[] = [
      new OpenAIReasoningSchemaCompatLayer(info as never),
      new OpenAISchemaCompatLayer(info as never),
      new GoogleSchemaCompatLayer(info as never),
      new AnthropicSchemaCompatLayer(info as never),
      new DeepSeekSchemaCompatLayer(info as never),
      new MetaSchemaCompatLayer(info as never),
    ];
    layer = all.find((l) => l.shouldApply()) ?? null;
    layers.set(key, layer);
  }
  return layer;
}

/** By schema, then by layer: the schema as the runtime takes it for models of that layer. */
const converted = new WeakMap<z.ZodType, Map<CompatLayer | null, StandardWithJson>>();

/**
 * The tool's input schema for this model, made on the first call for each schema and layer: it
 * validates as the runtime's layer does (which turns the nulls it lets a model send for a left-out
 * field back into nothing), and its JSON Schema is the one the runtime would make, kept.
 */
function convertedSchema(schema: z.ZodType, model: RuntimeModel): StandardWithJson {
  const layer = compatLayer(model);
  let byLayer = converted.get(schema);
  if (!byLayer) {
    byLayer = new Map();
    converted.set(schema, byLayer);
  }
  const known = byLayer.get(layer);
  if (known) return known;
  const standard = toStandardSchema(schema as never) as unknown as StandardWithJson;
  const used = (layer ? layer.processToCompatSchema(standard) : standard) as StandardWithJson;
  const input = standardSchemaToJSONSchema(used as never, { io: 'input' });
  let output: unknown;
  const made: StandardWithJson = {
    '~standard': {
      version: 1,
      vendor: used['~standard'].vendor,
      validate: (value) => used['~standard'].validate(value),
      jsonSchema: {
        input: () => input,
        output: () => (output ??= standardSchemaToJSONSchema(used as never, { io: 'output' })),
      },
    },
  };
  byLayer.set(layer, made);
  return made;
}

/** One tool of the run: what the runtime's `createTool` takes, with the input schema as zod. */
export interface RunToolDefinition {
  id: string;
  description: string;
  inputSchema: z.ZodType;
  execute: (input: unknown, context?: unknown) => Promise<unknown>;
}

/** A tool of the run as the runtime takes it, its schema converted for `model` once per process. */
export function runtimeTool(tool: RunToolDefinition, model: RuntimeModel): unknown {
  return createTool({
    id: tool.id,
    description: tool.description,
    inputSchema: convertedSchema(tool.inputSchema, model) as never,
    // The runtime's signal to take the schema as it is (see above); not sent (withoutStrictFlags).
    strict: false,
    execute: tool.execute as never,
  });
}

type FunctionTool = { type?: string; strict?: boolean };
type CallOptions = { tools?: FunctionTool[] };

/**
 * The model as the run calls it: each call's tools without the `strict: false` that only told the
 * runtime their schemas were converted (no product tool asks a provider for anything by it).
 */
export function withoutStrictFlags(model: RuntimeModel): RuntimeModel {
  return withDoStream(model, (doStream) => (options) => doStream(unflagged(options)));
}

function unflagged(options: unknown): unknown {
  const tools = (options as CallOptions | undefined)?.tools;
  if (!tools?.some((t) => t?.type === 'function' && t.strict === false)) return options;
  return {
    ...(options as object),
    tools: tools.map((t) => {
      if (t?.type !== 'function' || t.strict !== false) return t;
      const { strict: _flag, ...sent } = t;
      return sent;
    }),
  };
}
