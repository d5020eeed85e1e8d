/**
 * Project members: listing, resolving a member reference, adding, role changes and removal. The
 * "at least one owner" rule lives here (LAST_OWNER), under a project row lock. Whether the CALLER
 * may manage a given role is the router's check (owners manage owners), not the service's.
 */
import { z } from 'zod';
import type { Prisma, PrismaClient } from '@/generated/prisma/client';
import { getMemberRole } from '@/server/access';
import { newId } from '@/server/ids';
import { ROLES, type Role } from '@/server/rbac';
import { Identifier, SafeText } from '@/server/text';
import { appError } from '@/server/trpc';
import { countedPage, type Db, inTransaction, type PageInput, parseInput } from './shared';

/** A user id (`u_...`) or the email of a user. */
export const UserRefSchema = SafeText.trim().min(1).max(320);
const EmailSchema = SafeText.trim().toLowerCase().email().max(320);
const RoleInputSchema = z.enum(ROLES);

/**
 * Resolves a member of the project by user id or email. USER_NOT_FOUND when no such user exists,
 * NOT_A_MEMBER when the user is not in this project.
 */
export async function resolveMember(
  db: Db,
  projectId: string,
  ref: string,
): Promise<{ id: string; name: string; email: string }> {
  const value = ref.trim();
  const user = await db.user.findFirst({
    where: value.includes('@') ? { email: value.toLowerCase() } : { id: value },
    select: { id: true, name: true, email: true, memberships: { where: { projectId }, select: { id: true } } },
  });
  if (!user) throw appError('NOT_FOUND', 'USER_NOT_FOUND', `No user ${value}.`);
  if (user.memberships.length === 0)
    throw appError('BAD_REQUEST', 'NOT_A_MEMBER', `${user.email} is not a member of this project.`);
  return { id: user.id, name: user.name, email: user.email };
}

/** A member as a choice: who they are. */
export interface MemberChoice {
  userId: string;
  name: string;
  email: string;
}

/** The most members `membersMatching` returns. */
const MATCHES_MAX = 20;

/**
 * The members a reference may mean: the member whose user id or email it is; else, for a reference
 * that is not an email, the members whose name contains it (any case), by name. Several: the
 * reference is ambiguous; none: it names nobody of the project.
 */
export async function membersMatching(prisma: PrismaClient, projectId: string, ref: string): Promise<MemberChoice[]> {
  const value = ref.trim();
  if (!value) return [];
  const select = { user: { select: { id: true, name: true, email: true } } } as const;
  const exact = await prisma.projectMembership.findMany({
    where: { projectId, OR: [{ userId: value }, { user: { email: value.toLowerCase() } }] },
    select,
    take: 1,
  });
  const rows = exact.length
    ? exact
    : value.includes('@')
      ? []
      : await prisma.projectMembership.findMany({
          where: { projectId, user: { name: { contains: value, mode: 'insensitive' } } },
          select,
          orderBy: { user: { name: 'asc' } },
          take: MATCHES_MAX,
        });
  return rows.map((r) => ({ userId: r.user.id, name: r.user.name, email: r.user.email }));
}

export interface Member {
  userId: string;
  name: string;
  email: string;
  role: Role;
  joinedAt: Date;
}

const ROLE_ORDER: Record<Role, number> = { OWNER: 0, ADMIN: 1, MEMBER: 2, VIEWER: 3 };

const memberSelect = {
  role: true,
  createdAt: true,
  user: { select: { id: true, name: true, email: true } },
} satisfies Prisma.ProjectMembershipSelect;

function toMember(r: Prisma.ProjectMembershipGetPayload<{ select: typeof memberSelect }>): Member {
  return { userId: r.user.id, name: r.user.name, email: r.user.email, role: r.role, joinedAt: r.createdAt };
}

/** Members by role (owners first), then name. */
export async function listMembers(prisma: PrismaClient, projectId: string): Promise<Member[]> {
  const rows = await prisma.projectMembership.findMany({ where: { projectId }, select: memberSelect });
  return rows.map(toMember).sort((a, b) => ROLE_ORDER[a.role] - ROLE_ORDER[b.role] || a.name.localeCompare(b.name));
}

/**
 * One page of the members, paged in the database, with the total. Roles sort by the enum's declared
 * order (OWNER, ADMIN, MEMBER, VIEWER), then by name.
 */
export async function listMembersPage(
  prisma: PrismaClient,
  projectId: string,
  raw: PageInput,
): Promise<{ members: Member[]; total: number }> {
  const where = { projectId };
  const { rows, total } = await countedPage(
    raw,
    () => prisma.projectMembership.count({ where }),
    (page) =>
      prisma.projectMembership.findMany({
        where,
        orderBy: [{ role: 'asc' }, { user: { name: 'asc' } }, { userId: 'asc' }],
        ...page,
        select: memberSelect,
      }),
  );
  return { members: rows.map(toMember), total };
}

export const AddMemberInput = z.object({ email: EmailSchema, role: RoleInputSchema.default('MEMBER') }).strict();
export type AddMemberInput = z.input<typeof AddMemberInput>;

/** Adds an EXISTING user (by email) to the project. */
export async function addMember(prisma: PrismaClient, projectId: string, raw: AddMemberInput): Promise<Member> {
  const input = parseInput(AddMemberInput, raw);
  const user = await prisma.user.findUnique({
    where: { email: input.email },
    select: { id: true, name: true, email: true },
  });
  if (!user)
    throw appError('NOT_FOUND', 'USER_NOT_FOUND', `No user with the email ${input.email}. They need an account first.`);
  const existing = await getMemberRole(prisma, projectId, user.id);
  if (existing) throw appError('CONFLICT', 'ALREADY_MEMBER', `${user.email} is already a member.`);
  try {
    const m = await prisma.projectMembership.create({
      data: { id: newId('m_'), projectId, userId: user.id, role: input.role },
      select: { createdAt: true, role: true },
    });
    return { userId: user.id, name: user.name, email: user.email, role: m.role, joinedAt: m.createdAt };
  } catch (err) {
    if ((err as { code?: string }).code === 'P2002')
      throw appError('CONFLICT', 'ALREADY_MEMBER', `${user.email} is already a member.`);
    throw err;
  }
}

/**
 * Runs `fn` in a transaction holding the project row lock, so concurrent membership changes of one
 * project are serialized (the "at least one owner" invariant cannot be raced).
 */
async function withProjectLock<T>(
  prisma: PrismaClient,
  projectId: string,
  fn: (tx: Prisma.TransactionClient) => Promise<T>,
): Promise<T> {
  return inTransaction(prisma, async (tx) => {
    const locked = await tx.project.updateMany({ where: { id: projectId }, data: { updatedAt: new Date() } });
    if (locked.count === 0) throw appError('NOT_FOUND', 'PROJECT_NOT_FOUND', 'Project not found.');
    return fn(tx);
  });
}

/** The user's membership of the project; USER_NOT_FOUND when they are not a member. */
export async function requireMembership(
  tx: Db,
  projectId: string,
  userId: string,
): Promise<{ id: string; role: Role }> {
  const m = await tx.projectMembership.findUnique({
    where: { projectId_userId: { projectId, userId } },
    select: { id: true, role: true },
  });
  if (!m) throw appError('NOT_FOUND', 'USER_NOT_FOUND', 'That user is not a member of this project.');
  return m;
}

export const ChangeRoleInput = z.object({ userId: Identifier, role: RoleInputSchema }).strict();
export type ChangeRoleInput = z.input<typeof ChangeRoleInput>;

/** Changes a member's role. The last OWNER can never be demoted (LAST_OWNER). */
export async function changeRole(prisma: PrismaClient, projectId: string, raw: ChangeRoleInput): Promise<Member> {
  const input = parseInput(ChangeRoleInput, raw);
  await withProjectLock(prisma, projectId, async (tx) => {
    const m = await requireMembership(tx, projectId, input.userId);
    if (m.role === input.role) return;
    if (m.role === 'OWNER') {
      const owners = await tx.projectMembership.count({ where: { projectId, role: 'OWNER' } });
      if (owners <= 1)
        throw appError(
          'BAD_REQUEST',
          'LAST_OWNER',
          'A project needs at least one owner: make someone else owner first.',
        );
    }
    await tx.projectMembership.update({ where: { id: m.id }, data: { role: input.role } });
  });
  const members = await listMembers(prisma, projectId);
  return members.find((x) => x.userId === input.userId)!;
}

export const RemoveMemberInput = z.object({ userId: Identifier }).strict();
export type RemoveMemberInput = z.input<typeof RemoveMemberInput>;

/** Removes a member. The last OWNER can never be removed (LAST_OWNER). Their issues stay. */
export async function removeMember(
  prisma: PrismaClient,
  projectId: string,
  raw: RemoveMemberInput,
): Promise<{ userId: string; removed: true }> {
  const input = parseInput(RemoveMemberInput, raw);
  await withProjectLock(prisma, projectId, async (tx) => {
    const m = await requireMembership(tx, projectId, input.userId);
    if (m.role === 'OWNER') {
      const owners = await tx.projectMembership.count({ where: { projectId, role: 'OWNER' } });
      if (owners <= 1) throw appError('BAD_REQUEST', 'LAST_OWNER', 'The last owner cannot be removed.');
    }
    await tx.projectMembership.delete({ where: { id: m.id } });
    // Issues assigned to someone who left are unassigned.
    await tx.issue.updateMany({ where: { projectId, assigneeId: input.userId }, data: { assigneeId: null } });
  });
  return { userId: input.userId, removed: true };
}
