import type { ReactNode } from 'react';
import { Providers } from '@/app/providers';

/** Everything under /projects gets the tRPC + React Query providers for its client components. */
export default function ProjectsLayout({ children }: { children: ReactNode }) {
  return <Providers>{children}</Providers>;
}
