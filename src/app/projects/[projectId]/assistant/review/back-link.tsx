import Link from 'next/link';
import type { ReactNode } from 'react';

/** The line above a review page's heading that leads back to the page it was opened from. */
export function BackLink({ href, children }: { href: string; children: ReactNode }) {
  return (
    <p className="text-sm">
      <Link href={href} className="text-blue-700 underline dark:text-blue-300">
        ← {children}
      </Link>
    </p>
  );
}
