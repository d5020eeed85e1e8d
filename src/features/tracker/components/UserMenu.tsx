import Link from 'next/link';
import type { SessionUser } from '@/server/auth';
import { LogoutButton } from './LogoutButton';
import { link } from './ui';

/** The signed-in user's name and email, a link to their account settings, and the logout button. */
export function UserMenu({ user }: { user: SessionUser }) {
  return (
    <div className="flex items-center gap-3" data-testid="user-menu">
      <div className="hidden text-right leading-tight sm:block">
        <p className="text-sm font-medium" data-testid="user-name">
          {user.name}
        </p>
        <p className="text-xs text-slate-500 dark:text-slate-400">{user.email}</p>
      </div>
      <Link href="/account" className={`text-sm ${link}`} data-testid="account-link">
        Account
      </Link>
      <LogoutButton />
    </div>
  );
}
