/**
 * Limits on password sign-ins, kept in the limits store so every instance shares them:
 *
 * - per account: SIGNIN_ACCOUNT_MAX_FAILURES failed sign-ins in any SIGNIN_WINDOW_MINUTES (sliding
 *   window). The key is an HMAC of the normalized email, computed the same way whether or not an
 *   account exists, so an unknown address is limited exactly like a real one and the refusal says
 *   nothing about which it is. A successful sign-in clears the account's failures.
 * - per client address, when TRUST_PROXY says where to read it: SIGNIN_ADDRESS_MAX_FAILURES failed
 *   sign-ins in the same window (password spraying across many accounts from one place).
 *
 * An attempt is counted BEFORE its password is checked (a reservation): of 30 parallel attempts on
 * one account, only the first SIGNIN_ACCOUNT_MAX_FAILURES get a password check, on any number of
 * instances. A reservation is given back when the attempt succeeds or could not be checked (busy,
 * database down), so only checked, wrong passwords count.
 */
import 'server-only';
import { createHmac } from 'node:crypto';
import type { PrismaClient } from '@/generated/prisma/client';
import { formatSignInRefusal, type SignInRefusalCode } from '@/lib/sign-in-errors';
import type { Env } from './env';
import { hitLimit, refundLimit, resetLimit } from './limits';

/** A sign-in refused before or instead of the password check; its message is the client's code. */
export class SignInRefusedError extends Error {
  constructor(
    readonly code: SignInRefusalCode,
    readonly retryAfterSeconds: number,
  ) {
    super(formatSignInRefusal(code, retryAfterSeconds));
    this.name = 'SignInRefusedError';
  }
}

interface LimitSpec {
  key: string;
  limit: number;
}

function accountLimitKey(email: string, secret: string): string {
  // Keyed with the app secret: the table never holds (or lets anyone test for) email addresses.
  const digest = createHmac('sha256', secret).update(email.trim().toLowerCase()).digest('hex').slice(0, 40);
  return `signin:account:${digest}`;
}

function addressLimitKey(address: string): string {
  return `signin:address:${address}`;
}

export interface SignInAttempt {
  /** The password was right: the account's failures are forgotten, the address's reservation returned. */
  succeeded(): Promise<void>;
  /** The password could not be checked: every reservation is returned. */
  notChecked(): Promise<void>;
}

/**
 * Reserves one failure on the address (when known) and on the account, in that order; throws
 * SignInRefusedError('SIGNIN_LOCKED') when either is used up (returning what it reserved).
 */
export async function reserveSignInAttempt(
  prisma: PrismaClient,
  who: { email: string; address: string | null },
  e: Pick<
    Env,
    'NEXTAUTH_SECRET' | 'SIGNIN_ACCOUNT_MAX_FAILURES' | 'SIGNIN_ADDRESS_MAX_FAILURES' | 'SIGNIN_WINDOW_MINUTES'
  >,
): Promise<SignInAttempt> {
  const windowSeconds = e.SIGNIN_WINDOW_MINUTES * 60;
  const account: LimitSpec = {
    key: accountLimitKey(who.email, e.NEXTAUTH_SECRET),
    limit: e.SIGNIN_ACCOUNT_MAX_FAILURES,
  };
  const address: LimitSpec | null = who.address
    ? { key: addressLimitKey(who.address), limit: e.SIGNIN_ADDRESS_MAX_FAILURES }
    : null;
  const give = (spec: LimitSpec) => refundLimit(prisma, { key: spec.key, windowSeconds });

  const reserved: LimitSpec[] = [];
  for (const spec of address ? [address, account] : [account]) {
    const r = await hitLimit(prisma, { key: spec.key, limit: spec.limit, windowSeconds });
    if (!r.allowed) {
      await Promise.all(reserved.map(give));
      throw new SignInRefusedError('SIGNIN_LOCKED', r.retryAfterSeconds);
    }
    reserved.push(spec);
  }
  return {
    async succeeded() {
      await Promise.all([resetLimit(prisma, account.key), ...(address ? [give(address)] : [])]);
    },
    async notChecked() {
      await Promise.all(reserved.map(give));
    },
  };
}
