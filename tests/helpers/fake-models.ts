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
  /** Use these tool call ids (as providers that number calls `call_0`, `call_1`… in every answer do). */
  toolCallIds?: string[];
  /**
   * Answer with this HTTP status and the provider's error body for it instead: 429 throttling, 503
   * overloaded / service unavailable, 529 overloaded (Anthropic's status, OpenAI-compatible wire),
   * anything else a server error.
   */
  status?: number;
  /**
   * Send an in-stream error after the text (Bedrock: an exception frame; `unavailable` is
   * Bedrock's serviceUnavailableException). The OpenAI-compatible wire has one kind: an error chunk.
   */
  streamError?: 'throttling' | 'internal' | 'unavailable';
  /** Delay between chunks (ms). */
  delayMs?: number;
  /** After the text, send nothing for this long before finishing (a stalled model). */
  stallMs?: number;
  /**
   * After the first `holdAfter` text chunks (default all of them), send nothing until this
   * settles (a test that kills the instance reading this answer mid-stream); then go on.
   */
  hold?: Promise<unknown>;
  holdAfter?: number;
}

/** An image or document a request carried, decoded from the provider's wire format. */
interface ReceivedMedia {
  /** Index of the request it came in. */
  request: number;
  /** `image` (OpenAI `image_url`, Bedrock `image` block) or `document` (OpenAI `file`, Bedrock `document`). */
  kind: 'image' | 'document';
  /** The media type the wire declared (OpenAI: the data URL's; Bedrock: from its `format`). */
  mediaType: string;
  bytes: Buffer;
  /** The document's name (Bedrock) or file name (OpenAI). */
  name?: string;
}

export interface FakeServer {
  url: string;
  /** Parsed JSON bodies of the requests received, in order. */
  requests: Array<Record<string, unknown>>;
  /**
   * Images and documents of the requests, checked as the provider checks them (a part that is not
   * in its wire format is answered 400, as the provider would, and is not listed here).
   */
  media: ReceivedMedia[];
  /** Requests whose client went away before the answer was complete (the caller aborted). */
  abandoned: Array<{ index: number; chunksSent: number }>;
  close(): Promise<void>;
}

/** Waits `ms`, or less when the client has gone away. */
function pause(ms: number, res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    res.once('close', done);
    function done() {
      clearTimeout(t);
      res.off('close', done);
      resolve();
    }
  });
}

/** Waits for `hold` to settle, or less when the client has gone away. */
function untilSettledOrGone(hold: Promise<unknown>, res: http.ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('close', done);
      resolve();
    };
    res.once('close', done);
    hold.then(done, done);
  });
}

/** Records a response closed by the client before it ended. */
function watchAbandon(
  res: http.ServerResponse,
  index: number,
  abandoned: FakeServer['abandoned'],
  sent: () => number,
): void {
  res.once('close', () => {
    if (!res.writableFinished) abandoned.push({ index, chunksSent: sent() });
  });
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

async function listen(
  handler: http.RequestListener,
  keepAliveMs?: number,
): Promise<{ server: http.Server; url: string }> {
  const server = http.createServer(handler);
  if (keepAliveMs !== undefined) server.keepAliveTimeout = keepAliveMs;
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

/** The error body an OpenAI-compatible server answers a failed request with, by status. */
function openAIErrorBody(status: number): unknown {
  if (status === 429) return { error: { message: 'Rate limit reached', type: 'error' } };
  // OpenAI's (and vLLM's) wording for a server that is too busy to take the request.
  if (status === 503) return { error: { message: 'The server is overloaded or not ready yet.', type: 'server_error' } };
  // Anthropic's status and body for an overloaded API (its OpenAI-compatible endpoint says the same).
  if (status === 529) return { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
  return { error: { message: 'Upstream error', type: 'error' } };
}

/** Bedrock's error type (`x-amzn-errortype`) and message for a failed request, by status. */
function bedrockError(status: number): { type: string; message: string } {
  if (status === 429)
    return { type: 'ThrottlingException', message: 'Too many requests, please wait before trying again.' };
  if (status === 503)
    return { type: 'ServiceUnavailableException', message: 'Bedrock is unable to process your request.' };
  return { type: 'InternalServerException', message: 'Internal error' };
}

/** Bedrock's in-stream exception frames: the exception type and the message it carries. */
const BEDROCK_STREAM_ERRORS = {
  throttling: { type: 'throttlingException', message: 'Too many tokens, please wait before trying again.' },
  internal: {
    type: 'internalServerException',
    message: 'The system encountered an unexpected error during processing. Try your request again.',
  },
  unavailable: { type: 'serviceUnavailableException', message: 'Bedrock is unable to process your request.' },
} as const;

/** The first bytes of each media type the fakes accept: what the wire declares must be what the bytes are. */
const MAGIC: Record<string, (b: Buffer) => boolean> = {
  'image/png': (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  'image/jpeg': (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff,
  'image/gif': (b) => b.subarray(0, 4).toString('latin1') === 'GIF8',
  'image/webp': (b) =>
    b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP',
  'application/pdf': (b) => b.subarray(0, 5).toString('latin1') === '%PDF-',
};
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Thrown by a wire check: the fake answers 400 with this message. */
class WireError extends Error {}

/**
 * The images and documents of an OpenAI chat-completions body, checked: a user message's content is
 * a string or parts of `text`, `image_url` (a base64 data URL of a PNG, JPEG, GIF or WebP) or `file`
 * (a base64 PDF data URL in `file_data`, with a `filename`).
 */
function openAIMedia(body: Record<string, unknown>, request: number): ReceivedMedia[] {
  const found: ReceivedMedia[] = [];
  for (const m of (body.messages as Array<{ role: string; content?: unknown }> | undefined) ?? []) {
    if (m.role !== 'user' || typeof m.content === 'string' || m.content === undefined) continue;
    if (!Array.isArray(m.content)) throw new WireError('content must be a string or an array of parts');
    for (const part of m.content as Array<Record<string, unknown>>) {
      if (part.type === 'text' && typeof part.text === 'string') continue;
      if (part.type === 'image_url') {
        const url = String((part.image_url as { url?: unknown } | undefined)?.url ?? '');
        const m2 = /^data:(image\/(?:png|jpeg|gif|webp));base64,(.+)$/.exec(url);
        if (!m2 || !BASE64.test(m2[2]!)) throw new WireError('image_url.url must be a base64 data URL of an image');
        const bytes = Buffer.from(m2[2]!, 'base64');
        if (!MAGIC[m2[1]!]!(bytes)) throw new WireError(`the image is not a ${m2[1]}`);
        found.push({ request, kind: 'image', mediaType: m2[1]!, bytes });
        continue;
      }
      if (part.type === 'file') {
        const file = part.file as { filename?: unknown; file_data?: unknown } | undefined;
        const m2 = /^data:application\/pdf;base64,(.+)$/.exec(String(file?.file_data ?? ''));
        if (!m2 || !BASE64.test(m2[1]!) || typeof file?.filename !== 'string')
          throw new WireError('file must carry a filename and a base64 PDF data URL');
        const bytes = Buffer.from(m2[1]!, 'base64');
        if (!MAGIC['application/pdf']!(bytes)) throw new WireError('the file is not a PDF');
        found.push({ request, kind: 'document', mediaType: 'application/pdf', bytes, name: file.filename });
        continue;
      }
      throw new WireError(`unsupported content part ${JSON.stringify(part.type)}`);
    }
  }
  return found;
}

const BEDROCK_IMAGE_FORMATS: Record<string, string> = {
  png: 'image/png',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

/**
 * The images and documents of a Converse body, checked: content blocks of a user message are
 * `text`, `image` ({format: png|jpeg|gif|webp, source: {bytes: base64}}) or `document` ({format,
 * name, source: {bytes}}), a document's name only letters, digits, single spaces, hyphens,
 * parentheses and brackets (Bedrock refuses any other).
 */
function bedrockMedia(body: Record<string, unknown>, request: number): ReceivedMedia[] {
  const found: ReceivedMedia[] = [];
  for (const m of (body.messages as Array<{ role: string; content?: unknown }> | undefined) ?? []) {
    if (m.role !== 'user') continue;
    for (const block of (m.content as Array<Record<string, unknown>> | undefined) ?? []) {
      if (block.image) {
        const image = block.image as { format?: string; source?: { bytes?: unknown } };
        const mediaType = BEDROCK_IMAGE_FORMATS[image.format ?? ''];
        const data = image.source?.bytes;
        if (!mediaType || typeof data !== 'string' || !BASE64.test(data)) throw new WireError('malformed image block');
        const bytes = Buffer.from(data, 'base64');
        if (!MAGIC[mediaType]!(bytes)) throw new WireError(`the image is not a ${mediaType}`);
        found.push({ request, kind: 'image', mediaType, bytes });
      } else if (block.document) {
        const doc = block.document as { format?: string; name?: string; source?: { bytes?: unknown } };
        const data = doc.source?.bytes;
        if (doc.format !== 'pdf' || typeof data !== 'string' || !BASE64.test(data))
          throw new WireError('malformed document block');
        if (!doc.name || !/^[A-Za-z0-9()[\]-]+(?: [A-Za-z0-9()[\]-]+)*$/.test(doc.name))
          throw new WireError(`invalid document name ${JSON.stringify(doc.name)}`);
        const bytes = Buffer.from(data, 'base64');
        if (!MAGIC['application/pdf']!(bytes)) throw new WireError('the document is not a PDF');
        found.push({ request, kind: 'document', mediaType: 'application/pdf', bytes, name: doc.name });
      }
    }
  }
  return found;
}

/**
 * OpenAI-compatible `POST /chat/completions` with `stream: true` (SSE `data:` chunks).
 * `keepAliveMs`: how long an idle connection stays open (Node's default, 5 s, otherwise); a
 * benchmark that leaves its clients' pooled connections idle between workloads sets it longer, so
 * no request races the server closing its connection.
 */
export async function startFakeOpenAI(script: Script, opts: { keepAliveMs?: number } = {}): Promise<FakeServer> {
  const requests: Array<Record<string, unknown>> = [];
  const media: ReceivedMedia[] = [];
  const abandoned: FakeServer['abandoned'] = [];
  const { server, url } = await listen(async (req, res) => {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404).end();
      return;
    }
    const body = await readJson(req);
    const index = requests.length;
    requests.push(body);
    try {
      media.push(...openAIMedia(body, index));
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: err.message, type: 'invalid_request_error' } }));
      return;
    }
    const turn = nextTurn(script, body, index);
    let sent = 0;
    watchAbandon(res, index, abandoned, () => sent);
    if (turn.status) {
      res.writeHead(turn.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(openAIErrorBody(turn.status)));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const send = (o: unknown) => {
      sent += 1;
      res.write(`data: ${JSON.stringify(o)}\n\n`);
    };
    const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: String(body.model ?? 'm') };
    send({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] });
    const texts = turn.text ?? [];
    for (const [i, t] of texts.entries()) {
      if (turn.hold && i === (turn.holdAfter ?? texts.length)) await untilSettledOrGone(turn.hold, res);
      if (turn.delayMs) await pause(turn.delayMs, res);
      if (res.destroyed) return;
      send({ ...base, choices: [{ index: 0, delta: { content: t }, finish_reason: null }] });
    }
    if (turn.hold && (turn.holdAfter ?? texts.length) >= texts.length) await untilSettledOrGone(turn.hold, res);
    if (turn.stallMs) await pause(turn.stallMs, res);
    if (res.destroyed) return;
    (turn.toolCalls ?? []).forEach((tc, i) => {
      const args = JSON.stringify(tc.args);
      send({
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: i,
                  id: turn.toolCallIds?.[i] ?? `call_${randomBytes(6).toString('hex')}_${i}`,
                  type: 'function',
                  function: { name: tc.name, arguments: '' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      });
      const mid = Math.floor(args.length / 2);
      for (const part of [args.slice(0, mid), args.slice(mid)]) {
        send({
          ...base,
          choices: [
            { index: 0, delta: { tool_calls: [{ index: i, function: { arguments: part } }] }, finish_reason: null },
          ],
        });
      }
    });
    if (turn.streamError) {
      res.end('data: {"error": {"message": "stream broke"}}\n\n');
      return;
    }
    send({
      ...base,
      choices: [{ index: 0, delta: {}, finish_reason: turn.toolCalls?.length ? 'tool_calls' : 'stop' }],
    });
    send({ ...base, choices: [], usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 } });
    res.end('data: [DONE]\n\n');
  }, opts.keepAliveMs);
  return { url: `${url}/v1`, requests, media, abandoned, close: closer(server) };
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(headers: Record<string, string>, body: unknown): Uint8Array {
  const h: Record<string, { type: 'string'; value: string }> = {};
  for (const [k, v] of Object.entries(headers)) h[k] = { type: 'string', value: v };
  return codec.encode({ headers: h, body: fromUtf8(JSON.stringify(body)) });
}
const event = (type: string, body: unknown) =>
  frame({ ':message-type': 'event', ':event-type': type, ':content-type': 'application/json' }, body);

/** Amazon Bedrock `POST /model/{id}/converse-stream`, answered in the AWS event-stream framing. */
export async function startFakeBedrock(script: Script): Promise<FakeServer & { authorization: string[] }> {
  const requests: Array<Record<string, unknown>> = [];
  const media: ReceivedMedia[] = [];
  const abandoned: FakeServer['abandoned'] = [];
  const authorization: string[] = [];
  const { server, url } = await listen(async (req, res) => {
    if (req.method !== 'POST' || !/\/model\/[^/]+\/converse-stream$/.test(req.url ?? '')) {
      res.writeHead(404).end();
      return;
    }
    authorization.push(String(req.headers.authorization ?? ''));
    const body = await readJson(req);
    const index = requests.length;
    requests.push(body);
    try {
      media.push(...bedrockMedia(body, index));
    } catch (err) {
      if (!(err instanceof WireError)) throw err;
      res.writeHead(400, { 'content-type': 'application/json', 'x-amzn-errortype': 'ValidationException' });
      res.end(JSON.stringify({ message: err.message }));
      return;
    }
    const turn = nextTurn(script, body, index);
    let sent = 0;
    watchAbandon(res, index, abandoned, () => sent);
    if (turn.status) {
      const { type, message } = bedrockError(turn.status);
      res.writeHead(turn.status, { 'content-type': 'application/json', 'x-amzn-errortype': type });
      res.end(JSON.stringify({ message }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
    res.write(event('messageStart', { role: 'assistant' }));
    let block = 0;
    if (turn.text?.length) {
      for (const t of turn.text) {
        if (turn.delayMs) await pause(turn.delayMs, res);
        if (res.destroyed) return;
        sent += 1;
        res.write(event('contentBlockDelta', { contentBlockIndex: block, delta: { text: t } }));
      }
      res.write(event('contentBlockStop', { contentBlockIndex: block }));
      block += 1;
    }
    if (turn.stallMs) await pause(turn.stallMs, res);
    if (res.destroyed) return;
    if (turn.streamError) {
      const { type, message } = BEDROCK_STREAM_ERRORS[turn.streamError];
      res.end(
        frame(
          { ':message-type': 'exception', ':exception-type': type, ':content-type': 'application/json' },
          { message },
        ),
      );
      return;
    }
    for (const [i, tc] of (turn.toolCalls ?? []).entries()) {
      res.write(
        event('contentBlockStart', {
          contentBlockIndex: block,
          start: { toolUse: { toolUseId: `tooluse_${randomBytes(6).toString('hex')}_${i}`, name: tc.name } },
        }),
      );
      res.write(
        event('contentBlockDelta', {
          contentBlockIndex: block,
          delta: { toolUse: { input: JSON.stringify(tc.args) } },
        }),
      );
      res.write(event('contentBlockStop', { contentBlockIndex: block }));
      block += 1;
    }
    res.write(event('messageStop', { stopReason: turn.toolCalls?.length ? 'tool_use' : 'end_turn' }));
    res.end(
      event('metadata', { usage: { inputTokens: 13, outputTokens: 5, totalTokens: 18 }, metrics: { latencyMs: 1 } }),
    );
  });
  return { url, requests, media, abandoned, authorization, close: closer(server) };
}
