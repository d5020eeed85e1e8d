/**
 * The sign-in refusals the server reports through next-auth, and what the login form says about
 * them: ONE contract for both sides. next-auth passes the message of an error thrown by the
 * credentials check to the client as its `error` string; ours is `<CODE>:<retry after seconds>`.
 * No message says whether the email address has an account: a locked unknown address reads the
 * same as a locked real one.
 */
import { z } from 'zod';

export const SIGN_IN_REFUSALS = {
  /** Too many failed sign-ins for this account or address (HTTP 429). */
  SIGNIN_LOCKED: 429,
  /** Every password check slot is busy (HTTP 503); retry in a few seconds. */
  SIGNIN_BUSY: 503,
  /** The check could not run (the database is unreachable) (HTTP 503). */
  SIGNIN_UNAVAILABLE: 503,
} as const;
export type SignInRefusalCode = keyof typeof SIGN_IN_REFUSALS;

const RefusalSchema = z.object({
  code: z.enum(Object.keys(SIGN_IN_REFUSALS) as [SignInRefusalCode, ...SignInRefusalCode[]]),
  retryAfterSeconds: z.coerce
    .number()
    .int()
    .min(1)
    .max(86_400 * 7),
});
export type SignInRefusal = z.infer<typeof RefusalSchema>;

export function formatSignInRefusal(code: SignInRefusalCode, retryAfterSeconds: number): string {
  return `${code}:${Math.max(1, Math.ceil(retryAfterSeconds))}`;
}

/** The refusal in a next-auth `error` string, or null for anything else (wrong credentials...). */
export function parseSignInRefusal(error: string | null | undefined): SignInRefusal | null {
  if (!error) return null;
  const [code, seconds] = error.split(':');
  const r = RefusalSchema.safeParse({ code, retryAfterSeconds: seconds });
  return r.success ? r.data : null;
}

function inMinutes(seconds: number): string {
  const minutes = Math.ceil(seconds / 60);
  return minutes <= 1 ? 'in a minute' : `in ${minutes} minutes`;
}

/** What the login form shows for a failed credentials sign-in (`error` from next-auth). */
export function signInErrorMessage(error: string | null | undefined): string {
  const refusal = parseSignInRefusal(error);
  switch (refusal?.code) {
    case 'SIGNIN_LOCKED':
      return `Too many sign-in attempts. Try again ${inMinutes(refusal.retryAfterSeconds)}.`;
    case 'SIGNIN_BUSY':
      return 'The server is busy. Try again in a few seconds.';
    case 'SIGNIN_UNAVAILABLE':
      return 'Sign-in is temporarily unavailable. Try again shortly.';
    default:
      return 'Invalid email or password.';
  }
}
