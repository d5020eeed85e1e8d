import type { ReactNode } from 'react';
import { Providers } from '@/app/providers';

/** The account pages get the tRPC + React Query providers for their client components. */
export default function AccountLayout({ children }: { children: ReactNode }) {
  return <Providers>{children}</Providers>;
}
