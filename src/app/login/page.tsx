import type { Metadata } from 'next';
import { headers } from 'next/headers';
import { redirect } from 'next/navigation';
import { LoginForm } from '@/features/tracker/components/LoginForm';
import { currentUser, safeCallbackPath } from '@/features/tracker/page-access';
import { parseSignInRefusal, signInErrorMessage } from '@/lib/sign-in-errors';
import { enabledOAuthProviders } from '@/server/auth';
import { env } from '@/server/env';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Sign in · Tracker' };

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<Record<string, string | string[] | undefined>>;
}) {
  const sp = await searchParams;
  const h = await headers();
  const hosts = [
    h.get('x-forwarded-host'),
    h.get('host'),
    env().NEXTAUTH_URL ? new URL(env().NEXTAUTH_URL!).host : null,
  ].filter((x): x is string => Boolean(x));
  const callbackUrl = safeCallbackPath(sp.callbackUrl, hosts);
  if (await currentUser()) redirect(callbackUrl);
  const error = typeof sp.error === 'string' ? sp.error : null;
  // next-auth sends AccessDenied when the sign-in callback refused the account (e.g. an email
  // address the provider has not verified); sign-in limits carry their own code (without
  // JavaScript the form lands here); any other code is a generic failure.
  const oauthError =
    error === null || error === 'CredentialsSignin'
      ? null
      : parseSignInRefusal(error)
        ? signInErrorMessage(error)
        : error === 'AccessDenied'
          ? 'Sign-in refused: use an account whose email address the provider has verified, ' +
            'or sign in with your password.'
          : 'Sign-in failed. Please try again.';
  return (
    <main className="flex min-h-screen items-center justify-center p-6">
      <div className="w-full max-w-sm rounded-xl border border-slate-200 bg-white p-6 shadow-sm dark:border-slate-800 dark:bg-slate-900">
        <p className="text-sm font-semibold text-blue-700 dark:text-blue-300">Tracker</p>
        <h1 className="mb-6 mt-1 text-2xl font-semibold tracking-tight">Sign in</h1>
        {oauthError ? (
          <p role="alert" className="mb-4 text-sm text-red-700 dark:text-red-300">
            {oauthError}
          </p>
        ) : null}
        <LoginForm callbackUrl={callbackUrl} providers={enabledOAuthProviders()} />
      </div>
    </main>
  );
}
