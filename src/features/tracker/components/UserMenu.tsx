import type { SessionUser } from '@/server/auth';
import { LogoutButton } from './LogoutButton';

/** The signed-in user's name and email, and the logout button. */
export function UserMenu({ user }: { user: SessionUser }) {
  return (
    <div className="flex items-center gap-3" data-testid="user-menu">
      <div className="hidden text-right leading-tight sm:block">
        <p className="text-sm font-medium" data-testid="user-name">
          {user.name}
        </p>
        <p className="text-xs text-slate-500 dark:text-slate-400">{user.email}</p>
      </div>
      <LogoutButton />
    </div>
  );
}
