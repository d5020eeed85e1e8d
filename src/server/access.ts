/**
 * Who a user is in a project: the reads every authorization check starts from. The tRPC procedures
 * (`loadProjectAccess`), the tracker's member management and the MCP server's in-app-agent keys
 * take the role from here. `loadProjectMember` answers in one query the membership's role, the
 * project's name and the user's own fields: the hot paths (the assistant's routes) need all three.
 */
import 'server-only';
import { Prisma, type PrismaClient } from '@/generated/prisma/client';
import { type AccessSubject, hasProjectAccess, ROLES, type Role, type Scope } from './rbac';
import { driverOf } from './db';
import { isIdentifier } from './text';

export interface ProjectMember {
  role: Role;
  projectName: string;
  user: { id: string; name: string; email: string; isAdmin: boolean };
}

/** The columns `memberParts` selects, as the driver returns them. */
export interface MemberColumns {
  memberRole: Role | null;
  memberProjectName: string | null;
  memberName: string | null;
  memberEmail: string | null;
  memberIsAdmin: boolean | null;
  /** The member's role (or administrator status) holds the scope. */
  memberAllowed: boolean | null;
}

/**
 * The membership read as parts of a statement: a CTE `member` (the user's membership in the
 * project, with the project's name and the user's own fields, and whether it holds `scope`; any
 * membership does when none is given), and
 * the columns to select from it (`MemberColumns`), which `memberOf` reads. `loadProjectMember` is
 * this statement alone; the assistant's run open puts it in the statement that opens the run, so a
 * run needs no statement of its own to learn who asks.
 */
export function memberParts(projectId: string, userId: string, scope?: Scope) {
  const roles = scope ? ROLES.filter((role) => hasProjectAccess({ role }, scope)) : [...ROLES];
  const admins = scope ? hasProjectAccess({ role: null, isAdmin: true }, scope) : true;
  return {
    cte: Prisma.sql`member AS MATERIALIZED (
      SELECT m."role"::text AS "role", p."name" AS "projectName", u."name", u."email", u."isAdmin",
        (m."role"::text = ANY(${roles}::text[]) OR (${admins} AND u."isAdmin")) AS "allowed"
      FROM "ProjectMembership" m
      JOIN "Project" p ON p."id" = m."projectId"
      JOIN "User" u ON u."id" = m."userId"
      WHERE m."projectId" = ${projectId} AND m."userId" = ${userId})`,
    /** Whether the member holds the scope (false when there is no membership). */
    allowed: Prisma.sql`EXISTS (SELECT 1 FROM member WHERE member."allowed")`,
    columns: Prisma.sql`member."role" AS "memberRole", member."projectName" AS "memberProjectName",
      member."name" AS "memberName", member."email" AS "memberEmail", member."isAdmin" AS "memberIsAdmin",
      member."allowed" AS "memberAllowed"`,
  };
}

/** The membership `memberParts` selected and whether it holds the scope, or null (not a member). */
export function memberOf(
  row: MemberColumns | undefined,
  userId: string,
): { member: ProjectMember; allowed: boolean } | null {
  if (!row?.memberRole) return null;
  const user = {
    id: userId,
    name: row.memberName ?? '',
    email: row.memberEmail ?? '',
    isAdmin: row.memberIsAdmin === true,
  };
  return {
    member: { role: row.memberRole, projectName: row.memberProjectName ?? '', user },
    allowed: row.memberAllowed === true,
  };
}

/** The user's membership in the project, or null (not a member, no such project or user). */
export async function loadProjectMember(
  prisma: PrismaClient,
  projectId: string,
  userId: string,
): Promise<ProjectMember | null> {
  // A malformed id (too long, control characters such as NUL) names nothing.
  if (!isIdentifier(projectId) || !isIdentifier(userId)) return null;
  const parts = memberParts(projectId, userId);
  // Every run's routes start here: straight to the driver (see Database.queryRows).
  const rows = await driverOf(prisma).queryRows<MemberColumns>(
    Prisma.sql`WITH ${parts.cte} SELECT ${parts.columns} FROM member`,
  );
  return memberOf(rows[0], userId)?.member ?? null;
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
