import type { ReactNode } from 'react';

/**
 * A wide table that scrolls sideways on a narrow screen (focusable, so keyboards scroll it too); a
 * group rather than a landmark, as a page shows several of them.
 */
export function Scrollable({ label, children }: { label: string; children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be reachable by keyboard
    <div role="group" aria-label={label} tabIndex={0} className="max-w-full overflow-x-auto">
      {children}
    </div>
  );
}
