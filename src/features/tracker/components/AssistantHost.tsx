'use client';
/**
 * The assistant's provider as this product mounts it: when the assistant changes issues (creates,
 * closes, comments on one), the page behind the panel is refreshed from the server, so lists and
 * issue pages show the change without a reload. Several changes in a row refresh once.
 */
import { useRouter } from 'next/navigation';
import { useCallback, useEffect, useRef, type ReactNode } from 'react';
import { InAppAgentProvider } from '@/features/in-app-agent/components';

/** Changes arriving within this window (one answer changing several issues) refresh the page once. */
const REFRESH_COALESCE_MS = 150;

export function AssistantHost({
  projectId,
  userId,
  children,
}: {
  projectId: string;
  userId: string;
  children: ReactNode;
}) {
  const router = useRouter();
  const timer = useRef<number | null>(null);
  useEffect(
    () => () => {
      if (timer.current !== null) window.clearTimeout(timer.current);
    },
    [],
  );
  const onProductChange = useCallback(() => {
    if (timer.current !== null) return;
    timer.current = window.setTimeout(() => {
      timer.current = null;
      router.refresh();
    }, REFRESH_COALESCE_MS);
  }, [router]);
  return (
    <InAppAgentProvider projectId={projectId} userId={userId} onProductChange={onProductChange}>
      {children}
    </InAppAgentProvider>
  );
}
