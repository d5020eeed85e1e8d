/**
 * The tool-call audit trail: one `ToolCallAudit` row per `tools/call` (allowed, denied or failed),
 * and the query behind the project's audit page. Calls of a revoked or expired key, and calls over
 * a key's limit per minute, are counted instead (`countRefusedCalls`: one row per key, code and
 * minute), so such a key cannot flood the table.
 *
 * What the caller sends is marked as such: a tool name that is not a registered tool is stored as
 * the caller's text (capped, `callerSuppliedTool`), and the tool-call id always comes from the
 * caller (capped).
 */
import 'server-only';
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { Prisma, PrismaClient, ToolCallStatus } from '@/generated/prisma/client';
import { maskText } from '@/features/in-app-agent/server/redaction';
import { PUBLIC_KEY_PATTERN } from '@/server/api-keys';
import { newId } from '@/server/ids';
import type { Scope } from '@/server/rbac';
import { log } from '@/server/log';
import { Identifier, SafeText } from '@/server/text';
import { describeError } from './errors';
import { storedKeyScopes } from './key-scopes';
import { isToolName, TOOL_NAMES } from './registry';
import { storable } from './text';

const PREVIEW_CHARS = 500;
/** Longest error code stored, and longest tool name the audit page filters by. */
const AUDIT_NAME_CHARS = 100;
/** Longest caller-supplied tool name stored (registered names are short). */
export const CALLER_TOOL_NAME_CHARS = 64;
/** Longest tool-call id stored (always the caller's: `_meta`). */
export const TOOL_CALL_ID_CHARS = 128;
/** The name recorded when a call carried no usable tool name (the server's text, not the caller's). */
export const INVALID_TOOL_NAME = '(invalid)';
const EMPTY_TOOL_NAME = '(empty)';

/** A tool name as stored: registered names as they are; anything else capped and marked. */
function storedToolName(name: string): { tool: string; callerSuppliedTool: boolean } {
  if (isToolName(name) || name === INVALID_TOOL_NAME) return { tool: name, callerSuppliedTool: false };
  const capped = storable(name, CALLER_TOOL_NAME_CHARS);
  return capped ? { tool: capped, callerSuppliedTool: true } : { tool: EMPTY_TOOL_NAME, callerSuppliedTool: false };
}

function storedToolCallId(id: string | null): string | null {
  return id ? storable(id, TOOL_CALL_ID_CHARS) : null;
}

/**
 * Compact JSON of a value with its secrets masked (the assistant's pattern list), cut to `max`
 * characters (an ellipsis marks the cut). Control characters are escaped (JSON already does so
 * inside values; raw strings are escaped here), so every preview is storable text.
 */
export function preview(value: unknown, max = PREVIEW_CHARS): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  } catch {
    text = '[unserializable]';
  }
  return storable(maskText(text), max);
}

/**
 * Previews with e-mail addresses and phone numbers masked too when the project's assistant data
 * policy asks for it (read only when a preview holds something that looks like one).
 */
async function projectPreviews(prisma: PrismaClient, projectId: string, previews: string[]): Promise<string[]> {
  const masked = previews.map((p) => maskText(p, { contacts: true }));
  if (masked.every((m, i) => m === previews[i])) return previews;
  const policy = await prisma.agentDataPolicy.findUnique({ where: { projectId }, select: { maskContacts: true } });
  return policy?.maskContacts ? masked : previews;
}

/** The connected app a call came through (OAuth access token). */
interface AuditOAuthClient {
  grantId: string;
  clientId: string;
  clientName: string;
}

export interface AuditEntry {
  projectId: string;
  apiKeyId: string | null;
  userId: string | null;
  runId: string | null;
  oauth?: AuditOAuthClient;
  toolCallId: string | null;
  tool: string;
  status: ToolCallStatus;
  errorCode: string | null;
  args: unknown;
  result: unknown;
  startedAt: Date;
  durationMs: number;
}

/**
 * Writes one audit row. Every string from the request (tool name, tool-call id, previews) is escaped
 * and capped first, so a NUL byte or an overlong name cannot make the database refuse the row. A
 * failure to audit (database down) is logged without payloads and never breaks the call.
 */
export async function writeAudit(prisma: PrismaClient, e: AuditEntry): Promise<void> {
  const { tool, callerSuppliedTool } = storedToolName(e.tool);
  try {
    const [argsPreview, resultPreview] = await projectPreviews(prisma, e.projectId, [
      preview(e.args),
      preview(e.result),
    ]);
    await prisma.toolCallAudit.create({
      data: {
        id: newId('aud_'),
        projectId: e.projectId,
        apiKeyId: e.apiKeyId,
        userId: e.userId,
        runId: e.runId,
        ...oauthColumns(e.oauth),
        toolCallId: storedToolCallId(e.toolCallId),
        tool,
        callerSuppliedTool,
        status: e.status,
        errorCode: e.errorCode ? storable(e.errorCode, AUDIT_NAME_CHARS) : null,
        argsPreview,
        resultPreview,
        durationMs: Math.min(2_147_483_647, Math.max(0, Math.round(e.durationMs))),
        startedAt: e.startedAt,
      },
    });
  } catch (err) {
    log().error({ event: 'mcp.audit_write_failed', tool, error: describeError(err) }, 'MCP audit write failed');
  }
}

function oauthColumns(o: AuditOAuthClient | undefined) {
  return {
    oauthGrantId: o?.grantId ?? null,
    oauthClientId: o ? storable(o.clientId, 500) : null,
    oauthClientName: o ? storable(o.clientName, 100) : null,
  };
}

export interface RefusedCalls {
  projectId: string;
  /** The key, or null for a connected app (then `oauth` names it). */
  apiKeyId: string | null;
  userId: string | null;
  runId: string | null;
  oauth?: AuditOAuthClient;
  /** KEY_REVOKED, KEY_EXPIRED or RATE_LIMITED. */
  errorCode: string;
  message: string;
  /** The tools/call requests found in the body (the first one is described in the row). */
  calls: ReadonlyArray<{ name: string | null; toolCallId: string | null; argumentsText: string | null }>;
  at: Date;
}

/** One counted-refusals row per key and this many seconds. */
const REFUSED_CALLS_WINDOW_SECONDS = 60;

/**
 * Counts the calls of a revoked or expired key, or of a key over its calls per minute: ONE row per
 * key, refusal code and minute, created by the first refused request (describing its first call)
 * and incremented by the others in the same statement (`INSERT ... ON CONFLICT (id) DO UPDATE SET
 * "callCount" = "callCount" + n`), so any number of requests from such a key writes at most one
 * row a minute per code. Never throws (logged like writeAudit).
 */
export async function countRefusedCalls(prisma: PrismaClient, e: RefusedCalls): Promise<void> {
  const first = e.calls[0];
  if (!first) return;
  const window = Math.floor(e.at.getTime() / (REFUSED_CALLS_WINDOW_SECONDS * 1000));
  // A stable id per key, code and window (an Identifier, so the audit page can page past it).
  const caller = e.apiKeyId ?? `grant:${e.oauth?.grantId ?? ''}`;
  const digest = createHash('sha256').update(`${caller}:${e.errorCode}:${window}`).digest('hex');
  const oauth = oauthColumns(e.oauth);
  const id = `aud_refused_${digest.slice(0, 32)}`;
  const { tool, callerSuppliedTool } = storedToolName(first.name ?? INVALID_TOOL_NAME);
  const result = preview({ error: { code: e.errorCode, message: e.message } });
  try {
    const [argsPreview] = await projectPreviews(prisma, e.projectId, [preview(first.argumentsText ?? '')]);
    await prisma.$executeRaw`
      INSERT INTO "ToolCallAudit" ("id", "projectId", "apiKeyId", "userId", "runId", "oauthGrantId", "oauthClientId",
        "oauthClientName", "toolCallId", "tool", "callerSuppliedTool", "status", "errorCode", "argsPreview",
        "resultPreview", "durationMs", "callCount", "startedAt")
      VALUES (${id}, ${e.projectId}, ${e.apiKeyId}, ${e.userId}, ${e.runId}, ${oauth.oauthGrantId},
        ${oauth.oauthClientId}, ${oauth.oauthClientName}, ${storedToolCallId(first.toolCallId)},
        ${tool},
        ${callerSuppliedTool}, 'DENIED'::"ToolCallStatus", ${storable(e.errorCode, AUDIT_NAME_CHARS)},
        ${argsPreview}, ${result}, 0, ${e.calls.length}::int,
        to_timestamp(${e.at.getTime() / 1000}::float8) AT TIME ZONE 'UTC')
      ON CONFLICT ("id") DO UPDATE SET "callCount" = "ToolCallAudit"."callCount" + EXCLUDED."callCount"`;
  } catch (err) {
    console.error(`[mcp] audit count failed for ${caller}: ${describeError(err)}`);
  }
}

const AUDIT_STATUSES = ['OK', 'ERROR', 'DENIED'] as const;

const AUDIT_KEY_KINDS = ['PROJECT', 'IN_APP_AGENT'] as const;

export const AuditListInput = z
  .object({
    /** Any recorded tool name, including names that are not (or no longer) in the registry. */
    tool: SafeText.trim().min(1).max(AUDIT_NAME_CHARS).optional(),
    status: z.enum(AUDIT_STATUSES).optional(),
    runId: Identifier.optional(),
    keyKind: z.enum(AUDIT_KEY_KINDS).optional(),
    /** The public part of an API key (`pk_…`). */
    publicKey: z.string().trim().regex(PUBLIC_KEY_PATTERN, 'must be a public key (pk_…)').optional(),
    /** The user an assistant key acted for. */
    userId: Identifier.optional(),
    /** Id of the last row of the previous page. */
    cursor: Identifier.optional(),
    limit: z.number().int().min(1).max(100).default(50),
  })
  .strict();
export type AuditListFilters = z.input<typeof AuditListInput>;

export interface AuditRow {
  id: string;
  tool: string;
  status: ToolCallStatus;
  errorCode: string | null;
  keyKind: 'PROJECT' | 'IN_APP_AGENT' | null;
  keyName: string | null;
  keyPublicKey: string | null;
  /**
   * Project keys: the scopes the key holds (fixed when it was created, so also what it held at the
   * call). Null for assistant keys, which act with their user's role, and for deleted keys.
   */
  keyScopes: Scope[] | null;
  userId: string | null;
  userName: string | null;
  runId: string | null;
  /** Calls of a connected app (OAuth access token): the client, as it was named at the call. */
  oauthClient: { id: string; name: string } | null;
  /** Sent by the caller. */
  toolCallId: string | null;
  /** `tool` is the caller's text, not a registered tool. */
  callerSuppliedTool: boolean;
  /** Calls this row stands for (more than 1 for counted refusals of a revoked or expired key). */
  callCount: number;
  argsPreview: string;
  resultPreview: string;
  durationMs: number;
  startedAt: Date;
}

/** The project's audit trail, newest first, with optional filters and keyset pagination. */
export async function listAudit(
  prisma: PrismaClient,
  projectId: string,
  filters: AuditListFilters = {},
): Promise<{ items: AuditRow[]; nextCursor: string | null }> {
  const f = AuditListInput.parse(filters);
  let cursorRow: { id: string; startedAt: Date } | null = null;
  if (f.cursor) {
    cursorRow = await prisma.toolCallAudit.findFirst({
      where: { id: f.cursor, projectId },
      select: { id: true, startedAt: true },
    });
  }
  const apiKey: Prisma.ApiKeyWhereInput = {
    ...(f.keyKind ? { kind: f.keyKind } : {}),
    ...(f.publicKey ? { publicKey: f.publicKey } : {}),
  };
  const rows = await prisma.toolCallAudit.findMany({
    where: {
      projectId,
      ...(f.tool ? { tool: f.tool } : {}),
      ...(f.status ? { status: f.status } : {}),
      ...(f.runId ? { runId: f.runId } : {}),
      ...(f.userId ? { userId: f.userId } : {}),
      ...(f.keyKind || f.publicKey ? { apiKey } : {}),
      ...(cursorRow
        ? {
            OR: [
              { startedAt: { lt: cursorRow.startedAt } },
              { startedAt: cursorRow.startedAt, id: { lt: cursorRow.id } },
            ],
          }
        : {}),
    },
    orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
    take: f.limit + 1,
    include: { apiKey: { select: { kind: true, name: true, publicKey: true, scopes: true } } },
  });
  const page = rows.slice(0, f.limit);
  const userIds = [...new Set(page.map((r) => r.userId).filter((x): x is string => !!x))];
  const users = userIds.length
    ? await prisma.user.findMany({ where: { id: { in: userIds } }, select: { id: true, name: true } })
    : [];
  const names = new Map(users.map((u) => [u.id, u.name]));
  return {
    items: page.map((r) => ({
      id: r.id,
      tool: r.tool,
      status: r.status,
      errorCode: r.errorCode,
      keyKind: r.apiKey?.kind ?? null,
      keyName: r.apiKey?.name ?? null,
      keyPublicKey: r.apiKey?.publicKey ?? null,
      keyScopes: r.apiKey?.kind === 'PROJECT' ? storedKeyScopes(r.apiKey.scopes) : null,
      userId: r.userId,
      userName: r.userId ? (names.get(r.userId) ?? null) : null,
      runId: r.runId,
      oauthClient: r.oauthClientId ? { id: r.oauthClientId, name: r.oauthClientName ?? r.oauthClientId } : null,
      toolCallId: r.toolCallId,
      callerSuppliedTool: r.callerSuppliedTool,
      callCount: r.callCount,
      argsPreview: r.argsPreview,
      resultPreview: r.resultPreview,
      durationMs: r.durationMs,
      startedAt: r.startedAt,
    })),
    nextCursor: rows.length > f.limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}

const MAX_FACETS = 200;

export interface AuditFacets {
  /** The registry's tools first, then other names found in the trail (unknown or retired tools). */
  tools: string[];
  /** The project's API keys that appear in the trail or are project keys, newest first. */
  keys: Array<{ publicKey: string; kind: 'PROJECT' | 'IN_APP_AGENT'; name: string; revoked: boolean }>;
  /** Users that assistant keys acted for in this project's trail. */
  users: Array<{ id: string; name: string }>;
}

/** The values the audit page offers as filters: tools, keys and users seen in this project. */
export async function auditFacets(prisma: PrismaClient, projectId: string): Promise<AuditFacets> {
  const [toolGroups, keys, userGroups] = await Promise.all([
    prisma.toolCallAudit.groupBy({ by: ['tool'], where: { projectId }, orderBy: { tool: 'asc' }, take: MAX_FACETS }),
    prisma.apiKey.findMany({
      where: { projectId, kind: 'PROJECT' },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: MAX_FACETS,
      select: { publicKey: true, kind: true, name: true, revokedAt: true },
    }),
    prisma.toolCallAudit.groupBy({
      by: ['userId'],
      where: { projectId, userId: { not: null } },
      orderBy: { userId: 'asc' },
      take: MAX_FACETS,
    }),
  ]);
  const known = new Set<string>(TOOL_NAMES);
  const userIds = userGroups.map((g) => g.userId).filter((x): x is string => x !== null);
  const users = userIds.length
    ? await prisma.user.findMany({
        where: { id: { in: userIds } },
        select: { id: true, name: true },
        orderBy: [{ name: 'asc' }, { id: 'asc' }],
      })
    : [];
  return {
    tools: [...TOOL_NAMES, ...toolGroups.map((g) => g.tool).filter((t) => !known.has(t))],
    keys: keys.map((k) => ({ publicKey: k.publicKey, kind: k.kind, name: k.name, revoked: k.revokedAt !== null })),
    users,
  };
}
