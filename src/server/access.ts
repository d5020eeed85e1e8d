/**
 * Who a user is in a project: the reads every authorization check starts from. The tRPC procedures
 * (`loadProjectAccess`), the tracker's member management and the MCP server's in-app-agent keys
 * take the role from here. `loadProjectMember` answers in one query the membership's role, the
 * project's name and the user's own fields: the hot paths (the assistant's routes) need all three.
 */
import 'server-only';
import { Prisma, type PrismaClient } from '@/generated/prisma/client';
import type { AccessSubject, Role } from './rbac';
import { driverOf } from './db';
import { isIdentifier } from './text';

export interface ProjectMember {
  role: Role;
  projectName: string;
  user: { id: string; name: string; email: string; isAdmin: boolean };
}

/** The user's membership in the project, or null (not a member, no such project or user). */
export async function loadProjectMember(
  prisma: PrismaClient,
  projectId: string,
  userId: string,
): Promise<ProjectMember | null> {
  // A malformed id (too long, control characters such as NUL) names nothing.
  if (!isIdentifier(projectId) || !isIdentifier(userId)) return null;
  // Every run starts here: straight to the driver (see Database.queryRows).
  const rows = await driverOf(prisma).queryRows<{
    role: Role;
    projectName: string;
    name: string;
    email: string;
    isAdmin: boolean;
  }>(
    Prisma.sql`
    SELECT m."role"::text AS "role", p."name" AS "projectName", u."name", u."email", u."isAdmin"
    FROM "ProjectMembership" m
    JOIN "Project" p ON p."id" = m."projectId"
    JOIN "User" u ON u."id" = m."userId"
    WHERE m."projectId" = ${projectId} AND m."userId" = ${userId}`,
  );
  const row = rows[0];
  if (!row) return null;
  return {
    role: row.role,
    projectName: row.projectName,
    user: { id: userId, name: row.name, email: row.email, isAdmin: row.isAdmin },
  };
}

/** The user's role in the project, or null when they are not a member. */
export async function getMemberRole(
  prisma: PrismaClient | Prisma.TransactionClient,
  projectId: string,
  userId: string,
): Promise<Role | null> {
  const m = await prisma.projectMembership.findUnique({
    where: { projectId_userId: { projectId, userId } },
    select: { role: true },
  });
  return m?.role ?? null;
}

/** Whether a project with this id exists (an instance administrator may read any project). */
export async function projectExists(prisma: PrismaClient, projectId: string): Promise<boolean> {
  return (await prisma.project.count({ where: { id: projectId } })) > 0;
}

/** The user's current role in the project and whether they are an instance administrator. */
export async function loadAccessSubject(
  prisma: PrismaClient,
  projectId: string,
  userId: string,
): Promise<AccessSubject> {
  const [role, user] = await Promise.all([
    getMemberRole(prisma, projectId, userId),
    prisma.user.findUnique({ where: { id: userId }, select: { isAdmin: true } }),
  ]);
  return { role, isAdmin: user?.isAdmin ?? false };
}
