/**
 * The three agent routes, as the store uses them: start a run (POST, answered with its SSE
 * stream), follow a run (GET, from a position or from a snapshot) and stop a run (POST cancel).
 * Requests go same-origin with the session cookie (the routes check both). Every answer is
 * classified here — a stream, a refusal with its stable code, or no answer at all — so the store
 * never reads raw HTTP. `fetch` is injected: the unit tests script the server.
 */
import { attachmentHref, attachmentUploadHref, toAgUiContentPart } from '../attachments';
import {
  type AttachmentPart,
  hasMoreThanText,
  type MessagePart,
  MessagePartSchema,
  type PageContext,
  type ResumeEntry,
  textOfParts,
} from '../schema';
import { errorFromResponse, describeError, type PanelError } from './errors';

/**
 * A user message's AG-UI content: its text as a string when that is all it has (what every AG-UI
 * server reads), else its parts in order as AG-UI content parts (an attachment as an image or
 * document part naming its upload: attachments.ts).
 */
function agUiContent(parts: MessagePart[]): string | unknown[] {
  return hasMoreThanText(parts) ? parts.map(toAgUiContentPart) : textOfParts(parts);
}

export type FetchLike = (input: string, init?: RequestInit) => Promise<Response>;

/** A run's event stream is open. `runId`/`threadId` come from the response headers. */
export interface OpenedStream {
  kind: 'stream';
  runId: string | null;
  threadId: string | null;
  body: ReadableStream<Uint8Array>;
}
/** The server answered with an error (its stable code is in `error.code`). */
export interface Refused {
  kind: 'refused';
  status: number;
  error: PanelError;
}
/** No answer: the network failed (or the request was aborted) before the response arrived. */
interface Unreachable {
  kind: 'unreachable';
  error: PanelError;
}
type OpenResult = OpenedStream | Refused | Unreachable;
/** An upload stored: the part the message will carry. */
type UploadResult = { kind: 'uploaded'; part: AttachmentPart } | Refused | Unreachable;
type CancelResult = { kind: 'stopping' } | { kind: 'ended' } | Refused | Unreachable;

interface StartRunRequest {
  /** The conversation: an existing id, or one the client chose for a new conversation. */
  threadId: string;
  /** A new user message, its parts (never together with `resume`: the server refuses that). */
  message?: { id: string; parts: MessagePart[] };
  resume?: ResumeEntry[];
  /**
   * A new version of a turn: the run that starts the turn it replaces. With `message`, an edit (the
   * turn asks this text instead); without, a regeneration (the turn's own message is asked again).
   */
  version?: { of: string };
  pageContext: PageContext;
}

export interface AgentTransport {
  startRun(request: StartRunRequest, signal: AbortSignal): Promise<OpenResult>;
  /** `after`: the last position received; null attaches from a snapshot of the conversation. */
  followRun(runId: string, after: number | null, signal: AbortSignal): Promise<OpenResult>;
  cancelRun(runId: string): Promise<CancelResult>;
  /** Uploads a file to attach (its bytes as the body; the server decides what it is). */
  uploadAttachment(file: Blob, name: string, signal?: AbortSignal): Promise<UploadResult>;
  /** Removes an upload that was not sent (best effort: an unsent upload is purged after a day anyway). */
  removeAttachment(attachmentId: string): Promise<void>;
}

const RUN_ID_HEADER = 'x-in-app-agent-run-id';
const THREAD_ID_HEADER = 'x-in-app-agent-thread-id';

export function createAgentTransport(deps: { fetch: FetchLike; baseUrl?: string; projectId: string }): AgentTransport {
  const routeBase = `${deps.baseUrl ?? ''}/api/projects/${encodeURIComponent(deps.projectId)}/in-app-agent`;
  const runRoute = (runId: string, action: 'events' | 'cancel') =>
    `${routeBase}/runs/${encodeURIComponent(runId)}/${action}`;

  async function open(url: string, init: RequestInit): Promise<OpenResult> {
    let response: Response;
    try {
      response = await deps.fetch(url, { credentials: 'same-origin', cache: 'no-store', ...init });
    } catch {
      return { kind: 'unreachable', error: describeError('NETWORK') };
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (response.ok && contentType.includes('text/event-stream') && response.body) {
      return {
        kind: 'stream',
        runId: response.headers.get(RUN_ID_HEADER),
        threadId: response.headers.get(THREAD_ID_HEADER),
        body: response.body,
      };
    }
    return {
      kind: 'refused',
      status: response.status,
      error: errorFromResponse(response.status, await readJson(response)),
    };
  }

  return {
    startRun(request, signal) {
      // AG-UI RunAgentInput. The server keeps only the newest user message, the conversation id,
      // the page context and resume answers; history comes from its own storage.
      const body = {
        threadId: request.threadId,
        messages: request.message
          ? [{ id: request.message.id, role: 'user', content: agUiContent(request.message.parts) }]
          : [],
        forwardedProps: { pageContext: request.pageContext, ...(request.version ? { version: request.version } : {}) },
        ...(request.resume ? { resume: request.resume } : {}),
      };
      return open(routeBase, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(body),
        signal,
      });
    },

    followRun(runId, after, signal) {
      const url = after === null ? runRoute(runId, 'events') : `${runRoute(runId, 'events')}?after=${after}`;
      return open(url, { method: 'GET', headers: { accept: 'text/event-stream' }, signal });
    },

    async uploadAttachment(file, name, signal) {
      let response: Response;
      try {
        response = await deps.fetch(`${deps.baseUrl ?? ''}${attachmentUploadHref(deps.projectId, name)}`, {
          method: 'POST',
          credentials: 'same-origin',
          cache: 'no-store',
          headers: { 'content-type': 'application/octet-stream' },
          body: file,
          signal,
        });
      } catch {
        return { kind: 'unreachable', error: describeError('NETWORK') };
      }
      const json = await readJson(response);
      const part = MessagePartSchema.safeParse((json as { attachment?: unknown } | null)?.attachment);
      if (response.status === 201 && part.success && (part.data.type === 'image' || part.data.type === 'file'))
        return { kind: 'uploaded', part: part.data };
      return { kind: 'refused', status: response.status, error: errorFromResponse(response.status, json) };
    },

    async removeAttachment(attachmentId) {
      await deps
        .fetch(`${deps.baseUrl ?? ''}${attachmentHref(deps.projectId, attachmentId)}`, {
          method: 'DELETE',
          credentials: 'same-origin',
          cache: 'no-store',
        })
        .catch(() => undefined);
    },

    async cancelRun(runId) {
      let response: Response;
      try {
        response = await deps.fetch(runRoute(runId, 'cancel'), {
          method: 'POST',
          credentials: 'same-origin',
          cache: 'no-store',
        });
      } catch {
        return { kind: 'unreachable', error: describeError('NETWORK') };
      }
      const json = await readJson(response);
      if (response.status === 202) return { kind: 'stopping' };
      if (response.ok) return { kind: 'ended' };
      return { kind: 'refused', status: response.status, error: errorFromResponse(response.status, json) };
    },
  };
}

async function readJson(response: Response): Promise<unknown> {
  try {
    return (await response.json()) as unknown;
  } catch {
    return null;
  }
}
