/**
 * What a run needs besides its request: the model, the product's MCP server and the run settings,
 * from the environment and the handler's options. The route handler makes them per request; an
 * instance that takes a run over (takeover.ts) makes them the same way, with the options the
 * process's handler was created with (tests and the bench pass their own models and settings).
 */
import { type Env, env, handleMcpPost, processWide } from '../host';
import { LIMITS } from '../constants';
import { mcpGateway, type McpGateway } from './mcp-gateway';
import { type ModelHandle, modelFor } from './model';
import type { RunSettings } from './run-to-end';

/** The handler's options that shape a run. */
export interface RunOptions {
  /** Builds the model for a run; defaults to the provider selected by the environment. */
  model?: () => ModelHandle;
  /** URL of the product's MCP endpoint, reached over HTTP; defaults to `resolveMcpTarget(env)`. */
  mcpUrl?: string;
  /** Tools that need approval on top of the approval map (tightens only; e.g. `navigate`). */
  requireApproval?: readonly string[];
  /** Persistence cadence (tests, bench). */
  flushIntervalMs?: number;
  heartbeatMs?: number;
  /** Model idle timeout (default AGENT_MODEL_IDLE_TIMEOUT_SECONDS). */
  modelIdleTimeoutMs?: number;
  /** Lifetime of the per-run MCP key, extended by the heartbeat (default LIMITS.runKeyTtlSeconds). */
  runKeyTtlSeconds?: number;
}

/**
 * Where the run's key is sent. `AGENT_MCP_URL` set: that endpoint, over HTTP (an MCP server run
 * on its own). Unset: the product's MCP handler in this process, called with the same Request
 * object and authentication path as over HTTP, without a socket. Never derived from the request:
 * a crafted Host header cannot receive the key.
 */
export function resolveMcpTarget(
  settings: Pick<Env, 'AGENT_MCP_URL'>,
  override?: string,
): { url: string } | { dispatch: typeof handleMcpPost } {
  const url = override ?? settings.AGENT_MCP_URL;
  return url ? { url } : { dispatch: (req: Request) => handleMcpPost(req) };
}

export function runSettingsFrom(settings: Env, opts: RunOptions): RunSettings {
  return {
    maxSteps: settings.AGENT_MAX_STEPS,
    maxRetries: settings.AGENT_MODEL_MAX_RETRIES,
    contextTokens: settings.AGENT_CONTEXT_TOKENS,
    staleSeconds: settings.AGENT_RUN_STALE_SECONDS,
    maxConcurrentRuns: settings.AGENT_MAX_CONCURRENT_RUNS_PER_USER,
    approvalTtlSeconds: settings.AGENT_APPROVAL_TTL_SECONDS,
    keyTtlSeconds: opts.runKeyTtlSeconds ?? LIMITS.runKeyTtlSeconds,
    idleTimeoutMs: opts.modelIdleTimeoutMs ?? settings.AGENT_MODEL_IDLE_TIMEOUT_SECONDS * 1000,
    leaseSeconds: settings.AGENT_RUN_LEASE_SECONDS,
    flushIntervalMs: opts.flushIntervalMs,
    heartbeatMs: opts.heartbeatMs,
    requireApproval: opts.requireApproval?.length ? new Set(opts.requireApproval) : undefined,
    ...(settings.AGENT_MODEL_PRICE_INPUT !== undefined && settings.AGENT_MODEL_PRICE_OUTPUT !== undefined
      ? { prices: { input: settings.AGENT_MODEL_PRICE_INPUT, output: settings.AGENT_MODEL_PRICE_OUTPUT } }
      : {}),
  };
}

export interface RunDeps {
  model: () => ModelHandle;
  gateway: McpGateway;
  settings: RunSettings;
}

const holder = processWide<{ options?: RunOptions }>('__inAppAgentRunOptions', () => ({}));

/** The options of the process's handler (the last one created): runs taken over here use them too. */
export function setRunOptions(opts: RunOptions): void {
  holder.options = opts;
}

/** A run's dependencies now, as the process's handler would make them. */
export function runDeps(opts: RunOptions = holder.options ?? {}): RunDeps {
  const settings = env();
  return {
    model: opts.model ?? (() => modelFor(settings)),
    gateway: mcpGateway(resolveMcpTarget(settings, opts.mcpUrl)),
    settings: runSettingsFrom(settings, opts),
  };
}
