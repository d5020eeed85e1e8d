/**
 * What the panel tells the server about the page the user is on. Everything here is untrusted data
 * on the server side (it is never treated as instructions); sizes follow the request schema.
 */
import { LIMITS } from '../constants';
import type { PageContext } from '../schema';

const ISSUE_PATH = /^\/projects\/[^/]+\/issues\/(\d{1,7})(?:\/|$)/;

/** The issue number when the path is an issue page (`/projects/:id/issues/:number`). */
export function issueNumberFromPath(pathname: string | null | undefined): number | undefined {
  const m = pathname ? ISSUE_PATH.exec(pathname) : null;
  if (!m) return undefined;
  const n = Number(m[1]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

export type PageKind = 'issue' | 'issues' | 'settings' | 'review' | 'project';

export function pageKind(pathname: string | null | undefined): PageKind {
  const p = pathname ?? '';
  if (issueNumberFromPath(p) !== undefined) return 'issue';
  if (/^\/projects\/[^/]+\/issues\/?$/.test(p)) return 'issues';
  if (/^\/projects\/[^/]+\/settings(?:\/|$)/.test(p)) return 'settings';
  if (/^\/projects\/[^/]+\/assistant(?:\/|$)/.test(p)) return 'review';
  return 'project';
}

function cap(value: string | undefined | null, max: number): string | undefined {
  if (!value) return undefined;
  const v = value.trim();
  if (!v) return undefined;
  return v.length > max ? v.slice(0, max) : v;
}

export function buildPageContext(input: {
  pathname: string | null | undefined;
  title?: string | null;
  selection?: string | null;
}): PageContext {
  const ctx: PageContext = {};
  const route = cap(input.pathname, LIMITS.maxRouteChars);
  if (route) ctx.route = route;
  const title = cap(input.title, LIMITS.maxPageTitleChars);
  if (title) ctx.title = title;
  const issueNumber = issueNumberFromPath(input.pathname);
  if (issueNumber !== undefined) ctx.issueNumber = issueNumber;
  const selection = cap(input.selection, LIMITS.maxSelectionChars);
  if (selection) ctx.selection = selection;
  return ctx;
}

export interface Suggestion {
  /** Button text. */
  label: string;
  /** What is sent (or put in the input when `complete` is false). */
  prompt: string;
  /** False: the prompt needs finishing by the user, so it goes into the input instead of being sent. */
  complete: boolean;
}

/** 3-4 starting points that fit the page; phrased the way the offline demo model understands too. */
export function suggestionsFor(pathname: string | null | undefined): Suggestion[] {
  const kind = pageKind(pathname);
  const issue = issueNumberFromPath(pathname);
  if (kind === 'issue' && issue !== undefined) {
    return [
      { label: 'Summarize this issue', prompt: `Summarize issue ${issue}`, complete: true },
      { label: 'Show this issue', prompt: `Show issue ${issue}`, complete: true },
      { label: 'Close this issue', prompt: `Close issue ${issue}`, complete: true },
      { label: 'List open issues', prompt: 'List open issues', complete: true },
    ];
  }
  if (kind === 'issues') {
    return [
      { label: 'List open issues', prompt: 'List open issues', complete: true },
      { label: 'Summarize the project', prompt: 'Summarize the project', complete: true },
      { label: 'Create an issue…', prompt: 'Create an issue titled ', complete: false },
    ];
  }
  return [
    { label: 'Summarize the project', prompt: 'Summarize the project', complete: true },
    { label: 'List open issues', prompt: 'List open issues', complete: true },
    { label: 'Show issue 1', prompt: 'Show issue 1', complete: true },
    { label: 'Create an issue…', prompt: 'Create an issue titled ', complete: false },
  ];
}
