import type { Metadata } from 'next';
import Link from 'next/link';

export const metadata: Metadata = { title: 'Not found · Tracker' };

/**
 * Shown for unknown addresses and for projects, issues or conversations the visitor cannot see
 * (the app answers both alike, so a 404 does not reveal whether something exists).
 */
export default function NotFound() {
  return (
    <main className="mx-auto max-w-xl px-4 py-16" data-testid="not-found">
      <p className="text-sm font-semibold text-blue-700 dark:text-blue-300">Tracker</p>
      <h1 className="mt-1 text-2xl font-semibold tracking-tight">Page not found</h1>
      <p className="mt-2 text-sm text-slate-600 dark:text-slate-400">
        This page does not exist, or you do not have access to it. If someone shared this link with you, ask a project
        owner or admin to add you to the project.
      </p>
      <p className="mt-6">
        <Link href="/projects" className="text-sm font-medium text-blue-700 underline dark:text-blue-300">
          Go to your projects
        </Link>
      </p>
    </main>
  );
}
