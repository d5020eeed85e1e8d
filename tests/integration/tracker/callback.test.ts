// The login page's return address can never send a user to another site.
import { describe, expect, it } from 'vitest';
import { safeCallbackPath } from '@/features/tracker/callback';

describe('safeCallbackPath', () => {
  it.each([
    ['/projects/p_1/issues?status=OPEN', '/projects/p_1/issues?status=OPEN'],
    ['/projects', '/projects'],
    [undefined, '/projects'],
    ['', '/projects'],
    ['//evil.example/x', '/projects'],
    ['/\\evil.example', '/projects'],
    ['https://evil.example/projects', '/projects'],
    ['javascript:alert(1)', '/projects'],
    ['projects', '/projects'],
    ['/login?callbackUrl=/x', '/projects'],
    ['/api/auth/signout', '/projects'],
    ['/projects\n/x', '/projects'],
    [`/${'a'.repeat(3000)}`, '/projects'],
    [`/oauth/consent?request=${'a'.repeat(2500)}`, `/oauth/consent?request=${'a'.repeat(2500)}`],
  ])('%j → %j', (raw, expected) => {
    expect(safeCallbackPath(raw)).toBe(expected);
  });

  it('keeps the path of an absolute URL on this host only', () => {
    expect(safeCallbackPath('http://app.example:3000/projects/p_1/members', ['app.example:3000'])).toBe(
      '/projects/p_1/members',
    );
    expect(safeCallbackPath('http://other.example/projects/p_1', ['app.example:3000'])).toBe('/projects');
    expect(safeCallbackPath('http://app.example:3000//evil.example', ['app.example:3000'])).toBe('/projects');
  });

  it('takes the first of repeated parameters', () => {
    expect(safeCallbackPath(['/projects/a', '/projects/b'])).toBe('/projects/a');
  });
});
