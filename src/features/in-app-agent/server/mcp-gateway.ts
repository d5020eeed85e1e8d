/**
 * How a run reaches the product's MCP server: one gateway per process, no client object, session or
 * process listener per run. Every tool call is a JSON-RPC `tools/call` request carrying the run's
 * own key, answered by the MCP server's own POST handler: in process when the host hands that
 * handler over (the default: the same Request object and authentication path, without a socket),
 * over HTTP when `AGENT_MCP_URL` names a server of its own. Authentication, scopes, the single-use
 * override and the audit therefore apply exactly as for any MCP client.
 *
 * The tool listing depends only on the scopes the key's user holds (and the registry, fixed for
 * the process), so it is asked for once per scope set and reused; over HTTP it is asked for again
 * after a minute, as the server may change under it.
 */
import { describeError, log, processWide, registerGauge } from '../host';
import type { AgentErrorCode } from '../error-codes';

/** The MCP server's POST handler, called in process (`handleMcpPost`). */
export type McpDispatch = (req: Request) => Promise<Response>;

export interface ListedTool {
  name: string;
  description: string;
}

/** A JSON-RPC error from the MCP server (refusals: MISSING_SCOPE, OVERRIDE_*, INVALID_KEY, ...). */
class McpCallError extends Error {
  constructor(
    message: string,
    readonly rpcCode: number,
    /** The server's stable code (`error.data.code`), when it sent one. */
    readonly code: string | null,
    /** HTTP status of the answer (503: the service is unavailable, retry). */
    readonly status: number,
  ) {
    super(message);
  }
}

/** The product's tools could not be listed within the set-up budget: the run must not go on. */
export class ToolsUnavailableError extends Error {
  readonly code: AgentErrorCode = 'TOOLS_UNAVAILABLE';
}

/** Protocol revision sent with every request (the server is stateless: no initialize round trip). */
const PROTOCOL_VERSION = '2025-06-18';
/** How long an HTTP listing is reused. In process the registry cannot change: forever. */
const REMOTE_LISTING_TTL_MS = 60_000;
/** Listing attempts and the pause before each retry (the set-up budget: about 1.5 s). */
const LIST_RETRY_DELAYS_MS = [0, 150, 400, 900];

type RpcAnswer = {
  jsonrpc: '2.0';
  id: number | string | null;
  result?: unknown;
  error?: { code: number; message: string; data?: { code?: unknown } };
};

export interface McpGatewayOptions {
  /** In process: the MCP server's handler. */
  dispatch?: McpDispatch;
  /** Over HTTP: the MCP endpoint (the run key is sent to this URL only). */
  url?: string;
}

export class McpGateway {
  private readonly listings = new Map<string, { at: number; tools: Promise<ListedTool[]> }>();
  private nextId = 1;

  constructor(private readonly opts: McpGatewayOptions) {
    if (!opts.dispatch && !opts.url) throw new Error('An MCP gateway needs a dispatch function or a URL.');
  }

  get inProcess(): boolean {
    return !this.opts.url;
  }

  /** Cached listings (one per scope set): bounded by the number of distinct roles. */
  get cachedListings(): number {
    return this.listings.size;
  }

  private async post(
    secret: string,
    method: string,
    params: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<unknown> {
    const id = this.nextId++;
    const init: RequestInit = {
      method: 'POST',
      headers: {
        authorization: `Bearer ${secret}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': PROTOCOL_VERSION,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      ...(signal ? { signal } : {}),
    };
    const res = this.opts.url
      ? await fetch(this.opts.url, init)
      : await this.opts.dispatch!(new Request('http://in-process/api/public/mcp', init));
    const type = res.headers.get('content-type') ?? '';
    const text = await res.text();
    let answer: RpcAnswer | undefined;
    try {
      answer = type.includes('text/event-stream') ? fromSse(text, id) : (JSON.parse(text) as RpcAnswer);
    } catch {
      answer = undefined;
    }
    if (!answer)
      throw new McpCallError(
        `The MCP server answered ${res.status} without a JSON-RPC message.`,
        -32603,
        null,
        res.status,
      );
    if (answer.error) {
      const code = typeof answer.error.data?.code === 'string' ? answer.error.data.code : null;
      throw new McpCallError(answer.error.message, answer.error.code, code, res.status);
    }
    return answer.result;
  }

  /**
   * The tools the key's user may use, listed once per scope set. Retries within the set-up budget;
   * then throws ToolsUnavailableError (a run never goes on without its tools).
   */
  async listTools(secret: string, scopeKey: string, signal?: AbortSignal): Promise<ListedTool[]> {
    const cached = this.listings.get(scopeKey);
    if (cached && (this.inProcess || Date.now() - cached.at < REMOTE_LISTING_TTL_MS)) {
      try {
        return await cached.tools;
      } catch {
        // A failed listing is not kept: fall through and list again.
      }
    }
    const tools = this.listWithRetries(secret, signal);
    const entry = { at: Date.now(), tools };
    this.listings.set(scopeKey, entry);
    tools.catch(() => {
      if (this.listings.get(scopeKey) === entry) this.listings.delete(scopeKey);
    });
    return tools;
  }

  private async listWithRetries(secret: string, signal?: AbortSignal): Promise<ListedTool[]> {
    let last: unknown;
    for (const delay of LIST_RETRY_DELAYS_MS) {
      if (delay) await sleep(delay, signal);
      if (signal?.aborted) break;
      try {
        const result = (await this.post(secret, 'tools/list', {}, signal)) as {
          tools?: Array<{ name?: unknown; description?: unknown }>;
        };
        const tools = (result?.tools ?? []).flatMap((t) =>
          typeof t.name === 'string'
            ? [{ name: t.name, description: typeof t.description === 'string' ? t.description : t.name }]
            : [],
        );
        if (!tools.length) throw new Error('The MCP server listed no tools.');
        return tools;
      } catch (err) {
        last = err;
        // A refused key will not be accepted on a retry.
        if (err instanceof McpCallError && err.status === 401) break;
      }
    }
    const reason = last instanceof Error ? last.message : String(last);
    log().error({ event: 'tools.unavailable', error: describeError(last) }, "the product's tools could not be listed");
    throw new ToolsUnavailableError(`The product's tools could not be listed: ${reason}`);
  }

  /**
   * Calls one tool with the run's key. Refusals (JSON-RPC errors) throw McpCallError; a tool that
   * ran and failed answers `{isError: true, error}`; success answers its structured content.
   */
  async callTool(
    secret: string,
    call: { name: string; args: Record<string, unknown>; meta?: Record<string, unknown> },
    signal?: AbortSignal,
  ): Promise<unknown> {
    const result = (await this.post(
      secret,
      'tools/call',
      { name: call.name, arguments: call.args, ...(call.meta ? { _meta: call.meta } : {}) },
      signal,
    )) as
      | { structuredContent?: unknown; content?: Array<{ type: string; text?: string }>; isError?: boolean }
      | undefined;
    const text = (result?.content ?? [])
      .filter((c) => c.type === 'text')
      .map((c) => c.text ?? '')
      .join('\n');
    if (result?.isError) return { isError: true, error: text || 'Tool failed.' };
    return result?.structuredContent ?? parseJsonOrText(text);
  }
}

function parseJsonOrText(s: string): unknown {
  if (!s) return {};
  try {
    return JSON.parse(s);
  } catch {
    return { text: s };
  }
}

/** The JSON-RPC answer with `id` in an SSE body (servers that answer requests as a stream). */
function fromSse(text: string, id: number): RpcAnswer | undefined {
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    if (!data) continue;
    const msg = JSON.parse(data) as RpcAnswer;
    if (msg.id === id) return msg;
  }
  return undefined;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

interface Holder {
  gateways: Map<string, McpGateway>;
}
const holder: Holder = processWide<Holder>('__inAppAgentMcpGateways', () => ({ gateways: new Map() }));

/**
 * The process's gateway for a target: in process (`dispatch`) or one URL. Created once and reused;
 * a handful exist at most (one per configured target).
 */
export function mcpGateway(target: { url: string } | { dispatch: McpDispatch }): McpGateway {
  const key = 'url' in target ? `url:${target.url}` : 'in-process';
  let gw = holder.gateways.get(key);
  if (!gw) {
    gw = new McpGateway('url' in target ? { url: target.url } : { dispatch: target.dispatch });
    holder.gateways.set(key, gw);
  }
  return gw;
}

/** Total cached listings over every gateway (diagnostics: must stay bounded). */
function cachedListingCount(): number {
  let n = 0;
  for (const gw of holder.gateways.values()) n += gw.cachedListings;
  return n;
}

registerGauge('inAppAgent.mcpListings', cachedListingCount);
