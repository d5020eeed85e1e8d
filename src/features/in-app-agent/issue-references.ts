/**
 * Where an answer's text refers to issues of the project: "#12", "issue 12" and links to an issue
 * page (`/projects/<id>/issues/<n>`, relative or absolute to the app's own origin). The server
 * collects the numbers of a message to check them (`server/references.ts`); the panel's Markdown
 * turns only the checked ones into links (`components/Markdown.tsx`) and leaves the rest as text.
 * Pure and isomorphic.
 */
import { LIMITS } from './constants';

/**
 * "#12" (not inside a word, an HTML entity "&#12;" or a colour "#123abc") and "issue 12" /
 * "issue #12", any case. Group 1 is the number of the first form, group 2 of the second.
 */
const REFERENCE = /(?<![\w&#/])#(\d{1,7})(?![\w-])|\bissue\s+#?(\d{1,7})(?![\w-])/gi;

/** A reference found in a piece of text: where it is, what it says and the number it names. */
export interface ReferenceMatch {
  index: number;
  text: string;
  number: number;
}

/** The issue references in `text`, in order. */
export function referencesIn(text: string): ReferenceMatch[] {
  const out: ReferenceMatch[] = [];
  for (const m of text.matchAll(REFERENCE)) {
    const number = Number(m[1] ?? m[2]);
    if (Number.isSafeInteger(number) && number > 0) out.push({ index: m.index, text: m[0], number });
  }
  return out;
}

const ISSUE_PATH = /^\/projects\/([^/?#\s]+)\/issues\/(\d{1,7})\/?(?:[?#].*)?$/;

/**
 * What a link points to: an issue page of this project (`{ number }`), of another project
 * (`'foreign'`), or something else (null). `origins` are the app's own origins (an absolute link
 * elsewhere is not a product page).
 */
export function issueOfHref(
  href: string,
  projectId: string,
  origins: readonly string[],
): { number: number } | 'foreign' | null {
  let path = href.trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('//')) {
    let url: URL;
    try {
      url = new URL(path.startsWith('//') ? `https:${path}` : path);
    } catch {
      return null;
    }
    if (!origins.includes(url.origin)) return null;
    path = `${url.pathname}${url.search}${url.hash}`;
  }
  const m = ISSUE_PATH.exec(path);
  if (!m) return null;
  let id: string;
  try {
    id = decodeURIComponent(m[1]!);
  } catch {
    return 'foreign';
  }
  return id === projectId ? { number: Number(m[2]) } : 'foreign';
}

/** Links in Markdown text: `](url)` and bare URLs or paths (enough to collect the issue pages). */
const LINK_TARGET = /\]\(\s*<?([^)\s>]+)|(?:https?:\/\/[^\s)<>\]]+|(?<![\w/])\/projects\/[^\s)<>\]]+)/g;

/**
 * The issue numbers an answer's Markdown names (references and links to this project's issue
 * pages), each once, at most `LIMITS.maxReferencesPerMessage`. What the server checks.
 */
export function issueNumbersIn(markdown: string, projectId: string, origins: readonly string[]): number[] {
  const found = new Set<number>();
  const add = (n: number) => {
    if (found.size < LIMITS.maxReferencesPerMessage) found.add(n);
  };
  for (const r of referencesIn(markdown)) add(r.number);
  for (const m of markdown.matchAll(LINK_TARGET)) {
    const target = issueOfHref(m[1] ?? m[0], projectId, origins);
    if (target && target !== 'foreign') add(target.number);
  }
  return [...found];
}

/** The page of issue `number` of a project. */
export function issueHref(projectId: string, number: number): string {
  return `/projects/${encodeURIComponent(projectId)}/issues/${number}`;
}
