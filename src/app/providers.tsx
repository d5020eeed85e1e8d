'use client';
import { type ReactNode, useEffect, useState } from 'react';
import { makeTrpcClient, TRPCProvider } from '@/lib/trpc/client';

/** The tRPC client for client components: one per browser tab. */
export function Providers({ children }: { children: ReactNode }) {
  const [trpcClient] = useState(() => makeTrpcClient());
  useEffect(() => {
    // Lets browser tests (and anyone curious) tell when the page is interactive.
    document.body.dataset.hydrated = 'true';
  }, []);
  return <TRPCProvider client={trpcClient}>{children}</TRPCProvider>;
}
