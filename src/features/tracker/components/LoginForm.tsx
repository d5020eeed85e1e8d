'use client';
import { signIn } from 'next-auth/react';
import { useEffect, useState, type FormEvent } from 'react';
import { signInErrorMessage } from '@/lib/sign-in-errors';
import { Field, btn, field } from './ui';

/** Email + password sign-in, plus a button per OAuth provider enabled on the server. */
export function LoginForm({
  callbackUrl,
  providers,
}: {
  callbackUrl: string;
  providers: Array<{ id: string; name: string }>;
}) {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);
  useEffect(() => {
    document.body.dataset.hydrated = 'true';
  }, []);

  async function onSubmit(e: FormEvent<HTMLFormElement>) {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setPending(true);
    setError(null);
    try {
      const res = await signIn('credentials', {
        redirect: false,
        email: String(form.get('email') ?? ''),
        password: String(form.get('password') ?? ''),
        callbackUrl,
      });
      if (!res || res.error || !res.ok) {
        // Wrong credentials, too many attempts (with the wait), or a busy server: never whether
        // the email address has an account.
        setError(signInErrorMessage(res?.error));
        setPending(false);
        return;
      }
      // A full navigation, so every server component sees the new session cookie.
      window.location.assign(callbackUrl);
    } catch {
      setError('Sign-in failed. Check your connection and try again.');
      setPending(false);
    }
  }

  return (
    <div className="space-y-6">
      <form onSubmit={onSubmit} className="space-y-4" noValidate aria-describedby={error ? 'login-error' : undefined}>
        <Field id="email" label="Email">
          <input
            id="email"
            name="email"
            type="email"
            autoComplete="username"
            required
            maxLength={320}
            className={field}
          />
        </Field>
        <Field id="password" label="Password">
          <input
            id="password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            maxLength={1024}
            className={field}
          />
        </Field>
        {error ? (
          <p id="login-error" role="alert" className="text-sm text-red-700 dark:text-red-300">
            {error}
          </p>
        ) : null}
        <button type="submit" className={`${btn.primary} w-full`} disabled={pending}>
          {pending ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {providers.length > 0 ? (
        <div className="space-y-2">
          <p className="text-center text-xs uppercase tracking-wide text-slate-500 dark:text-slate-400">or</p>
          {providers.map((p) => (
            <button
              key={p.id}
              type="button"
              className={`${btn.secondary} w-full`}
              onClick={() => void signIn(p.id, { callbackUrl })}
            >
              Continue with {p.name}
            </button>
          ))}
        </div>
      ) : null}
    </div>
  );
}
