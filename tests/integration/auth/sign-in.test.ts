// Sign-in against the real database: the credentials check behind the login form, the re-hash of
// outdated password hashes, and the OAuth callback's linking rules (src/server/auth.ts).
import { randomBytes, scryptSync } from 'node:crypto';
import type { Account, Profile, User } from 'next-auth';
import { describe, expect, it } from 'vitest';
import { authOptions, authorizeCredentials } from '@/server/auth';
import { getPrisma } from '@/server/db';
import { hashPassword, needsRehash, verifyPassword } from '@/server/password';
import { createUser } from '../../helpers/fixtures';

function legacyHash(password: string): string {
  const salt = randomBytes(16);
  const key = scryptSync(password, salt, 32, { N: 2 ** 14, r: 8, p: 1 });
  return ['scrypt', 2 ** 14, 8, 1, salt.toString('base64'), key.toString('base64')].join('$');
}

describe('credentials', () => {
  it('signs in with the right password, and gives the same null for everything else', async () => {
    const prisma = await getPrisma();
    const user = await createUser('Signer', { passwordHash: await hashPassword('right password') });
    const noPassword = await createUser('OAuth only');

    expect(await authorizeCredentials(prisma, { email: user.email, password: 'right password' })).toEqual({
      id: user.id,
      email: user.email,
      name: 'Signer',
    });
    // The email is matched case-insensitively.
    expect(
      (await authorizeCredentials(prisma, { email: user.email.toUpperCase(), password: 'right password' }))?.id,
    ).toBe(user.id);

    const refused = [
      { email: user.email, password: 'wrong password' },
      { email: 'nobody@nowhere.test', password: 'right password' },
      { email: noPassword.email, password: 'anything' },
      { email: user.email, password: '' },
      { email: 'not an email', password: 'right password' },
      { email: user.email },
      null,
    ];
    for (const raw of refused) expect(await authorizeCredentials(prisma, raw), JSON.stringify(raw)).toBeNull();
  });

  it('re-hashes a correct password stored with outdated parameters, and only then', async () => {
    const prisma = await getPrisma();
    const old = legacyHash('old but fine');
    const user = await createUser('Legacy', { passwordHash: old });

    expect(await authorizeCredentials(prisma, { email: user.email, password: 'wrong' })).toBeNull();
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash).toBe(old);

    expect((await authorizeCredentials(prisma, { email: user.email, password: 'old but fine' }))?.id).toBe(user.id);
    const fresh = (await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash!;
    expect(fresh).not.toBe(old);
    expect(fresh).toMatch(/^scrypt\$131072\$8\$1\$/);
    expect(needsRehash(fresh)).toBe(false);
    expect(await verifyPassword('old but fine', fresh)).toBe(true);
    // And the next sign-in works with the new hash, without re-hashing again.
    expect((await authorizeCredentials(prisma, { email: user.email, password: 'old but fine' }))?.id).toBe(user.id);
    expect((await prisma.user.findUniqueOrThrow({ where: { id: user.id } })).passwordHash).toBe(fresh);
  });
});

describe('OAuth sign-in callback', () => {
  const signIn = (user: User, account: Account, profile?: Profile) =>
    authOptions().callbacks!.signIn!({ user, account, profile });

  function google(providerAccountId: string): Account {
    return { provider: 'google', type: 'oauth', providerAccountId, access_token: 'ya29.test' };
  }

  it('does not link an unverified email to an existing account (with a password), nor create one', async () => {
    const prisma = await getPrisma();
    const victim = await createUser('Victim', { passwordHash: await hashPassword('pw') });
    const id = `g-${randomBytes(4).toString('hex')}`;
    const user: User = { id, email: victim.email, name: 'Attacker' };
    expect(await signIn(user, google(id), { email: victim.email, email_verified: false } as Profile)).toBe(false);
    expect(user.id).toBe(id);
    expect(await prisma.account.count({ where: { provider: 'google', providerAccountId: id } })).toBe(0);

    const newcomer = `new-${randomBytes(4).toString('hex')}@example.com`;
    expect(await signIn({ id, email: newcomer }, google(id), { email: newcomer } as Profile)).toBe(false);
    expect(await prisma.user.count({ where: { email: newcomer } })).toBe(0);
  });

  it('links a verified email to the existing account, and signs in through the link afterwards', async () => {
    const prisma = await getPrisma();
    const owner = await createUser('Owner of the address', { passwordHash: await hashPassword('pw') });
    const id = `g-${randomBytes(4).toString('hex')}`;
    const user: User = { id, email: owner.email.toUpperCase(), name: 'Owner' };
    expect(await signIn(user, google(id), { email: owner.email, email_verified: true } as Profile)).toBe(true);
    expect(user.id).toBe(owner.id);
    const link = await prisma.account.findUniqueOrThrow({
      where: { provider_providerAccountId: { provider: 'google', providerAccountId: id } },
    });
    expect(link.userId).toBe(owner.id);

    // Later: the same identity signs in as the same user, even if the provider's email changed.
    const again: User = { id, email: 'changed@example.com' };
    expect(await signIn(again, google(id), { email: 'changed@example.com', email_verified: false } as Profile)).toBe(
      true,
    );
    expect(again.id).toBe(owner.id);
    expect(await prisma.user.count({ where: { email: 'changed@example.com' } })).toBe(0);
  });

  it('creates an account for a new, verified email', async () => {
    const prisma = await getPrisma();
    const id = `g-${randomBytes(4).toString('hex')}`;
    const email = `fresh-${randomBytes(4).toString('hex')}@example.com`;
    const user: User = { id, email, name: 'Fresh Face' };
    expect(await signIn(user, google(id), { email, email_verified: true } as Profile)).toBe(true);
    const created = await prisma.user.findUniqueOrThrow({ where: { email } });
    expect(user.id).toBe(created.id);
    expect(created).toMatchObject({ name: 'Fresh Face', passwordHash: null });
    expect(await prisma.account.count({ where: { userId: created.id, provider: 'google' } })).toBe(1);
  });

  it('credentials sign-ins pass through untouched', async () => {
    expect(
      await signIn({ id: 'u_x' }, { provider: 'credentials', type: 'credentials', providerAccountId: 'u_x' }),
    ).toBe(true);
  });
});
