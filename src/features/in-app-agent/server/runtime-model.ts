/**
 * A language model as the runtime accepts it (AI SDK v2/v3 specification objects): what the
 * provider factory (`model.ts`) returns and the offline demo model (`demo-model.ts`) is, kept here
 * so neither of the two imports the other's module.
 */
export type RuntimeModel = { specificationVersion: 'v2' | 'v3'; provider: string; modelId: string } & Record<
  string,
  unknown
>;
