import { describe, expect, it } from 'vitest';
import { classifyHref, internalPath, safeUrlTransform } from '@/features/in-app-agent/components/safe-url';

describe('classifyHref', () => {
  it('keeps http, https, mailto and relative links', () => {
    expect(classifyHref('https://example.com/a?b=1')).toEqual({ kind: 'external', href: 'https://example.com/a?b=1' });
    expect(classifyHref('http://example.com')).toEqual({ kind: 'external', href: 'http://example.com/' });
    expect(classifyHref('mailto:someone@example.com')).toEqual({ kind: 'mailto', href: 'mailto:someone@example.com' });
    expect(classifyHref('/projects/p1/issues/3')).toEqual({ kind: 'internal', href: '/projects/p1/issues/3' });
    expect(classifyHref('issues/3')).toEqual({ kind: 'internal', href: 'issues/3' });
    expect(classifyHref('#section')).toEqual({ kind: 'internal', href: '#section' });
    expect(classifyHref('?q=a:b')).toEqual({ kind: 'internal', href: '?q=a:b' });
  });

  it('treats protocol-relative URLs as external https', () => {
    expect(classifyHref('//example.com/x')).toEqual({ kind: 'external', href: 'https://example.com/x' });
  });

  it.each([
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'java\nscript:alert(1)',
    'java\u0000script:alert(1)',
    '\u200bjavascript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    'file:///etc/passwd',
    'blob:https://example.com/uuid',
    'intent://x#Intent;end',
    '/\\evil.example',
    'a:b/c',
    '',
    '   ',
  ])('refuses %j', (url) => {
    expect(classifyHref(url)).toBeNull();
    expect(safeUrlTransform(url)).toBeNull();
  });

  it('internalPath only accepts same-origin absolute paths', () => {
    expect(internalPath('/projects/p1/issues/2')).toBe('/projects/p1/issues/2');
    expect(internalPath('https://evil.example/')).toBeNull();
    expect(internalPath('//evil.example/')).toBeNull();
    expect(internalPath('javascript:alert(1)')).toBeNull();
    expect(internalPath('issues/2')).toBeNull();
    expect(internalPath(42)).toBeNull();
  });
});
