'use client';
import { signOut } from 'next-auth/react';
import { useState } from 'react';
import { btn } from './ui';

export function LogoutButton() {
  const [pending, setPending] = useState(false);
  return (
    <button
      type="button"
      className={btn.secondary}
      disabled={pending}
      onClick={() => {
        setPending(true);
        void signOut({ callbackUrl: '/login' });
      }}
    >
      Log out
    </button>
  );
}
