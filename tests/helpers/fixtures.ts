// Builders for test data in the real database, and real next-auth session cookies.
import { encode } from 'next-auth/jwt';
import { getPrisma } from '@/server/db';
import { env } from '@/server/env';
import { newId } from '@/server/ids';
import type { Role } from '@/server/rbac';

export interface TestUser {
  id: string;
  email: string;
  name: string;
  cookie: string;
}

let counter = 0;

async function sessionCookie(userId: string): Promise<string> {
  const token = await encode({ token: { uid: userId, sub: userId }, secret: env().NEXTAUTH_SECRET });
  return `next-auth.session-token=${token}`;
}

export async function createUser(
  name = 'User',
  opts: { isAdmin?: boolean; passwordHash?: string } = {},
): Promise<TestUser> {
  const prisma = await getPrisma();
  counter += 1;
  const id = newId('u_');
  const email = `${name.toLowerCase().replace(/\W+/g, '.')}.${counter}.${id.slice(-6)}@test.local`;
  await prisma.user.create({
    data: { id, email, name, isAdmin: opts.isAdmin ?? false, passwordHash: opts.passwordHash ?? null },
  });
  return { id, email, name, cookie: await sessionCookie(id) };
}

export interface TestProject {
  id: string;
  slug: string;
  users: Record<Role, TestUser>;
}

/** A project with one user per role, a few labels and no issues. */
export async function createProject(name = 'Project'): Promise<TestProject> {
  const prisma = await getPrisma();
  const id = newId('p_');
  const slug = `${name.toLowerCase().replace(/\W+/g, '-')}-${id.slice(-8)}`;
  const users = {
    OWNER: await createUser(`${name} Owner`),
    ADMIN: await createUser(`${name} Admin`),
    MEMBER: await createUser(`${name} Member`),
    VIEWER: await createUser(`${name} Viewer`),
  } satisfies Record<Role, TestUser>;
  await prisma.project.create({
    data: {
      id,
      slug,
      name,
      memberships: {
        create: (Object.keys(users) as Role[]).map((role) => ({ id: newId('m_'), userId: users[role].id, role })),
      },
      labels: {
        create: [
          { id: newId('l_'), name: 'bug' },
          { id: newId('l_'), name: 'feature' },
        ],
      },
    },
  });
  return { id, slug, users };
}

/**
 * An issue written straight into the database. Without a reporter it stands for an issue created
 * through a project API key: its text is EXTERNAL (untrusted) unless `source` says otherwise.
 */
export async function createIssue(
  projectId: string,
  data: {
    title: string;
    body?: string;
    status?: 'OPEN' | 'IN_PROGRESS' | 'CLOSED';
    reporterId?: string;
    assigneeId?: string;
    source?: 'MEMBER' | 'EXTERNAL';
  },
) {
  const source = data.source ?? (data.reporterId ? 'MEMBER' : 'EXTERNAL');
  const prisma = await getPrisma();
  const project = await prisma.project.update({ where: { id: projectId }, data: { issueCounter: { increment: 1 } } });
  return prisma.issue.create({
    data: {
      id: newId('i_'),
      projectId,
      number: project.issueCounter,
      title: data.title,
      body: data.body ?? '',
      status: data.status ?? 'OPEN',
      reporterId: data.reporterId ?? null,
      assigneeId: data.assigneeId ?? null,
      titleSource: source,
      bodySource: source,
      labelsSource: source,
    },
  });
}
