import type { NextAuthOptions } from 'next-auth';
import { getServerSession } from 'next-auth';
import { decode } from 'next-auth/jwt';
import CredentialsProvider from 'next-auth/providers/credentials';
import GitHubProvider from 'next-auth/providers/github';
import GoogleProvider from 'next-auth/providers/google';
import { z } from 'zod';
import { getPrisma } from './db';
import { env } from './env';
import { newId } from './ids';
import { verifyPassword } from './password';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  isAdmin: boolean;
}

const CredentialsSchema = z.object({
  email: z.string().trim().toLowerCase().email().max(320),
  password: z.string().min(1).max(1024),
});

function oauthProviders(): NextAuthOptions['providers'] {
  const e = env();
  const list: NextAuthOptions['providers'] = [];
  if (e.GITHUB_ID && e.GITHUB_SECRET) list.push(GitHubProvider({ clientId: e.GITHUB_ID, clientSecret: e.GITHUB_SECRET }));
  if (e.GOOGLE_CLIENT_ID && e.GOOGLE_CLIENT_SECRET)
    list.push(GoogleProvider({ clientId: e.GOOGLE_CLIENT_ID, clientSecret: e.GOOGLE_CLIENT_SECRET }));
  return list;
}

/** Names of the OAuth providers enabled by the environment (for the login page). */
export function enabledOAuthProviders(): Array<{ id: string; name: string }> {
  return oauthProviders().map((p) => ({ id: p.id, name: p.name }));
}

let cachedOptions: NextAuthOptions | undefined;

export function authOptions(): NextAuthOptions {
  if (cachedOptions) return cachedOptions;
  const e = env();
  cachedOptions = {
    secret: e.NEXTAUTH_SECRET,
    session: { strategy: 'jwt', maxAge: 7 * 24 * 3600 },
    pages: { signIn: '/login' },
    providers: [
      CredentialsProvider({
        name: 'Email and password',
        credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
        async authorize(raw) {
          const parsed = CredentialsSchema.safeParse(raw);
          // Always run one KDF evaluation so a missing user costs the same time as a wrong password.
          if (!parsed.success) {
            await verifyPassword('x', null);
            return null;
          }
          const prisma = await getPrisma();
          const user = await prisma.user.findUnique({ where: { email: parsed.data.email } });
          const ok = await verifyPassword(parsed.data.password, user?.passwordHash ?? null);
          if (!user || !ok) return null;
          return { id: user.id, email: user.email, name: user.name };
        },
      }),
      ...oauthProviders(),
    ],
    callbacks: {
      async signIn({ user, account }) {
        if (!account || account.provider === 'credentials') return true;
        // OAuth: link to an existing user by verified email or create one.
        if (!user.email) return false;
        const prisma = await getPrisma();
        const email = user.email.toLowerCase();
        const existing = await prisma.user.upsert({
          where: { email },
          update: {},
          create: { id: newId('u_'), email, name: user.name ?? email, image: user.image ?? null },
        });
        await prisma.account.upsert({
          where: { provider_providerAccountId: { provider: account.provider, providerAccountId: account.providerAccountId } },
          update: {},
          create: { id: newId('a_'), userId: existing.id, provider: account.provider, providerAccountId: account.providerAccountId },
        });
        user.id = existing.id;
        return true;
      },
      async jwt({ token, user }) {
        if (user?.id) token.uid = user.id;
        return token;
      },
      async session({ session, token }) {
        if (session.user && typeof token.uid === 'string') (session.user as { id?: string }).id = token.uid;
        return session;
      },
    },
  };
  return cachedOptions;
}

const COOKIE_NAMES = ['__Secure-next-auth.session-token', 'next-auth.session-token'];

function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  const parts = header.split(';').map((p) => p.trim());
  const direct = parts.find((p) => p.startsWith(`${name}=`));
  if (direct) return decodeURIComponent(direct.slice(name.length + 1));
  // next-auth splits large tokens into name.0, name.1, ...
  const chunks = parts
    .filter((p) => p.startsWith(`${name}.`))
    .map((p) => {
      const eq = p.indexOf('=');
      return { i: Number(p.slice(name.length + 1, eq)), v: decodeURIComponent(p.slice(eq + 1)) };
    })
    .filter((c) => Number.isInteger(c.i))
    .sort((a, b) => a.i - b.i);
  return chunks.length ? chunks.map((c) => c.v).join('') : undefined;
}

async function loadUser(id: string): Promise<SessionUser | null> {
  const prisma = await getPrisma();
  const user = await prisma.user.findUnique({ where: { id }, select: { id: true, email: true, name: true, isAdmin: true } });
  return user;
}

/**
 * The signed-in user of a web Request (route handlers, tRPC). Reads the next-auth session cookie
 * directly, so it works in any runtime that hands over a standard Request.
 */
export async function getSessionUser(req: Request): Promise<SessionUser | null> {
  const header = req.headers.get('cookie');
  for (const name of COOKIE_NAMES) {
    const token = readCookie(header, name);
    if (!token) continue;
    try {
      const jwt = await decode({ token, secret: env().NEXTAUTH_SECRET });
      if (jwt && typeof jwt.uid === 'string') return loadUser(jwt.uid);
    } catch {
      return null;
    }
  }
  return null;
}

/** The signed-in user in a server component or server action. */
export async function getServerUser(): Promise<SessionUser | null> {
  const session = await getServerSession(authOptions());
  const id = (session?.user as { id?: string } | undefined)?.id;
  return id ? loadUser(id) : null;
}

/**
 * Cookie-authenticated mutations must come from this origin: browsers always send Origin on a
 * cross-site POST, and Sec-Fetch-Site tells the rest. Non-browser clients send neither.
 */
export function isSameOrigin(req: Request): boolean {
  const origin = req.headers.get('origin');
  if (origin) {
    const host = req.headers.get('x-forwarded-host') ?? req.headers.get('host');
    let originHost: string;
    try {
      originHost = new URL(origin).host;
    } catch {
      return false;
    }
    const allowed = new Set<string>();
    if (host) allowed.add(host);
    const configured = env().NEXTAUTH_URL;
    if (configured) allowed.add(new URL(configured).host);
    return allowed.has(originHost);
  }
  const site = req.headers.get('sec-fetch-site');
  return site === null || site === 'same-origin' || site === 'none';
}
