/**
 * Elicitation: the MCP server asking the client's user for a choice a tool cannot make itself
 * (`elicitation/create`, protocol 2025-06-18), over a Streamable HTTP endpoint that keeps no state
 * in memory between requests.
 *
 * What a stateless server cannot do, and what it does instead:
 * - Client capabilities are exchanged only in `initialize`, a POST of its own; a later `tools/call`
 *   says nothing about them. So a client that declares `elicitation` gets a session: its
 *   `initialize` answer carries an `Mcp-Session-Id`, which the client then sends with every
 *   request. The id is signed, not stored (`ms1.<payload>.<HMAC>`: who it belongs to, that the
 *   client takes questions, when it expires), so any instance reads it; a forged, expired or
 *   someone else's id is answered 404 (the client starts a new session). A client that does not
 *   declare the capability gets no session, and the endpoint stays what it was.
 * - A server request can only travel on the stream of the client request it relates to: a tool
 *   call in such a session is answered with an SSE stream, which carries the question before the
 *   call's result.
 * - The client's answer is a JSON-RPC response in a new POST, which may reach any instance and a
 *   fresh server that never asked. So the question waits in a row (`elicitation-store.ts`): the
 *   instance that receives the answer records it; the waiting call is woken at once when it is on
 *   the same instance, and reads it within `POLL_MS` otherwise.
 */
import 'server-only';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  ElicitResultSchema,
  type JSONRPCErrorResponse,
  type JSONRPCMessage,
  type JSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Prisma, PrismaClient } from '@/generated/prisma/client';
import { registerGauge } from '@/server/diagnostics';
import { env } from '@/server/env';
import { processWide } from '@/server/process-wide';
import type { McpPrincipal } from './auth';
import { answerElicitation, closeElicitation, openElicitation, readElicitationAnswer } from './elicitation-store';

export const SESSION_HEADER = 'mcp-session-id';
/** How long a session id is good for; then the client is told to start a new session (404). */
const SESSION_TTL_SECONDS = 24 * 3600;
/** How long a tool call waits for the user's answer before it gives up (the call fails with CHOICE_TIMED_OUT). */
const ELICITATION_TIMEOUT_MS = 5 * 60_000;
/** How often a waiting call looks for an answer recorded by another instance. */
const POLL_MS = 500;
const SESSION_VERSION = 'ms1';

/** Who a session (and its questions) belongs to: the API key, or the connected app's grant. */
function principalRef(p: McpPrincipal): string {
  return p.kind === 'oauth' ? `grant:${p.oauth.grantId}` : `key:${p.key.id}`;
}

// ------------------------------------------------------------------------------------------------
// Sessions
// ------------------------------------------------------------------------------------------------

const SessionPayloadSchema = z
  .object({ p: z.string().min(1).max(200), e: z.literal(1), exp: z.number().int().positive() })
  .strict();

function sign(payloadPart: string): Buffer {
  // Its own label, so a session id can never pass for an approval override or the reverse.
  return createHmac('sha256', env().MCP_OVERRIDE_SECRET).update(`mcp-session:${payloadPart}`).digest();
}

/** A session id for `principal`'s client, which declared that it takes questions (elicitation). */
export function mintSession(principal: McpPrincipal, now = Date.now()): string {
  const payload = { p: principalRef(principal), e: 1, exp: Math.floor(now / 1000) + SESSION_TTL_SECONDS };
  const part = Buffer.from(JSON.stringify(payload)).toString('base64url');
  return `${SESSION_VERSION}.${part}.${sign(part).toString('base64url')}`;
}

/**
 * What a request's session id says: that its client takes questions, or nothing usable (forged,
 * malformed, expired, or another principal's: all answered alike).
 */
export function checkSession(id: string, principal: McpPrincipal, now = Date.now()): { elicitation: true } | null {
  const parts = id.split('.');
  if (id.length > 1_000 || parts.length !== 3 || parts[0] !== SESSION_VERSION) return null;
  const [, part, sig] = parts as [string, string, string];
  if (!/^[A-Za-z0-9_-]+$/.test(part) || !/^[A-Za-z0-9_-]+$/.test(sig)) return null;
  const expected = sign(part);
  const given = Buffer.from(sig, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let payload: z.infer<typeof SessionPayloadSchema>;
  try {
    const parsed = SessionPayloadSchema.safeParse(JSON.parse(Buffer.from(part, 'base64url').toString('utf8')));
    if (!parsed.success) return null;
    payload = parsed.data;
  } catch {
    return null;
  }
  if (payload.exp <= Math.floor(now / 1000) || payload.p !== principalRef(principal)) return null;
  return { elicitation: true };
}

// ------------------------------------------------------------------------------------------------
// Questions
// ------------------------------------------------------------------------------------------------

/** What a tool asks: a message and a flat form (MCP elicitation's `requestedSchema`). */
export interface ElicitRequest {
  message: string;
  requestedSchema: { type: 'object'; properties: Record<string, Record<string, unknown>>; required?: string[] };
}

export type ElicitOutcome =
  | { action: 'accept'; content: Record<string, unknown> }
  /** decline: the user said no; cancel: dismissed, or the client answered with an error. */
  | { action: 'decline' | 'cancel' }
  /** No answer in time, or the client went away. */
  | { action: 'unanswered' };

/** Asks the client's user (available to a tool only in a session whose client takes questions). */
export type Elicit = (request: ElicitRequest, signal: AbortSignal) => Promise<ElicitOutcome>;

/** The calls of this process waiting for an answer, by question id: each one's wake-up. */
function waiting(): Map<string, () => void> {
  return processWide('__mcpElicitationsWaiting', () => {
    const map = new Map<string, () => void>();
    registerGauge('mcp.elicitationsWaiting', () => map.size);
    return map;
  });
}

/**
 * The `elicit` of one tool call: sends `elicitation/create` on the call's stream (`send`) and waits
 * for the answer another POST records. Nothing of it outlives the call: its row is deleted and its
 * wake-up dropped when the answer came, the time ran out or the client left.
 */
export function elicitorFor(
  prisma: PrismaClient,
  principal: McpPrincipal,
  send: (message: JSONRPCMessage) => Promise<void>,
): Elicit {
  return async (request, signal) => {
    const id = `eli_${randomBytes(16).toString('base64url')}`;
    const deadline = Date.now() + ELICITATION_TIMEOUT_MS;
    await openElicitation(prisma, { id, principal: principalRef(principal), expiresAt: new Date(deadline) });
    try {
      await send({ jsonrpc: '2.0', id, method: 'elicitation/create', params: { ...request } });
      return outcomeOf(await waitForAnswer(prisma, id, deadline, signal));
    } finally {
      waiting().delete(id);
      await closeElicitation(prisma, id).catch(() => undefined);
    }
  };
}

async function waitForAnswer(prisma: PrismaClient, id: string, deadline: number, signal: AbortSignal) {
  const wakeUps = waiting();
  while (!signal.aborted && Date.now() < deadline) {
    const answer = await readElicitationAnswer(prisma, id);
    if (answer !== null) return answer;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, Math.max(1, Math.min(POLL_MS, deadline - Date.now())));
      signal.addEventListener('abort', done, { once: true });
      wakeUps.set(id, done);
      function done() {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        wakeUps.delete(id);
        resolve();
      }
    });
  }
  return null;
}

function outcomeOf(answer: unknown): ElicitOutcome {
  if (answer === null) return { action: 'unanswered' };
  const parsed = ElicitResultSchema.safeParse((answer as { result?: unknown }).result);
  if (!parsed.success) return { action: 'cancel' };
  if (parsed.data.action === 'accept') return { action: 'accept', content: parsed.data.content ?? {} };
  return { action: parsed.data.action };
}

/** Whether a message is an answer (a JSON-RPC response) rather than a request or notification. */
export function isAnswer(m: JSONRPCMessage): m is JSONRPCResultResponse | JSONRPCErrorResponse {
  return !('method' in m) && 'id' in m;
}

/**
 * Records a client's answer to a question of `principal` and wakes the call waiting for it when it
 * is on this instance; false when no such question waits (unknown, someone else's, answered, expired).
 */
export async function recordAnswer(
  prisma: PrismaClient,
  principal: McpPrincipal,
  answer: JSONRPCResultResponse | JSONRPCErrorResponse,
): Promise<boolean> {
  if (typeof answer.id !== 'string' || !answer.id.startsWith('eli_')) return false;
  const recorded = await answerElicitation(prisma, {
    id: answer.id,
    principal: principalRef(principal),
    response: answer as unknown as Prisma.InputJsonValue,
  });
  if (recorded) waiting().get(answer.id)?.();
  return recorded;
}
