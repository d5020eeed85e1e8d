import 'server-only';
import type { NextAuthOptions } from 'next-auth';
import { getServerSession } from 'next-auth';
import { decode } from 'next-auth/jwt';
import CredentialsProviderModule from 'next-auth/providers/credentials';
import GitHubProviderModule from 'next-auth/providers/github';
import GoogleProviderModule from 'next-auth/providers/google';
import { z } from 'zod';
import type { PrismaClient } from '@/generated/prisma/client';
import { clientAddress, type HeaderSource } from './client-address';
import { parseCookieHeader, readCookie } from './cookies';
import { getPrisma } from './db';
import { env, type Env } from './env';
import { newId } from './ids';
import { hashPassword, needsRehash, PasswordHashBusyError, verifyPassword } from './password';
import { reserveSignInAttempt, SignInRefusedError, type SignInAttempt } from './sign-in-guard';
import { isIdentifier } from './text';

/**
 * next-auth's modules are CommonJS with `exports.default`. Next.js and vitest hand over that
 * default; plain Node ESM loaders (tsx scripts such as `npm run fuzz`) hand over the module object.
 */
export function cjsDefault<T>(mod: T): T {
  const inner = (mod as { default?: unknown } | null)?.default;
  return (typeof mod !== 'function' && typeof inner === 'function' ? inner : mod) as T;
}
const CredentialsProvider = cjsDefault(CredentialsProviderModule);
const GitHubProvider = cjsDefault(GitHubProviderModule);
const GoogleProvider = cjsDefault(GoogleProviderModule);

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

/**
 * The credentials check behind the sign-in form. Unknown email, wrong password and an account
 * without a password give the same outcome (null) after the same work (one scrypt evaluation), so
 * neither the answer nor its timing tells which. A correct password stored with outdated scrypt
 * parameters is re-hashed with the current ones. Malformed input is refused without any work.
 *
 * Abuse limits (see sign-in-guard.ts) apply before the password is checked: a locked account or
 * address, a full password-hash queue or an unreachable database throw SignInRefusedError, whose
 * message next-auth hands to the login form as the error code. `request.headers` gives the client
 * address when TRUST_PROXY is set.
 */
export async function authorizeCredentials(
  prisma: PrismaClient,
  raw: unknown,
  request: { headers?: HeaderSource } = {},
): Promise<{ id: string; email: string; name: string } | null> {
  const parsed = CredentialsSchema.safeParse(raw);
  if (!parsed.success) return null;
  const settings = env();
  const { email, password } = parsed.data;
  const address = request.headers ? clientAddress(request.headers, settings.TRUST_PROXY) : null;

  let attempt: SignInAttempt;
  try {
    attempt = await reserveSignInAttempt(prisma, { email, address }, settings);
  } catch (err) {
    if (err instanceof SignInRefusedError) throw err;
    throw unavailable(err);
  }
  let user: { id: string; email: string; name: string; passwordHash: string | null } | null;
  let ok: boolean;
  try {
    user = await prisma.user.findUnique({
      where: { email },
      select: { id: true, email: true, name: true, passwordHash: true },
    });
    ok = await verifyPassword(password, user?.passwordHash ?? null);
  } catch (err) {
    // Not checked: the attempt must not count as a failure.
    await attempt.notChecked().catch(() => undefined);
    if (err instanceof PasswordHashBusyError) throw new SignInRefusedError('SIGNIN_BUSY', BUSY_RETRY_SECONDS);
    throw unavailable(err);
  }
  if (!user || !ok) return null;
  await attempt.succeeded().catch((err) => console.error(`[auth] could not clear sign-in failures: ${errorName(err)}`));
  if (user.passwordHash && needsRehash(user.passwordHash)) {
    // Only replaces the hash that was verified (a password change in between wins). Best effort:
    // when every hash slot is busy, the next sign-in re-hashes.
    const verified = user.passwordHash;
    await hashPassword(password)
      .then((fresh) =>
        prisma.user.updateMany({ where: { id: user.id, passwordHash: verified }, data: { passwordHash: fresh } }),
      )
      .catch(() => undefined);
  }
  return { id: user.id, email: user.email, name: user.name };
}

const BUSY_RETRY_SECONDS = 5;
const UNAVAILABLE_RETRY_SECONDS = 10;

function errorName(err: unknown): string {
  const e = err as { name?: unknown; code?: unknown } | null;
  return `${typeof e?.name === 'string' ? e.name : 'Error'}${typeof e?.code === 'string' ? ` code=${e.code}` : ''}`;
}

/** Logged by class and code only (a database message can quote the email); the client gets a code. */
function unavailable(err: unknown): SignInRefusedError {
  console.error(`[auth] sign-in check failed: ${errorName(err)}`);
  return new SignInRefusedError('SIGNIN_UNAVAILABLE', UNAVAILABLE_RETRY_SECONDS);
}

export type OAuthDecision =
  | { kind: 'signIn'; userId: string }
  | { kind: 'link'; userId: string }
  | { kind: 'create' }
  | { kind: 'refuse'; reason: 'NO_EMAIL' | 'EMAIL_NOT_VERIFIED' };

/**
 * Who an OAuth sign-in is, decided from facts only (unit-tested):
 * - an identity already linked to a user signs in as that user;
 * - otherwise the provider must vouch for the email: an unverified (or missing) email neither links
 *   to an existing account (which would hand it, password-protected or not, to whoever typed the
 *   address at the provider) nor creates a new one;
 * - a verified email links to the account with that email, or creates one.
 */
export function decideOAuthSignIn(facts: {
  /** The user this provider identity is already linked to, if any. */
  linkedUserId: string | null;
  email: string | null;
  emailVerified: boolean;
  /** The user holding `email`, if any (with or without a password: the rule is the same). */
  existingUser: { id: string } | null;
}): OAuthDecision {
  if (facts.linkedUserId) return { kind: 'signIn', userId: facts.linkedUserId };
  if (!facts.email) return { kind: 'refuse', reason: 'NO_EMAIL' };
  if (!facts.emailVerified) return { kind: 'refuse', reason: 'EMAIL_NOT_VERIFIED' };
  if (facts.existingUser) return { kind: 'link', userId: facts.existingUser.id };
  return { kind: 'create' };
}

const GitHubEmails = z.array(z.object({ email: z.string(), verified: z.boolean(), primary: z.boolean().optional() }));

/**
 * Whether the provider vouches for `email`: Google's `email_verified` claim; for GitHub, the
 * `verified` flag of that address in `GET /user/emails` (the sign-in's `user:email` scope). Any
 * failure to find out counts as not verified.
 */
export async function isOAuthEmailVerified(
  opts: { provider: string; email: string; profile?: unknown; accessToken?: string | null },
  fetchImpl: typeof fetch = fetch,
): Promise<boolean> {
  const email = opts.email.toLowerCase();
  if (opts.provider === 'google') {
    const p = opts.profile as { email_verified?: unknown; email?: unknown } | undefined;
    return p?.email_verified === true && typeof p.email === 'string' && p.email.toLowerCase() === email;
  }
  if (opts.provider === 'github') {
    if (!opts.accessToken) return false;
    try {
      const res = await fetchImpl('https://api.github.com/user/emails', {
        headers: {
          Authorization: `Bearer ${opts.accessToken}`,
          Accept: 'application/vnd.github+json',
          'User-Agent': 'tracker',
        },
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) return false;
      const list = GitHubEmails.safeParse(await res.json());
      return list.success && list.data.some((e) => e.verified && e.email.toLowerCase() === email);
    } catch {
      return false;
    }
  }
  return false;
}

/** The OAuth providers whose two variables are both set (env() refuses a half-configured pair). */
export function oauthProviders(settings: Env = env()): NextAuthOptions['providers'] {
  const list: NextAuthOptions['providers'] = [];
  if (settings.GITHUB_ID && settings.GITHUB_SECRET)
    list.push(GitHubProvider({ clientId: settings.GITHUB_ID, clientSecret: settings.GITHUB_SECRET }));
  if (settings.GOOGLE_CLIENT_ID && settings.GOOGLE_CLIENT_SECRET)
    list.push(GoogleProvider({ clientId: settings.GOOGLE_CLIENT_ID, clientSecret: settings.GOOGLE_CLIENT_SECRET }));
  return list;
}

/** Names of the OAuth providers enabled by the environment (for the login page). */
export function enabledOAuthProviders(): Array<{ id: string; name: string }> {
  return oauthProviders().map((p) => ({ id: p.id, name: p.name }));
}

let cachedOptions: NextAuthOptions | undefined;

export function authOptions(): NextAuthOptions {
  if (cachedOptions) return cachedOptions;
  const settings = env();
  cachedOptions = {
    secret: settings.NEXTAUTH_SECRET,
    session: { strategy: 'jwt', maxAge: 7 * 24 * 3600 },
    pages: { signIn: '/login' },
    providers: [
      CredentialsProvider({
        name: 'Email and password',
        credentials: { email: { label: 'Email', type: 'email' }, password: { label: 'Password', type: 'password' } },
        async authorize(raw, req) {
          return authorizeCredentials(await getPrisma(), raw, { headers: req.headers as HeaderSource | undefined });
        },
      }),
      ...oauthProviders(),
    ],
    callbacks: {
      /**
       * Where to go after signing in or out. The URL comes from the request (query, body or a
       * cookie): a path of this site or a URL on its origin is kept, anything else — another site,
       * or text that is no URL at all (next-auth's default would throw: a 500) — goes to the root.
       */
      redirect({ url, baseUrl }) {
        if (url.startsWith('/')) return `${baseUrl}${url}`;
        try {
          return new URL(url).origin === baseUrl ? url : baseUrl;
        } catch {
          return baseUrl;
        }
      },
      async signIn({ user, account, profile }) {
        if (!account || account.provider === 'credentials') return true;
        // OAuth: an identity linked before, or a provider-verified email (see decideOAuthSignIn).
        const prisma = await getPrisma();
        const key = { provider: account.provider, providerAccountId: account.providerAccountId };
        const linked = await prisma.account.findUnique({
          where: { provider_providerAccountId: key },
          select: { userId: true },
        });
        const email = user.email?.trim().toLowerCase() || null;
        const existing =
          !linked && email ? await prisma.user.findUnique({ where: { email }, select: { id: true } }) : null;
        const emailVerified =
          !linked && email
            ? await isOAuthEmailVerified({
                provider: account.provider,
                email,
                profile,
                accessToken: account.access_token ?? null,
              })
            : false;
        const decision = decideOAuthSignIn({
          linkedUserId: linked?.userId ?? null,
          email,
          emailVerified,
          existingUser: existing,
        });
        if (decision.kind === 'refuse') return false;
        let userId: string;
        if (decision.kind === 'signIn') userId = decision.userId;
        else {
          userId =
            decision.kind === 'link'
              ? decision.userId
              : (
                  await prisma.user.upsert({
                    where: { email: email! },
                    update: {},
                    create: { id: newId('u_'), email: email!, name: user.name ?? email!, image: user.image ?? null },
                  })
                ).id;
          await prisma.account.upsert({
            where: { provider_providerAccountId: key },
            update: {},
            create: { id: newId('a_'), userId, ...key },
          });
        }
        user.id = userId;
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

async function loadUser(id: string): Promise<SessionUser | null> {
  if (!isIdentifier(id)) return null;
  const prisma = await getPrisma();
  const user = await prisma.user.findUnique({
    where: { id },
    select: { id: true, email: true, name: true, isAdmin: true },
  });
  return user;
}

/**
 * The id of the signed-in user of a web Request, from the session cookie alone (no database
 * query): for hot paths that load the user together with what else they need.
 */
export async function getSessionUserId(req: Request): Promise<string | null> {
  // Undecodable cookie values are skipped: a broken session cookie is no session, never an error.
  const cookies = parseCookieHeader(req.headers.get('cookie'));
  for (const name of COOKIE_NAMES) {
    const token = readCookie(cookies, name);
    if (!token) continue;
    try {
      const jwt = await decode({ token, secret: env().NEXTAUTH_SECRET });
      return jwt && typeof jwt.uid === 'string' && isIdentifier(jwt.uid) ? jwt.uid : null;
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * The signed-in user of a web Request (route handlers, tRPC). Reads the next-auth session cookie
 * directly, so it works in any runtime that hands over a standard Request.
 */
export async function getSessionUser(req: Request): Promise<SessionUser | null> {
  const id = await getSessionUserId(req);
  return id ? loadUser(id) : null;
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
