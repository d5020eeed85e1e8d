/**
 * Reading the project's Markdown pages (README.md, docs/*.md) as the documentation tests need it:
 * fenced blocks with their info string, headings and their GitHub anchors, links and inline code,
 * each with its line number. Not a full CommonMark parser: it reads the constructs these pages use.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The pages the documentation tests read, relative to the repository root, README first. */
export function docPages(): string[] {
  const docs = readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

interface Fence {
  /** The info string after the opening fence, e.g. `bash runnable`. */
  info: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The lines between the fences. */
  lines: string[];
}

export interface Page {
  file: string;
  text: string;
  fences: Fence[];
  /** The text with every fenced block's lines emptied (line numbers kept). */
  prose: string;
  /** GitHub's anchors of the page's headings (outside fenced blocks). */
  anchors: Set<string>;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})(.*)$/;

export function readPage(file: string): Page {
  const text = readFileSync(path.join(ROOT, file), 'utf8');
  const lines = text.split('\n');
  const fences: Fence[] = [];
  const proseLines: string[] = [];
  let open: { marker: string; fence: Fence } | undefined;
  lines.forEach((line, i) => {
    const m = FENCE.exec(line);
    if (open) {
      if (m && m[1]!.startsWith(open.marker) && m[1]![0] === open.marker[0] && m[2]!.trim() === '') open = undefined;
      else open.fence.lines.push(line);
      proseLines.push('');
      return;
    }
    if (m) {
      const fence: Fence = { info: m[2]!.trim(), line: i + 1, lines: [] };
      fences.push(fence);
      open = { marker: m[1]!, fence };
      proseLines.push('');
      return;
    }
    proseLines.push(line);
  });
  const prose = proseLines.join('\n');
  return { file, text, fences, prose, anchors: headingAnchors(prose) };
}

/** GitHub's anchor for a heading: lower case, punctuation dropped (not `-` or `_`), spaces to `-`. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

function headingAnchors(prose: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of prose.split('\n')) {
    const m = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** 1-based line of a character offset. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

export interface Found {
  value: string;
  line: number;
}

/** Inline code spans of the prose (outside fenced blocks), with their lines. */
export function inlineCode(page: Page): Found[] {
  const found: Found[] = [];
  for (const m of page.prose.matchAll(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g)) {
    found.push({ value: m[2]!.replace(/\n/g, ' ').trim(), line: lineAt(page.prose, m.index) });
  }
  return found;
}

/** Link and image targets of the prose (inline code blanked first, so code is never a link). */
export function links(page: Page): Found[] {
  const blanked = page.prose.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (s) => s.replace(/[^\n]/g, 'x'));
  const found: Found[] = [];
  for (const m of blanked.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    found.push({ value: m[1]!, line: lineAt(blanked, m.index) });
  }
  return found;
}
