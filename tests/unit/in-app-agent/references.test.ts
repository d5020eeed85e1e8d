// Where an answer names issues, what the server collects to check, how the panel's Markdown links
// only the checked ones, and how the model's suggestions block leaves the streamed text.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Markdown } from '@/features/in-app-agent/components/Markdown';
import { ProductLinksProvider } from '@/features/in-app-agent/components/tool-ui/product-links';
import { issueNumbersIn, issueOfHref, referencesIn } from '@/features/in-app-agent/issue-references';
import { SuggestionsFilter } from '@/features/in-app-agent/server/suggestions';

describe('issue references in text', () => {
  it('finds "#12" and "issue 12", not colours, entities, anchors or parts of words', () => {
    const found = referencesIn('Fix #12 and Issue #7, issue 3; not C#9, &#35;, #fff, #12a, page#4, /#5 or issues 8.');
    expect(found.map((r) => [r.text, r.number])).toEqual([
      ['#12', 12],
      ['Issue #7', 7],
      ['issue 3', 3],
    ]);
  });

  it('reads links to issue pages of this project, relative or on the app’s origin', () => {
    const origins = ['https://tracker.example'];
    expect(issueOfHref('/projects/p1/issues/4', 'p1', origins)).toEqual({ number: 4 });
    expect(issueOfHref('https://tracker.example/projects/p1/issues/4#c', 'p1', origins)).toEqual({ number: 4 });
    expect(issueOfHref('/projects/p2/issues/4', 'p1', origins)).toBe('foreign');
    expect(issueOfHref('https://evil.example/projects/p1/issues/4', 'p1', origins)).toBeNull();
    expect(issueOfHref('/projects/p1/issues', 'p1', origins)).toBeNull();
    expect(issueOfHref('/projects/p1/issues/4/edit', 'p1', origins)).toBeNull();
  });

  it('collects each number once for the server to check, links included', () => {
    const md = 'See #2, #2 again, issue 5 and [this](/projects/p1/issues/9) but not [that](/projects/p2/issues/10).';
    expect(issueNumbersIn(md, 'p1', [])).toEqual([2, 5, 9]);
    expect(
      issueNumbersIn('#1 '.repeat(80) + Array.from({ length: 80 }, (_, i) => `#${i + 1}`).join(' '), 'p1', []),
    ).toHaveLength(50);
  });
});

function render(text: string, references?: Array<{ number: number; title: string; status: string }>) {
  return renderToStaticMarkup(
    createElement(ProductLinksProvider, { projectId: 'p1' }, createElement(Markdown, { text, references })),
  );
}

describe('Markdown with checked references', () => {
  const checked = [{ number: 12, title: 'Login fails', status: 'OPEN' }];

  it('turns only checked references into links to the issue', () => {
    const html = render('Look at #12 and #13, and `#12` in code.', checked);
    expect(html.match(/data-testid="issue-chip"/g)).toHaveLength(1);
    expect(html).toContain('href="/projects/p1/issues/12"');
    expect(html).toContain('Login fails');
    expect(html).not.toContain('/issues/13');
    expect(html).toContain('<code class="font-mono">#12</code>');
  });

  it('keeps a model-written link to an issue page only when that issue was checked', () => {
    const html = render(
      '[known](/projects/p1/issues/12) [unknown](/projects/p1/issues/99) [other](/projects/p2/issues/12) [docs](/help)',
      checked,
    );
    expect(html).toContain('href="/projects/p1/issues/12"');
    expect(html).not.toContain('/issues/99');
    expect(html).not.toContain('/projects/p2');
    expect(html.match(/data-unchecked-link="true"/g)).toHaveLength(2);
    expect(html).toContain('href="/help"');
  });

  it('links nothing before the check arrived (an empty list)', () => {
    const html = render('#12 and [it](/projects/p1/issues/12)', []);
    expect(html).not.toContain('href="/projects/p1/issues/12"');
  });
});

function stream(chunks: string[]) {
  const filter = new SuggestionsFilter();
  let shown = '';
  for (const c of chunks) shown += filter.push(c);
  const end = filter.end();
  return { text: shown + end.text, suggestions: end.suggestions };
}

describe('the suggestions block', () => {
  const answer =
    'Here are 2 issues:\n\n- #1 a\n- #2 b\n\n```suggestions\n- Summarize issue #1\n2. List closed issues\n"Summarize the project"\nA fourth one\n```\n';

  it('is taken out of the text and read, however the stream is cut', () => {
    for (let size = 1; size <= answer.length; size += 3) {
      const chunks = answer.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g'))!;
      expect(stream(chunks)).toEqual({
        text: 'Here are 2 issues:\n\n- #1 a\n- #2 b\n\n',
        suggestions: ['Summarize issue #1', 'List closed issues', 'Summarize the project'],
      });
    }
  });

  it('leaves other code blocks, inline fences and unfinished lines alone', () => {
    expect(stream(['```ts\nconst a = 1;\n```\nDone'])).toEqual({
      text: '```ts\nconst a = 1;\n```\nDone',
      suggestions: [],
    });
    expect(stream(['Use ```suggestions\n', 'inline'])).toEqual({ text: 'Use ```suggestions\ninline', suggestions: [] });
    expect(stream(['Half a fence: ``', '`'])).toEqual({ text: 'Half a fence: ```', suggestions: [] });
    expect(stream(['End\n```sugg'])).toEqual({ text: 'End\n```sugg', suggestions: [] });
  });

  it('drops empty or overlong lines and keeps text after the block', () => {
    const long = 'x'.repeat(201);
    expect(stream([`A\n\`\`\`suggestions\n\n${long}\nOne\nOne\n\`\`\`\nP.S. more`])).toEqual({
      text: 'A\n\n\nP.S. more',
      suggestions: ['One'],
    });
  });
});
