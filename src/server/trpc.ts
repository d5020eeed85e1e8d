import 'server-only';
import { initTRPC, TRPCError } from '@trpc/server';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import superjson from 'superjson';
import { z, ZodError } from 'zod';
import type { PrismaClient } from '@/generated/prisma/client';
import { getMemberRole, projectExists } from './access';
import { getSessionUser, isSameOrigin, type SessionUser } from './auth';
import { getPrisma } from './db';
import { env } from './env';
import { hitLimit } from './limits';
import { DATABASE_RETRY_AFTER_SECONDS, isInfrastructureError } from './errors';
import { hasProjectAccess, type Role, type Scope } from './rbac';
import { Identifier, INVALID_TEXT_APP_CODE, INVALID_TEXT_MESSAGE, isIdentifier, isInvalidTextError } from './text';

export interface TrpcContext {
  req: Request;
  user: SessionUser | null;
  prisma: PrismaClient;
}

export async function createTrpcContext(req: Request): Promise<TrpcContext> {
  return { req, user: await getSessionUser(req), prisma: await getPrisma() };
}

/** The stable code and wording of a request refused because the database is unreachable. */
export const DATABASE_UNAVAILABLE_APP_CODE = 'DATABASE_UNAVAILABLE';
const DATABASE_UNAVAILABLE_MESSAGE =
  'The service is briefly unavailable (its database cannot be reached). Try again shortly.';

/** Whether a tRPC error means "the database is unreachable" (from a procedure or from createContext). */
export function isDatabaseUnavailable(error: TRPCError): boolean {
  if ((error.cause as { appCode?: unknown } | undefined)?.appCode === DATABASE_UNAVAILABLE_APP_CODE) return true;
  return error.code === 'INTERNAL_SERVER_ERROR' && isInfrastructureError(error.cause);
}

/**
 * `responseMeta` of the tRPC route: a response carrying a database outage is a 503 with
 * Retry-After (tRPC would compute 500 for an error raised outside a procedure, in createContext).
 */
export function trpcResponseMeta({ errors }: { errors: TRPCError[] }): {
  status?: number;
  headers?: Record<string, string>;
} {
  if (errors.length && errors.every(isDatabaseUnavailable)) {
    return { status: 503, headers: { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) } };
  }
  return {};
}

const t = initTRPC.context<TrpcContext>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
    // The database is unreachable (also when createContext failed): 503 with a stable code, never 500.
    if (isDatabaseUnavailable(error)) {
      return {
        ...shape,
        code: TRPC_ERROR_CODES_BY_KEY.SERVICE_UNAVAILABLE,
        message: DATABASE_UNAVAILABLE_MESSAGE,
        data: {
          code: 'SERVICE_UNAVAILABLE' as const,
          httpStatus: 503,
          path: shape.data.path,
          appCode: DATABASE_UNAVAILABLE_APP_CODE,
          issues: null,
        },
      };
    }
    // Safety net: text the database cannot store (NUL) is the caller's fault, never a 500. The
    // middleware below already maps it inside procedures; this also covers anything outside them.
    if (error.code === 'INTERNAL_SERVER_ERROR' && isInvalidTextError(error.cause)) {
      return {
        ...shape,
        code: TRPC_ERROR_CODES_BY_KEY.BAD_REQUEST,
        message: INVALID_TEXT_MESSAGE,
        data: {
          code: 'BAD_REQUEST' as const,
          httpStatus: 400,
          path: shape.data.path,
          appCode: INVALID_TEXT_APP_CODE,
          issues: null,
        },
      };
    }
    // Never leak internals: unexpected errors get a generic message and no stack.
    const internal = error.code === 'INTERNAL_SERVER_ERROR';
    return {
      ...shape,
      message: internal ? 'Something went wrong. Please try again.' : shape.message,
      data: {
        code: shape.data.code,
        httpStatus: shape.data.httpStatus,
        path: shape.data.path,
        appCode: (error.cause as { appCode?: string } | undefined)?.appCode ?? null,
        ...(error.cause instanceof AppError && error.cause.retryAfterSeconds !== undefined
          ? { retryAfterSeconds: error.cause.retryAfterSeconds }
          : {}),
        issues:
          error.cause instanceof ZodError
            ? error.cause.issues.map((i) => ({ path: i.path, message: i.message }))
            : null,
      },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;

/**
 * Every procedure runs inside this: a PostgreSQL refusal of a NUL / untranslatable character
 * (22021, 22P05) that slipped past input validation becomes BAD_REQUEST with appCode
 * INVALID_TEXT, for HTTP clients and server-side callers alike.
 */
const invalidTextNet = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.code === 'INTERNAL_SERVER_ERROR' && isInvalidTextError(result.error.cause)) {
    throw appError('BAD_REQUEST', INVALID_TEXT_APP_CODE, INVALID_TEXT_MESSAGE);
  }
  return result;
});

/** Every procedure: a database outage inside it becomes SERVICE_UNAVAILABLE (503) with appCode DATABASE_UNAVAILABLE. */
const databaseNet = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.code === 'INTERNAL_SERVER_ERROR' && isInfrastructureError(result.error.cause)) {
    throw appError('SERVICE_UNAVAILABLE', DATABASE_UNAVAILABLE_APP_CODE, DATABASE_UNAVAILABLE_MESSAGE);
  }
  return result;
});

const publicProcedure = t.procedure.use(invalidTextNet).use(databaseNet);

/** An error whose `appCode` is a stable, documented string the UI can switch on. */
export class AppError extends Error {
  constructor(
    readonly appCode: string,
    message: string,
    /** For RATE_LIMITED: when to try again (sent as `data.retryAfterSeconds` and Retry-After). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}
export function appError(
  code: TRPCError['code'],
  appCode: string,
  message: string,
  extra: { retryAfterSeconds?: number } = {},
): TRPCError {
  return new TRPCError({ code, message, cause: new AppError(appCode, message, extra.retryAfterSeconds) });
}

export const authedProcedure = publicProcedure.use(async ({ ctx, next, type }) => {
  if (!ctx.user) throw appError('UNAUTHORIZED', 'UNAUTHENTICATED', 'Sign in to continue.');
  if (type === 'mutation') {
    if (!isSameOrigin(ctx.req)) throw appError('FORBIDDEN', 'CROSS_ORIGIN', 'Cross-origin request refused.');
    // Changes per user and minute, counted in the limits store (shared by every instance).
    const limit = await hitLimit(ctx.prisma, {
      key: `trpc:mutation:${ctx.user.id}`,
      limit: env().TRPC_MUTATIONS_PER_MINUTE,
      windowSeconds: 60,
    });
    if (!limit.allowed) {
      const wait = limit.retryAfterSeconds;
      throw appError('TOO_MANY_REQUESTS', 'RATE_LIMITED', `Too many changes in a short time. Try again in ${wait} s.`, {
        retryAfterSeconds: wait,
      });
    }
  }
  return next({ ctx: { ...ctx, user: ctx.user } });
});

export interface ProjectAccess {
  projectId: string;
  role: Role | null;
  isAdmin: boolean;
}

/** Loads the caller's role in a project; NOT_FOUND when they have no access at all. */
export async function loadProjectAccess(
  prisma: PrismaClient,
  user: SessionUser,
  projectId: string,
): Promise<ProjectAccess> {
  // A malformed id (too long, control characters such as NUL) names no project.
  if (!isIdentifier(projectId)) throw appError('NOT_FOUND', 'PROJECT_NOT_FOUND', 'Project not found.');
  const role = await getMemberRole(prisma, projectId, user.id);
  if (!role && !(user.isAdmin && (await projectExists(prisma, projectId)))) {
    throw appError('NOT_FOUND', 'PROJECT_NOT_FOUND', 'Project not found.');
  }
  return { projectId, role, isAdmin: user.isAdmin };
}

export const ProjectInput = z.object({ projectId: Identifier });

/**
 * A procedure scoped to one project: the input must carry `projectId`; the caller must be a member
 * (NOT_FOUND otherwise, so other projects' existence is not revealed) holding `scope` (FORBIDDEN).
 */
export function projectProcedure(scope: Scope) {
  return authedProcedure.input(ProjectInput).use(async ({ ctx, input, next }) => {
    const access = await loadProjectAccess(ctx.prisma, ctx.user, input.projectId);
    if (!hasProjectAccess(access, scope)) {
      throw appError('FORBIDDEN', 'MISSING_SCOPE', `Your role does not allow this (${scope}).`);
    }
    return next({ ctx: { ...ctx, access } });
  });
}
