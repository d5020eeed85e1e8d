'use client';
import { useEffect } from 'react';
import { titleWithCount } from './attention';

/**
 * Puts the number of requests waiting in front of the page title while any wait ("(2) Issues ·
 * Tracker"), also after the product changes the title (a navigation), and takes it away after.
 */
export function useTitleCount(count: number): void {
  useEffect(() => {
    const apply = () => {
      const want = titleWithCount(document.title, count);
      if (document.title !== want) document.title = want;
    };
    apply();
    const observer = new MutationObserver(apply);
    observer.observe(document.head, { subtree: true, childList: true, characterData: true });
    return () => {
      observer.disconnect();
      document.title = titleWithCount(document.title, 0);
    };
  }, [count]);
}
