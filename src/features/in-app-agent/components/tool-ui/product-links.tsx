'use client';
/**
 * Where the product's objects live, for the render components (tool result cards, reference chips,
 * approval previews): the project the conversation belongs to. Provided by whoever renders a
 * conversation (the panel's message list, the review page); without a provider the components show
 * the same content without links. One small value that changes only with the project, so memoized
 * message rows keep rendering only when their own props change.
 */
import { createContext, useContext, useMemo, type ReactNode } from 'react';
import { issueHref } from '../../issue-references';

export interface ProductLinks {
  projectId: string;
  /** The page of one issue of the project. */
  issue: (number: number) => string;
  /** The app's own origin in this browser (an absolute link there is a product page). */
  origins: readonly string[];
}

const ProductLinksContext = createContext<ProductLinks | null>(null);

export function ProductLinksProvider({ projectId, children }: { projectId: string; children?: ReactNode }) {
  const value = useMemo<ProductLinks>(
    () => ({
      projectId,
      issue: (number) => issueHref(projectId, number),
      origins: typeof window === 'undefined' ? [] : [window.location.origin],
    }),
    [projectId],
  );
  return <ProductLinksContext.Provider value={value}>{children}</ProductLinksContext.Provider>;
}

/** The project's links, or null outside a provider (then nothing links). */
export function useProductLinks(): ProductLinks | null {
  return useContext(ProductLinksContext);
}
