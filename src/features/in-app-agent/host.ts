/**
 * Everything the module's server side takes from its host, and nothing else: every module file
 * imports host code only through this file (or, in the browser, through `host-client.ts`), so
 * embedding the module elsewhere means providing these names. `npm run check:lift` keeps it so: it
 * fails when a module file imports a host path this file does not re-export, and builds the module
 * with only these host paths in a scratch app. The module README lists them with what each must do.
 */
import 'server-only';

// Identity, membership and roles.
export { getSessionUser, getSessionUserId, isSameOrigin } from '@/server/auth';
export { loadProjectMember, memberOf, memberParts, type MemberColumns, type ProjectMember } from '@/server/access';
export { hasProjectAccess, type AccessSubject, type Role, type Scope } from '@/server/rbac';

// The database: the client with the module's tables, its generated types, raw SQL sessions.
export { driverOf, getDb, getPrisma } from '@/server/db';
export { Prisma, type AgentFeedback, type PrismaClient } from '@/generated/prisma/client';
export type { SqlSession } from '@/server/migrate';

// Settings, ids, request checks.
export { env, type Env } from '@/server/env';
export { newId } from '@/server/ids';
export { hasUnstorableText, isIdentifier } from '@/server/text';
export { readBodyCapped, readBytesCapped } from '@/server/request-body';
export { limitHitParts, limitResult } from '@/server/limits';
export type { HitLimitInput } from '@/server/limits';

// Process state and operations: singletons, gauges, the log, errors, outages, draining.
export { processWide } from '@/server/process-wide';
export { registerGauge } from '@/server/diagnostics';
export { bindLogContext, childLog, log, logRefusal, requestLog, requestLogContext } from '@/server/log';
export type { LogContext } from '@/server/log';
export {
  DATABASE_RETRY_AFTER_SECONDS,
  describeError,
  isInfrastructureError,
  retryWhileUnavailable,
  stackFrames,
} from '@/server/errors';
export { noteDatabaseState } from '@/server/health';
export { DRAINING_RETRY_AFTER_SECONDS, isDraining } from '@/server/lifecycle';

// The tRPC procedures the module's router is built with.
export {
  appError,
  loadProjectAccess,
  type ProjectAccess,
  ProjectInput,
  projectProcedure,
  router,
} from '@/server/trpc';

// The product's MCP server: tool metadata, per-run keys, the override signer, the endpoint.
export { MCP_TOOL_METADATA, MCP_TOOLS, type McpToolName, toolInputJsonSchema } from '@/features/mcp/registry';
export { fingerprintArgs, mintOverride, OVERRIDE_META_KEY, TOOL_CALL_META_KEY } from '@/features/mcp/override';
export { handleMcpPost } from '@/features/mcp/server';
export { agentKeyMaterial, revokeKey } from '@/server/api-keys';
export type { AgentKeyRow } from '@/server/api-keys';
