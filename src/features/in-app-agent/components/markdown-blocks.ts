/**
 * An answer's Markdown cut into top-level blocks that render apart exactly as they render together,
 * so a streaming answer parses only its last, growing block on each frame (`Markdown.tsx` renders
 * each block once and joins them as the whole text's render joins its top-level elements).
 *
 * A cut is made only before a line that starts at its first column right after a blank line, outside
 * a fenced code block: after a blank line such a line can only begin a new top-level block (a list
 * item's or a block quote's continuation would be indented, a paragraph's lazy continuation cannot
 * follow a blank line). Never before a line that may start a list item (`-`, `+`, `*`, a digit: two
 * list items with a blank line between them are one loose list).
 *
 * The text is not cut at all when it holds what Markdown resolves across blocks, or what this scan
 * cannot place for certain: link reference and footnote definitions (`[label]: …`, `[^1]: …`), HTML
 * blocks (some run over blank lines), and a fence opened with an indent (it may sit in a list item)
 * that meets a line indented less than itself or a closing fence indented more than three spaces.
 * Each cut depends only on the text before it and the first character after it, so the earlier
 * blocks of a streaming answer stay the same strings while it grows. Pure.
 */

/** A code fence line: up to three spaces, three or more backticks or tildes, the rest. */
const FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
/** A fence-like line at any indent (a closing fence of a fence inside a list item may be indented more). */
const ANY_FENCE = /^([ \t]*)(`{3,}|~{3,})[ \t]*$/;
/** The start of an HTML block, at the start of a line in any container. */
const HTML_START = /^[ \t>*+\-\d.)]*<[A-Za-z/!?]/;
/** A line that may begin a link reference or footnote definition, in any container. */
const DEFINITION_START = /^[ \t>*+\-\d.)]*\[/;

/** Whether a cut may be made before a line beginning with this character (after a blank line). */
function startsNewBlock(first: string): boolean {
  return !(
    first === ' ' ||
    first === '\t' ||
    first === '-' ||
    first === '+' ||
    first === '*' ||
    (first >= '0' && first <= '9')
  );
}

function isBlank(line: string): boolean {
  return /^[ \t]*$/.test(line);
}

function indentOf(line: string): number {
  return /^ */.exec(line)![0].length;
}

/** The text's top-level blocks, in order; joined they are the text. One block when nothing may be cut. */
export function markdownBlocks(text: string): string[] {
  const cuts: number[] = [];
  let fence: { char: string; length: number; indent: number } | null = null;
  let afterBlank = false;
  let content = false;
  let definitionStart = false;
  let definitionEnd = false;
  let at = 0;
  while (at < text.length) {
    const newline = text.indexOf('\n', at);
    const end = newline === -1 ? text.length : newline;
    const line = text.slice(at, end);
    at = end + 1;
    // Inside a fence opened at the first column the lines are code for certain; inside an indented
    // one they might not be, so they are read as prose too.
    const certainCode = fence !== null && fence.indent === 0;
    if (!certainCode) {
      if (HTML_START.test(line)) return [text];
      if (DEFINITION_START.test(line)) definitionStart = true;
      if (line.includes(']:')) definitionEnd = true;
      if (definitionStart && definitionEnd) return [text];
    }
    if (fence) {
      afterBlank = false;
      if (isBlank(line)) continue;
      if (fence.indent > 0 && (line[0] === '\t' || indentOf(line) < fence.indent)) return [text];
      const close = FENCE.exec(line);
      if (close && close[2]![0] === fence.char && close[2]!.length >= fence.length && isBlank(close[3]!)) {
        fence = null;
        continue;
      }
      const deeper = ANY_FENCE.exec(line);
      if (fence.indent > 0 && deeper && deeper[2]![0] === fence.char && deeper[2]!.length >= fence.length)
        return [text];
      continue;
    }
    if (isBlank(line)) {
      afterBlank = true;
      continue;
    }
    if (afterBlank && content && startsNewBlock(line[0]!)) cuts.push(at - line.length - 1);
    afterBlank = false;
    content = true;
    const open = FENCE.exec(line);
    // A backtick fence's info string has no backtick (else the line is inline code).
    if (open && !(open[2]![0] === '`' && open[3]!.includes('`')))
      fence = { char: open[2]![0]!, length: open[2]!.length, indent: open[1]!.length };
  }
  if (!cuts.length) return [text];
  const blocks: string[] = [];
  let from = 0;
  for (const cut of cuts) {
    blocks.push(text.slice(from, cut));
    from = cut;
  }
  blocks.push(text.slice(from));
  return blocks;
}
