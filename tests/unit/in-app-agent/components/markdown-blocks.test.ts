// An answer's Markdown rendered block by block (only the last, growing block parsed again while it
// streams) is exactly the render of the whole text: for every prefix of tricky answers, as they
// arrive, with and without checked references.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import { Markdown } from '@/features/in-app-agent/components/Markdown';
import { markdownBlocks } from '@/features/in-app-agent/components/markdown-blocks';
import { ProductLinksProvider } from '@/features/in-app-agent/components/tool-ui/product-links';
import type { IssueReference } from '@/features/in-app-agent/schema';

// The reference render: the same component with the text as one block (the whole-text render).
const split = vi.hoisted(() => ({ whole: false }));
vi.mock('@/features/in-app-agent/components/markdown-blocks', async (importOriginal) => {
  const actual = await importOriginal<typeof import('@/features/in-app-agent/components/markdown-blocks')>();
  return { markdownBlocks: (text: string) => (split.whole ? [text] : actual.markdownBlocks(text)) };
});

function render(text: string, references?: readonly IssueReference[], whole = false): string {
  split.whole = whole;
  try {
    return renderToStaticMarkup(
      createElement(ProductLinksProvider, { projectId: 'p1' }, createElement(Markdown, { text, references })),
    );
  } finally {
    split.whole = false;
  }
}

const REFERENCES: IssueReference[] = [
  { number: 12, title: 'Login fails', status: 'OPEN' },
  { number: 13, title: 'Slow list', status: 'DONE' },
] as IssueReference[];

/** Each prefix the panel may show while the text streams (every character for short texts). */
function prefixes(text: string, step = 1): string[] {
  const out: string[] = [];
  for (let n = 1; n < text.length; n += step) out.push(text.slice(0, n));
  out.push(text);
  return out;
}

function expectSameRender(text: string, references?: readonly IssueReference[]): void {
  for (const prefix of prefixes(text, text.length > 600 ? 7 : 1)) {
    const blockWise = render(prefix, references);
    const whole = render(prefix, references, true);
    if (blockWise !== whole) expect({ prefix, html: blockWise }).toEqual({ prefix, html: whole });
  }
}

const LONG = Array.from(
  { length: 4 },
  (_, i) =>
    `## Step ${i}\n\nThis step keeps the work **visible**, owned and small; see #12.\n\n- read the issue\n- write the check first\n\n` +
    '```ts\n' +
    `export function step${i}(issues: Array<{ id: number }>): number[] {\n\n  return issues.map((issue) => issue.id);\n}\n` +
    '```\n\n',
).join('');

const TRICKY: Record<string, string> = {
  'a long answer with headings, lists and code': LONG,
  'lists spanning blank lines':
    '- a\n\n- b\n\nText\n\n1. one\n\n2. two\n\n   continued\n\nafter\n\n* star\n\n+ plus\n\n- tight\n- list\n\nend\n\n10) ten\n\n11) eleven',
  'a list item holding paragraphs and code':
    '1. Install:\n\n   ```bash\n   npm i\n\n   npm t\n   ```\n\n2. Run it\n\n   more text\n\nDone.',
  'code fences with blank lines':
    '```ts\nconst a = 1;\n\n\nconst b = 2;\n```\n\nafter\n\n~~~\nx\n\n~~~~\n\ny\n~~~\n\nz\n\n````md\n```\n\ninner\n```\n````\n\nlast',
  'a fence closed by a longer one and an unclosed fence':
    '```\na\n\n````\n\nnext\n\n```js\nlet open = true;\n\nstill code',
  'inline code that looks like a fence': '``` `x` ```\n\nafter\n\n```\ncode\n```',
  'a fence in a list item that a paragraph ends': '- a\n\n  ```\n  x\n\nb\n  ```\n\nc\n\n```\nd\n```\n\ne',
  'a list item fence closed at the first column': '- a\n  ```\n  x\n```\n\nnot code?\n\nf',
  tables: '| a | b |\n|---|:-:|\n| 1 | **2** |\n| #12 | `c` |\n\n| c |\n|---|\n\nafter\n\nx | y\n--|--\n1 | 2',
  'checked references and mentions':
    'See #12 and issue 13.\n\nAlso [it](/projects/p1/issues/12), [other](/projects/p2/issues/1) and #99.\n\n`#12` in code\n\n> quoting issue 12',
  'link reference definitions': 'Use [a] here.\n\n[a]: https://example.com\n\n[b]\n\n[b]: /projects/p1/issues/13 "B"',
  footnotes: 'Text with a note[^1] and another[^n].\n\n[^1]: The note.\n\n[^n]: Second.\n\n    indented part',
  'HTML blocks over blank lines':
    'before\n\n<!--\n\nhidden?\n\n-->\n\nafter\n\n<pre>\n\nx\n\n</pre>\n\n<div>\n```\n</div>\n\ny',
  'block quotes': '> a\n\n> b\n>\n> - c\n\n>d\n\ne\n> lazy',
  'setext headings and thematic breaks': 'Title\n===\n\n---\n\n___\n\ntext\n---\n\n***\n\nend',
  'indented code and tabs': '    code\n\n    more\n\nafter\n\n\tx\n\ny',
  'blank lines first and last': '\n\n \nfoo\n\n\n\nbar\n\n  \n',
  'emphasis and code spans over blank lines': '*a\n\nb*\n\n`a\n\nb`\n\n**c**',
  'hard breaks and escapes': 'line  \nnext\\\n\\# not a heading\n\n\\- not a list\n\n#not heading either',
};

describe('Markdown block by block', () => {
  for (const [name, text] of Object.entries(TRICKY)) {
    it(`renders ${name} as the whole text does, at every step of the stream`, () => {
      expectSameRender(text);
      expectSameRender(text, REFERENCES);
    });
  }

  it('cuts a long answer into blocks, keeping list items and fences whole', () => {
    const blocks = markdownBlocks(LONG);
    expect(blocks.join('')).toBe(LONG);
    // Per step: the heading, the paragraph with its list, the code block.
    expect(blocks).toHaveLength(12);
    expect(blocks[1]).toBe(
      'This step keeps the work **visible**, owned and small; see #12.\n\n- read the issue\n- write the check first\n\n',
    );
    expect(blocks[2]).toMatch(/^```ts\n[\s\S]*\n```\n\n$/);
    expect(markdownBlocks('- a\n\n- b\n\n1. c\n\n2. d')).toHaveLength(1);
  });

  it('keeps the earlier blocks of a growing answer the same while it streams', () => {
    let shown: string[] = [];
    for (const prefix of prefixes(LONG)) {
      const blocks = markdownBlocks(prefix);
      expect(blocks.slice(0, shown.length - 1)).toEqual(shown.slice(0, -1));
      shown = blocks;
    }
  });

  it('leaves a text whole when Markdown resolves something across its blocks', () => {
    expect(markdownBlocks('Use [a].\n\n[a]: https://example.com')).toHaveLength(1);
    expect(markdownBlocks('A note[^1].\n\n[^1]: here')).toHaveLength(1);
    expect(markdownBlocks('<!--\n\nx\n\n-->')).toHaveLength(1);
    // Index signatures in code are not definitions.
    expect(markdownBlocks('[x](/a) text\n\n```ts\ntype M = { [key: string]: number };\n```\n\nend')).toHaveLength(3);
  });
});
