/**
 * Pure helpers of the approval card: reading interrupts, editing arguments as JSON, diffing the
 * edit, the expiry countdown, plain-language wording, and building the single resume request of a
 * batch. No React here, so it is unit-testable.
 */
import { z } from 'zod';
import {
  ApprovalMetadataSchema,
  type ApprovalDecidedValue,
  type ApprovalPreview,
  type ApprovalReason,
  type ApprovalResponse,
  type Interrupt,
  type ResumeEntry,
} from '../schema';
import { LIMITS } from '../constants';
import { interruptKindOf } from '../interrupt-kinds';
import { formatFieldError, validateJsonSchema, type FieldError } from './json-schema';

export type JsonObject = Record<string, unknown>;

export interface ApprovalRequest {
  interruptId: string;
  toolCallId: string;
  toolName: string;
  args: JsonObject;
  argsFingerprint: string;
  reason: ApprovalReason;
  why: string;
  destructive: boolean;
  message?: string;
  expiresAt?: string;
  inputSchema?: JsonObject;
  /** What the call would change, as the server read it when the call was held. */
  preview?: ApprovalPreview;
  /** The answer may say "always allow in this conversation" (the project's policy lets this tool ask). */
  canAlwaysAllow: boolean;
}

/** Reads a tool-approval interrupt; null for any other interrupt kind or a malformed one. */
export function readApprovalInterrupt(interrupt: Interrupt): ApprovalRequest | null {
  if (interruptKindOf(interrupt.reason) !== 'tool_approval' || !interrupt.toolCallId) return null;
  const meta = ApprovalMetadataSchema.safeParse(interrupt.metadata);
  if (!meta.success) return null;
  return {
    interruptId: interrupt.id,
    toolCallId: interrupt.toolCallId,
    toolName: meta.data.toolName,
    args: meta.data.args,
    argsFingerprint: meta.data.argsFingerprint,
    reason: meta.data.approvalReason,
    why: meta.data.why,
    destructive: meta.data.destructive,
    message: interrupt.message,
    expiresAt: interrupt.expiresAt,
    inputSchema: meta.data.inputSchema,
    ...(meta.data.preview ? { preview: meta.data.preview } : {}),
    canAlwaysAllow: meta.data.canAlwaysAllow === true,
  };
}

const requests = new WeakMap<Interrupt, ApprovalRequest | null>();
/**
 * `readApprovalInterrupt`, once per interrupt object: render snapshots share the interrupts of a
 * view, so a request keeps its identity from one snapshot to the next.
 */
export function approvalRequestOf(interrupt: Interrupt): ApprovalRequest | null {
  let request = requests.get(interrupt);
  if (request === undefined) {
    request = readApprovalInterrupt(interrupt);
    requests.set(interrupt, request);
  }
  return request;
}

export type ParsedArgs = { ok: true; value: JsonObject } | { ok: false; error: string };

/** The argument editor's text must be one JSON object. */
export function parseArgsText(text: string): ParsedArgs {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    const detail = e instanceof Error ? e.message : String(e);
    return { ok: false, error: `Not valid JSON: ${detail}` };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, error: 'The arguments must be a JSON object, like {"title": "…"}.' };
  }
  return { ok: true, value: value as JsonObject };
}

export function formatArgs(args: JsonObject): string {
  return JSON.stringify(args, null, 2);
}

/** JSON with object keys sorted, so key order never counts as a change. */
export function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as JsonObject;
    return `{${Object.keys(obj)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableStringify(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

export interface ArgChange {
  key: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

/** Top-level keys whose values differ between the proposed and the edited arguments. */
export function diffArgs(original: JsonObject, edited: JsonObject): ArgChange[] {
  const keys = [...new Set([...Object.keys(original), ...Object.keys(edited)])].sort();
  const changes: ArgChange[] = [];
  for (const key of keys) {
    const inA = Object.hasOwn(original, key);
    const inB = Object.hasOwn(edited, key);
    if (inA && !inB) changes.push({ key, kind: 'removed', before: original[key] });
    else if (!inA && inB) changes.push({ key, kind: 'added', after: edited[key] });
    else if (stableStringify(original[key]) !== stableStringify(edited[key]))
      changes.push({ key, kind: 'changed', before: original[key], after: edited[key] });
  }
  return changes;
}

/** Required properties of the tool's JSON Schema that the edited arguments lack. */
export function missingRequired(inputSchema: JsonObject | undefined, value: JsonObject): string[] {
  const required = inputSchema?.required;
  if (!Array.isArray(required)) return [];
  return required.filter((k): k is string => typeof k === 'string' && !Object.hasOwn(value, k));
}

export type CheckedArgs =
  | { ok: true; value: JsonObject; errors: [] }
  | { ok: false; value: JsonObject | null; errors: FieldError[] };

/**
 * The argument editor's text, checked the way the server will check it: one JSON object, valid
 * against the tool's input schema (types, enums, required, unknown fields, lengths, ranges), with
 * one message per field. Without a schema only the JSON shape is checked.
 */
export function checkArgsText(text: string, inputSchema: JsonObject | undefined): CheckedArgs {
  const parsed = parseArgsText(text);
  if (!parsed.ok) return { ok: false, value: null, errors: [{ path: '', message: parsed.error }] };
  const errors = validateJsonSchema(inputSchema, parsed.value);
  return errors.length ? { ok: false, value: parsed.value, errors } : { ok: true, value: parsed.value, errors: [] };
}

/** "4:05", "1:02:03"; "0:00" once passed. */
export function formatCountdown(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

export function isExpired(expiresAt: string | undefined, now: number): boolean {
  if (!expiresAt) return false;
  const t = Date.parse(expiresAt);
  return Number.isFinite(t) && t <= now;
}

export const REASON_TEXT: Record<ApprovalReason, { label: string; icon: string; description: string }> = {
  mutating: { label: 'Changes data', icon: '✎', description: 'This action changes data in the project.' },
  destructive: {
    label: 'Destructive',
    icon: '⚠',
    description: 'This action removes or closes something and may not be undoable.',
  },
  outward: { label: 'Sends data out', icon: '↗', description: 'This action sends information outside the product.' },
  policy: {
    label: 'Project setting',
    icon: '⚙',
    description: "This project's tool permissions ask for your approval before the assistant uses this tool.",
  },
  data_flow: {
    label: 'Data-flow check',
    icon: '⇄',
    description:
      'This conversation has read private data and untrusted content; sending anything out needs your review.',
  },
};

/** "create_issue" -> "Create issue". */
export function humanizeToolName(name: string): string {
  const words = name
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .split(/[_\-.\s]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  if (words.length === 0) return name;
  const first = words[0]!;
  return [first.charAt(0).toUpperCase() + first.slice(1), ...words.slice(1)].join(' ');
}

function shortValue(v: unknown, max = 60): string {
  let s: string;
  if (typeof v === 'string') s = `“${v}”`;
  else if (typeof v === 'number' || typeof v === 'boolean' || v === null) s = String(v);
  else s = JSON.stringify(v) ?? '';
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Compact "key: value, key: value" for tool cards. */
export function summarizeArgs(args: string | JsonObject, max = 120): string {
  let obj: unknown = args;
  if (typeof args === 'string') {
    if (!args.trim()) return '';
    try {
      obj = JSON.parse(args);
    } catch {
      return args.length > max ? `${args.slice(0, max - 1)}…` : args;
    }
  }
  if (!obj || typeof obj !== 'object' || Array.isArray(obj)) return shortValue(obj, max);
  const parts = Object.entries(obj as JsonObject).map(([k, v]) => `${k}: ${shortValue(v, 40)}`);
  const s = parts.join(', ');
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** Plain-language sentence: what will happen if the user approves. */
export function describeCall(toolName: string, args: JsonObject): string {
  const detail = summarizeArgs(args, 160);
  return detail ? `${humanizeToolName(toolName)} with ${detail}.` : `${humanizeToolName(toolName)}.`;
}

/** One answer being prepared in a card, before the batch is submitted (also what is kept in storage). */
export const DraftAnswerSchema = z.object({
  decision: z.enum(['approve', 'reject']).nullable(),
  argsText: z.string().max(200_000),
  feedback: z.string().max(LIMITS.maxFeedbackChars * 2),
  /** With approve: later calls of the tool in this conversation run without asking. */
  alwaysInConversation: z.boolean().optional(),
});
export type DraftAnswer = z.infer<typeof DraftAnswerSchema>;

export function initialDraft(req: ApprovalRequest): DraftAnswer {
  return { decision: null, argsText: formatArgs(req.args), feedback: '' };
}

export type BuildResumeResult = { ok: true; resume: ResumeEntry[] } | { ok: false; error: string };

/**
 * One resume entry per pending interrupt of the batch, all at once. Each answer names the
 * fingerprint of the arguments the user was shown; approved calls carry the edited arguments only
 * when they differ from the proposal. The server refuses a batch in which any request expired, so
 * that is reported here instead of being sent.
 */
export function buildResume(
  requests: ApprovalRequest[],
  drafts: Record<string, DraftAnswer | undefined>,
  now: number,
): BuildResumeResult {
  if (requests.length === 0) return { ok: false, error: 'There is nothing to answer.' };
  if (requests.some((r) => isExpired(r.expiresAt, now))) {
    return {
      ok: false,
      error: 'A request of this batch expired, so it can no longer be answered. Send a new message to ask again.',
    };
  }
  const resume: ResumeEntry[] = [];
  for (const req of requests) {
    const d = drafts[req.interruptId];
    if (!d?.decision) return { ok: false, error: `Approve or reject “${humanizeToolName(req.toolName)}” first.` };
    const feedback = d.feedback.trim().slice(0, LIMITS.maxFeedbackChars);
    const payload: ApprovalResponse = { approved: d.decision === 'approve', argsFingerprint: req.argsFingerprint };
    if (feedback) payload.feedback = feedback;
    if (d.decision === 'approve') {
      const checked = checkArgsText(d.argsText, req.inputSchema);
      if (!checked.ok) {
        return {
          ok: false,
          error: `Arguments of “${humanizeToolName(req.toolName)}”: ${checked.errors.map(formatFieldError).join('; ')}`,
        };
      }
      if (diffArgs(req.args, checked.value).length > 0) payload.args = checked.value;
      if (d.alwaysInConversation && req.canAlwaysAllow) payload.alwaysInConversation = true;
    }
    resume.push({ interruptId: req.interruptId, status: 'resolved', payload });
  }
  return { ok: true, resume };
}

/**
 * Approve all / Reject all: every request of the batch gets the same decision. Edited arguments
 * stay as the user left them; a note given with Reject all becomes every call's note (one note
 * for the batch), otherwise each card keeps its own. The resume is then built by `buildResume`,
 * exactly as for answers chosen card by card: one explicit entry per interrupt.
 */
export function draftsForAll(
  requests: ApprovalRequest[],
  drafts: Record<string, DraftAnswer | undefined>,
  decision: 'approve' | 'reject',
  batchNote = '',
): Record<string, DraftAnswer> {
  const note = batchNote.trim();
  const out: Record<string, DraftAnswer> = {};
  for (const req of requests) {
    const current = drafts[req.interruptId] ?? initialDraft(req);
    out[req.interruptId] = { ...current, decision, feedback: decision === 'reject' && note ? note : current.feedback };
  }
  return out;
}

export type CardState =
  | { kind: 'open' }
  | { kind: 'expired' }
  /** Still open for its user, seen read-only (review replay). */
  | { kind: 'waiting' }
  /** Left unanswered: the user sent a new message instead. */
  | { kind: 'unanswered' }
  | { kind: 'decided'; decision: ApprovalDecidedValue };

/**
 * How a card shows: answerable (`open`), its outcome kept in history (`decided`, `expired`,
 * `unanswered`), or, read-only, a request its user can still answer (`waiting`, for the review).
 * `pending` says the request belongs to the conversation's last, interrupted run.
 */
export function cardState(
  req: ApprovalRequest,
  decisions: Record<string, ApprovalDecidedValue>,
  now: number,
  answerable: boolean,
  pending = answerable,
): CardState {
  const decided = decisions[req.toolCallId];
  if (decided) return { kind: 'decided', decision: decided };
  if (isExpired(req.expiresAt, now)) return { kind: 'expired' };
  if (answerable) return { kind: 'open' };
  return pending ? { kind: 'waiting' } : { kind: 'unanswered' };
}
