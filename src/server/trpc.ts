import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { z, ZodError } from 'zod';
import type { PrismaClient } from '@/generated/prisma/client';
import { getSessionUser, isSameOrigin, type SessionUser } from './auth';
import { getPrisma } from './db';
import { hasProjectAccess, type Role, type Scope } from './rbac';

export interface TrpcContext {
  req: Request;
  user: SessionUser | null;
  prisma: PrismaClient;
}

export async function createTrpcContext(req: Request): Promise<TrpcContext> {
  return { req, user: await getSessionUser(req), prisma: await getPrisma() };
}

const t = initTRPC.context<TrpcContext>().create({
  transformer: superjson,
  errorFormatter({ shape, error }) {
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
        issues: error.cause instanceof ZodError ? error.cause.issues.map((i) => ({ path: i.path, message: i.message })) : null,
      },
    };
  },
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const publicProcedure = t.procedure;

/** An error whose `appCode` is a stable, documented string the UI can switch on. */
export class AppError extends Error {
  constructor(
    readonly appCode: string,
    message: string,
  ) {
    super(message);
  }
}
export function appError(code: TRPCError['code'], appCode: string, message: string): TRPCError {
  return new TRPCError({ code, message, cause: new AppError(appCode, message) });
}

export const authedProcedure = t.procedure.use(async ({ ctx, next, type }) => {
  if (!ctx.user) throw appError('UNAUTHORIZED', 'UNAUTHENTICATED', 'Sign in to continue.');
  if (type === 'mutation' && !isSameOrigin(ctx.req)) throw appError('FORBIDDEN', 'CROSS_ORIGIN', 'Cross-origin request refused.');
  return next({ ctx: { ...ctx, user: ctx.user } });
});

export interface ProjectAccess {
  projectId: string;
  role: Role | null;
  isAdmin: boolean;
}

/** Loads the caller's role in a project; NOT_FOUND when they have no access at all. */
export async function loadProjectAccess(prisma: PrismaClient, user: SessionUser, projectId: string): Promise<ProjectAccess> {
  const membership = await prisma.projectMembership.findUnique({
    where: { projectId_userId: { projectId, userId: user.id } },
    select: { role: true },
  });
  if (!membership && !(user.isAdmin && (await prisma.project.count({ where: { id: projectId } })) > 0)) {
    throw appError('NOT_FOUND', 'PROJECT_NOT_FOUND', 'Project not found.');
  }
  return { projectId, role: membership?.role ?? null, isAdmin: user.isAdmin };
}

export const ProjectInput = z.object({ projectId: z.string().min(1).max(64) });

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
