/**
 * Who a signed-in user is in a project, in one query: the membership's role, the project's name
 * and the user's own fields. The hot paths (the assistant's routes) need all three at once.
 */
import 'server-only';
import { Prisma, type PrismaClient } from '@/generated/prisma/client';
import type { Role } from './rbac';
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
  const rows = await prisma.$queryRaw<
    Array<{ role: Role; projectName: string; name: string; email: string; isAdmin: boolean }>
  >(Prisma.sql`
    SELECT m."role"::text AS "role", p."name" AS "projectName", u."name", u."email", u."isAdmin"
    FROM "ProjectMembership" m
    JOIN "Project" p ON p."id" = m."projectId"
    JOIN "User" u ON u."id" = m."userId"
    WHERE m."projectId" = ${projectId} AND m."userId" = ${userId}`);
  const row = rows[0];
  if (!row) return null;
  return {
    role: row.role,
    projectName: row.projectName,
    user: { id: userId, name: row.name, email: row.email, isAdmin: row.isAdmin },
  };
}
