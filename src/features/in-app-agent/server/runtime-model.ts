/**
 * A language model as the runtime accepts it (AI SDK v2/v3 specification objects): what the
 * provider factory (`model.ts`) returns and the offline demo model (`demo-model.ts`) is, kept here
 * so neither of the two imports the other's module.
 */
export type RuntimeModel = { specificationVersion: 'v2' | 'v3'; provider: string; modelId: string } & Record<
  string,
  unknown
>;

/**
 * The model with `doStream` replaced by what `wrap` makes of the model's own (bound); every other
 * property as the model has it, methods bound to it. How the run's wrappers (the usage meter, step
 * checkpoints, fresh tool call ids, the tools' flags) each add their part to a model call.
 */
export function withDoStream<R>(
  model: RuntimeModel,
  wrap: (doStream: (options: unknown) => Promise<R>) => (options: unknown) => Promise<R>,
): RuntimeModel {
  const own = (model as unknown as { doStream: (options: unknown) => Promise<R> }).doStream.bind(model);
  const doStream = wrap(own);
  return new Proxy(model, {
    get(target, prop) {
      if (prop === 'doStream') return doStream;
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
