/**
 * Access checks and data access for the Tracker's server-rendered pages. Pages read data one way:
 * through the tRPC procedures, with a server caller acting as the signed-in user (`ctx.caller`), so
 * the project role is enforced where the browser's calls are checked. Signed-out visitors go to
 * /login (back to `path` afterwards), non-members get a 404 (so does a malformed project id, e.g. one
 * with a NUL), and each page checks the scope it needs with `ctx.can(...)` before it reads. Loads are
 * cached per request, so the project layout and the page share them.
 */
import { TRPCError } from '@trpc/server';
import { notFound, redirect } from 'next/navigation';
import { cache } from 'react';
import { getServerUser, type SessionUser } from '@/server/auth';
import { getPrisma } from '@/server/db';
import { hasProjectAccess, scopesFor, type Scope } from '@/server/rbac';
import { type ServerCaller, serverCaller } from '@/server/server-caller';
import { isIdentifier } from '@/server/text';
import type { ProjectAccess } from '@/server/trpc';
import { safeCallbackPath } from './callback';

export { safeCallbackPath };

export const currentUser = cache(async (): Promise<SessionUser | null> => getServerUser());

function loginUrl(path: string): string {
  return `/login?callbackUrl=${encodeURIComponent(safeCallbackPath(path))}`;
}

/** The signed-in user, or a redirect to the login page that comes back to `path`. */
export async function requireUser(path: string): Promise<SessionUser> {
  const user = await currentUser();
  if (!user) redirect(loginUrl(path));
  return user;
}

/** A tRPC caller acting as `user` for this request (one per request and user). */
export const pageCaller = cache(
  async (user: SessionUser): Promise<ServerCaller> => serverCaller(user, await getPrisma()),
);

export interface ProjectPageContext {
  user: SessionUser;
  /** The tRPC procedures, called as the signed-in user: how pages read data. */
  caller: ServerCaller;
  access: ProjectAccess;
  project: Awaited<ReturnType<ServerCaller['tracker']['projects']['access']>>['project'];
  scopes: Scope[];
  can(scope: Scope): boolean;
}

/** A page's query string as Next hands it over. */
export type SearchParams = Record<string, string | string[] | undefined>;

/** What Next hands a page under /projects/[projectId] that reads its query string. */
export interface ProjectQueryPageProps {
  params: Promise<{ projectId: string }>;
  searchParams: Promise<SearchParams>;
}

const loadProject = cache(async (userId: string, projectId: string) => {
  const user = await currentUser();
  if (!user || user.id !== userId) return null;
  // Anything but a well-formed id (too long, control characters such as NUL) is simply not found.
  if (!isIdentifier(projectId)) return null;
  const caller = await pageCaller(user);
  try {
    const { project, access } = await caller.tracker.projects.access({ projectId });
    return { caller, access, project };
  } catch (err) {
    // NOT_FOUND: not a member; FORBIDDEN: a member without project:read. Both pages are a 404.
    if (err instanceof TRPCError && (err.code === 'NOT_FOUND' || err.code === 'FORBIDDEN')) return null;
    throw err;
  }
});

/**
 * For a page under /projects/[projectId]: the user (or redirect to login), their access (or 404)
 * and the project. Callers then check the page's own scope with `ctx.can(...)`.
 */
export async function requireProjectPage(projectId: string, path: string): Promise<ProjectPageContext> {
  const user = await requireUser(path);
  const loaded = await loadProject(user.id, projectId);
  if (!loaded || !hasProjectAccess(loaded.access, 'project:read')) notFound();
  const scopes = scopesFor(loaded.access);
  return { user, ...loaded, scopes, can: (scope) => scopes.includes(scope) };
}

/** For the layout: like requireProjectPage, but null when signed out (the page redirects). */
export async function projectLayoutContext(projectId: string): Promise<ProjectPageContext | null> {
  const user = await currentUser();
  if (!user) return null;
  const loaded = await loadProject(user.id, projectId);
  if (!loaded || !hasProjectAccess(loaded.access, 'project:read')) notFound();
  const scopes = scopesFor(loaded.access);
  return { user, ...loaded, scopes, can: (scope) => scopes.includes(scope) };
}

/** Parses `/issues/[number]`; null for anything but a positive integer. */
export function parseIssueNumber(raw: string): number | null {
  if (!/^\d{1,8}$/.test(raw)) return null;
  const n = Number(raw);
  return n >= 1 && n <= 10_000_000 ? n : null;
}
