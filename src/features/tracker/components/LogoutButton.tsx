'use client';
import { signOut } from 'next-auth/react';
import { useState } from 'react';
import { forgetAssistantData } from '@/features/in-app-agent/components/tab-channel';
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
        // The assistant's drafts and panel state stay in this browser otherwise: the next person
        // to sign in here must not see them (every open tab forgets them too).
        forgetAssistantData();
        void signOut({ callbackUrl: '/login' });
      }}
    >
      Log out
    </button>
  );
}
