'use client';
/**
 * The agent store's life in React (agent-store.ts): one store per project and user, started when
 * the provider mounts and stopped when it unmounts (the stream is let go; the run goes on). The
 * panel reads it through selectors (`useAgentSelector`, panel-context.tsx).
 */
import { useEffect, useMemo } from 'react';
import { createAgentStore, type AgentStore, type AgentStoreDeps } from './agent-store';

/** Creates the store for these deps (again when `identity` changes) and mounts it while in use. */
export function useAgentStore(deps: () => AgentStoreDeps, identity: readonly unknown[]): AgentStore {
  // The store is built during render (no side effects in its constructor) and started in an effect.
  // biome-ignore lint/correctness/useExhaustiveDependencies: the caller's identity list decides when a new store is built
  const store = useMemo(() => createAgentStore(deps()), identity);
  useEffect(() => {
    store.mount();
    return () => store.unmount();
  }, [store]);
  return store;
}
