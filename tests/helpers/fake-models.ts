// Local fake model servers speaking the providers' real wire formats, for tests and the bench:
// OpenAI-compatible chat completions (SSE) and Amazon Bedrock ConverseStream (AWS binary
// event-stream framing). Each answers from a script of turns and records the requests it got.
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

export interface ScriptedTurn {
  /** Text streamed in these chunks. */
  text?: string[];
  /** Tool calls made after the text. */
  toolCalls?: Array<{ name: string; args: Record<string, unknown> }>;
  /** Answer with this HTTP status and error body instead (429 = throttling). */
  status?: number;
  /** Send an in-stream error after the text (Bedrock: an exception frame). */
  streamError?: 'throttling' | 'internal';
  /** Delay between chunks (ms). */
  delayMs?: number;
}

export interface FakeServer {
  url: string;
  /** Parsed JSON bodies of the requests received, in order. */
  requests: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

type Script = ScriptedTurn[] | ((body: Record<string, unknown>, index: number) => ScriptedTurn);

function nextTurn(script: Script, body: Record<string, unknown>, index: number): ScriptedTurn {
  if (typeof script === 'function') return script(body, index);
  return script[Math.min(index, script.length - 1)] ?? { text: ['(script ended)'] };
}

async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
  } catch {
    return {};
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function listen(handler: http.RequestListener): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

function closer(server: http.Server) {
  return () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
}

/** OpenAI-compatible `POST /chat/completions` with `stream: true` (SSE `data:` chunks). */
export async function startFakeOpenAI(script: Script): Promise<FakeServer> {
  const requests: Array<Record<string, unknown>> = [];
  const { server, url } = await listen(async (req, res) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const body = await readJson(req);
    const turn = nextTurn(script, body, requests.length);
    requests.push(body);
    if (turn.status) {
      res.writeHead(turn.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: turn.status === 429 ? 'Rate limit reached' : 'Upstream error', type: 'error' } }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: String(body.model ?? 'm') };
    send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    for (const t of turn.text ?? []) {
      if (turn.delayMs) await sleep(turn.delayMs);
      if (res.destroyed) return;
      send({ ...base, choices: [{ index: 0, delta: { content: t }, finish_reason: null }] });
    }
    (turn.toolCalls ?? []).forEach((tc, i) => {
      const args = JSON.stringify(tc.args);
      send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, id: `call_${randomBytes(6).toString('hex')}_${i}`, type: 'function', function: { name: tc.name, arguments: '' } }] }, finish_reason: null }] });
      const mid = Math.floor(args.length / 2);
      for (const part of [args.slice(0, mid), args.slice(mid)]) {
        send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: part } }] }, finish_reason: null }] });
      }
    });
    if (turn.streamError) {
      res.end('data: {"error": {"message": "stream broke"}}\n\n');
      return;
    }
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: turn.toolCalls?.length ? 'tool_calls' : 'stop' }] });
    send({ ...base, choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
    res.end('data: [DONE]\n\n');
  });
  return { url: `${url}/v1`, requests, close: closer(server) };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(headers: Record<string, string>, body: unknown): Uint8Array {
  const h: Record<string, { type: 'string'; value: string }> = {};
  for (const [k, v] of Object.entries(headers)) h[k] = { type: 'string', value: v };
  return codec.encode({ headers: h, body: fromUtf8(JSON.stringify(body)) });
}
const event = (type: string, body: unknown) => frame({ ':message-type': 'event', ':event-type': type, ':content-type': 'application/json' }, body);

/** Amazon Bedrock `POST /model/{id}/converse-stream`, answered in the AWS event-stream framing. */
export async function startFakeBedrock(script: Script): Promise<FakeServer & { authorization: string[] }> {
  const requests: Array<Record<string, unknown>> = [];
  const authorization: string[] = [];
  const { server, url } = await listen(async (req, res) => {
    if (req.method !== 'POST' || !/\/model\/[^/]+\/converse-stream$/.test(req.url ?? '')) {
      res.writeHead(404).end();
      return;
    }
    authorization.push(String(req.headers.authorization ?? ''));
    const body = await readJson(req);
    const turn = nextTurn(script, body, requests.length);
    requests.push(body);
    if (turn.status) {
      res.writeHead(turn.status, {
        'content-type': 'application/json',
        'x-amzn-errortype': turn.status === 429 ? 'ThrottlingException' : 'InternalServerException',
      });
      res.end(JSON.stringify({ message: turn.status === 429 ? 'Too many requests, please wait before trying again.' : 'Internal error' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    res.write(event('messageStart', { role: 'assistant' }));
    let block = 0;
    if (turn.text?.length) {
      for (const t of turn.text) {
        if (turn.delayMs) await sleep(turn.delayMs);
        if (res.destroyed) return;
        res.write(event('contentBlockDelta', { contentBlockIndex: block, delta: { text: t } }));
      }
      res.write(event('contentBlockStop', { contentBlockIndex: block }));
      block += 1;
    }
    if (turn.streamError) {
      const type = turn.streamError === 'throttling' ? 'throttlingException' : 'internalServerException';
      res.end(frame({ ':message-type': 'exception', ':exception-type': type, ':content-type': 'application/json' }, { message: 'Too many tokens, please wait before trying again.' }));
      return;
    }
    for (const [i, tc] of (turn.toolCalls ?? []).entries()) {
      res.write(event('contentBlockStart', { contentBlockIndex: block, start: { toolUse: { toolUseId: `tooluse_${randomBytes(6).toString('hex')}_${i}`, name: tc.name } } }));
      res.write(event('contentBlockDelta', { contentBlockIndex: block, delta: { toolUse: { input: JSON.stringify(tc.args) } } }));
      res.write(event('contentBlockStop', { contentBlockIndex: block }));
      block += 1;
    }
    res.write(event('messageStop', { stopReason: turn.toolCalls?.length ? 'tool_use' : 'end_turn' }));
    res.end(event('metadata', { usage: { inputTokens: 13, outputTokens: 5, totalTokens: 18 }, metrics: { latencyMs: 1 } }));
  });
  return { url, requests, authorization, close: closer(server) };
}
