// The demo seed (src/server/seed.ts) is atomic: interrupted half-way it leaves nothing behind, so
// the next start seeds again; seedIfEmpty is not fooled by leftovers of an interrupted seed, never
// touches a database with real data, and two starts at once seed once.
import { afterEach, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { DEMO_PASSWORD, DEMO_PROJECT_SLUG, DEMO_USERS, seedDemo, seedIfEmpty } from '@/server/seed';
import { newId } from '@/server/ids';
import { verifyPassword } from '@/server/password';

async function counts() {
  const prisma = await getPrisma();
  const [users, projects, memberships, issues, comments, labels] = await Promise.all([
    prisma.user.count(),
    prisma.project.count(),
    prisma.projectMembership.count(),
    prisma.issue.count(),
    prisma.comment.count(),
    prisma.label.count(),
  ]);
  return { users, projects, memberships, issues, comments, labels };
}

/** Empties the tables the seed writes (each case starts from an empty database). */
async function wipe(): Promise<void> {
  const prisma = await getPrisma();
  await prisma.$executeRawUnsafe('DROP TRIGGER IF EXISTS seed_breaker ON "Issue"');
  await prisma.$executeRawUnsafe('DROP FUNCTION IF EXISTS seed_breaker()');
  await prisma.$executeRawUnsafe(
    'TRUNCATE "Comment", "IssueLabel", "Issue", "Label", "ProjectMembership", "ApiKey", "Project", "Account", "User" CASCADE',
  );
}

/** Makes the database fail the seed at its 8th issue, as a crash or a kill half-way would. */
async function breakAtEighthIssue(): Promise<void> {
  const prisma = await getPrisma();
  await prisma.$executeRawUnsafe(`CREATE FUNCTION seed_breaker() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.number = 8 THEN RAISE EXCEPTION 'simulated crash during the seed'; END IF;
      RETURN NEW;
    END $$`);
  await prisma.$executeRawUnsafe(
    'CREATE TRIGGER seed_breaker BEFORE INSERT ON "Issue" FOR EACH ROW EXECUTE FUNCTION seed_breaker()',
  );
}

afterEach(wipe);

const EMPTY = { users: 0, projects: 0, memberships: 0, issues: 0, comments: 0, labels: 0 };

describe('seed', () => {
  it('creates the demo project with every role, issues, comments (one external) and the outsider’s project', async () => {
    const prisma = await getPrisma();
    expect(await seedIfEmpty(prisma)).toBe(true);
    const project = await prisma.project.findUniqueOrThrow({
      where: { slug: DEMO_PROJECT_SLUG },
      include: { memberships: { include: { user: true } }, issues: { include: { comments: true } } },
    });
    expect(project.memberships.map((m) => [m.user.email, m.role]).sort()).toEqual(
      DEMO_USERS.map((u) => [u.email, u.role]).sort(),
    );
    expect(project.issues.length).toBe(10);
    expect(project.issueCounter).toBe(10);
    expect(project.issues.flatMap((i) => i.comments).some((c) => c.authorId === null && c.externalAuthor)).toBe(true);
    expect(await prisma.project.count()).toBe(2);
    const owner = project.memberships.find((m) => m.role === 'OWNER')!.user;
    expect(await verifyPassword(DEMO_PASSWORD, owner.passwordHash)).toBe(true);
    // Seeding again changes nothing.
    const before = await counts();
    expect(await seedIfEmpty(prisma)).toBe(false);
    expect((await seedDemo(prisma)).projectId).toBe(project.id);
    expect(await counts()).toEqual(before);
  });

  it('an interrupted seed leaves nothing behind, and the next start seeds completely', async () => {
    const prisma = await getPrisma();
    await breakAtEighthIssue();
    await expect(seedIfEmpty(prisma)).rejects.toThrow(/simulated crash/);
    expect(await counts()).toEqual(EMPTY);
    await expect(seedDemo(prisma)).rejects.toThrow(/simulated crash/);
    expect(await counts()).toEqual(EMPTY);

    await prisma.$executeRawUnsafe('DROP TRIGGER seed_breaker ON "Issue"');
    expect(await seedIfEmpty(prisma)).toBe(true);
    expect(await prisma.issue.count({ where: { project: { slug: DEMO_PROJECT_SLUG } } })).toBe(10);
  });

  it('completes a partial seed left by an older version (demo users without their project)', async () => {
    const prisma = await getPrisma();
    for (const u of DEMO_USERS.slice(0, 2))
      await prisma.user.create({ data: { id: newId('u_'), email: u.email, name: u.name } });
    expect(await seedIfEmpty(prisma)).toBe(true);
    expect(await prisma.projectMembership.count({ where: { project: { slug: DEMO_PROJECT_SLUG } } })).toBe(
      DEMO_USERS.length,
    );
  });

  it('never seeds a database with real users or projects', async () => {
    const prisma = await getPrisma();
    await prisma.user.create({ data: { id: newId('u_'), email: 'real.person@company.example', name: 'Real Person' } });
    expect(await seedIfEmpty(prisma)).toBe(false);
    expect(await counts()).toEqual({ ...EMPTY, users: 1 });
    await wipe();
    await prisma.project.create({ data: { id: newId('p_'), slug: 'real', name: 'Real' } });
    expect(await seedIfEmpty(prisma)).toBe(false);
    expect(await counts()).toEqual({ ...EMPTY, projects: 1 });
  });

  it('two starts seeding at once seed once', async () => {
    const prisma = await getPrisma();
    const results = await Promise.all([seedIfEmpty(prisma), seedIfEmpty(prisma), seedIfEmpty(prisma)]);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await prisma.project.count({ where: { slug: DEMO_PROJECT_SLUG } })).toBe(1);
    expect(await prisma.issue.count()).toBe(11);
  });
});
