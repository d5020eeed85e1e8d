'use client';
/**
 * React's view of the agent store (agent-store.ts): one store per project and user, started when
 * the provider mounts and stopped when it unmounts (the stream is let go; the run goes on), read
 * with `useSyncExternalStore` so every render sees one consistent snapshot.
 */
import { useEffect, useMemo, useSyncExternalStore } from 'react';
import { createAgentStore, type AgentState, type AgentStore, type AgentStoreDeps } from './agent-store';

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

export function useAgentState(store: AgentStore): AgentState {
  return useSyncExternalStore(store.subscribe, store.getSnapshot, store.getSnapshot);
}
