import { describe, expect, it } from 'vitest';
import { LIMITS } from '@/features/in-app-agent/constants';
import {
  buildPageContext,
  issueNumberFromPath,
  pageKind,
  suggestionsFor,
} from '@/features/in-app-agent/components/page-context';
import { PageContextSchema } from '@/features/in-app-agent/schema';

describe('page context', () => {
  it('finds the issue number only on issue pages', () => {
    expect(issueNumberFromPath('/projects/p_1/issues/12')).toBe(12);
    expect(issueNumberFromPath('/projects/p_1/issues/12/edit')).toBe(12);
    expect(issueNumberFromPath('/projects/p_1/issues')).toBeUndefined();
    expect(issueNumberFromPath('/projects/p_1/issues/new')).toBeUndefined();
    expect(issueNumberFromPath(null)).toBeUndefined();
  });

  it('builds a context the request schema accepts, capped to its limits', () => {
    const ctx = buildPageContext({
      pathname: '/projects/p_1/issues/3',
      title: ' Issue 3 · Tracker ',
      selection: 'x'.repeat(LIMITS.maxSelectionChars + 50),
    });
    expect(ctx.route).toBe('/projects/p_1/issues/3');
    expect(ctx.title).toBe('Issue 3 · Tracker');
    expect(ctx.issueNumber).toBe(3);
    expect(ctx.selection?.length).toBe(LIMITS.maxSelectionChars);
    expect(PageContextSchema.safeParse(ctx).success).toBe(true);
    expect(buildPageContext({ pathname: '/projects/p_1', selection: '   ' })).toEqual({ route: '/projects/p_1' });
  });

  it('suggests things that fit the page', () => {
    expect(pageKind('/projects/p/issues')).toBe('issues');
    expect(suggestionsFor('/projects/p/issues').map((s) => s.prompt)).toContain('List open issues');
    expect(suggestionsFor('/projects/p/issues').map((s) => s.prompt)).toContain('Summarize the project');
    const issue = suggestionsFor('/projects/p/issues/7');
    expect(issue[0]).toEqual({ label: 'Summarize this issue', prompt: 'Summarize issue 7', complete: true });
    for (const path of ['/projects/p', '/projects/p/issues', '/projects/p/issues/7', '/projects/p/settings']) {
      const list = suggestionsFor(path);
      expect(list.length).toBeGreaterThanOrEqual(3);
      expect(list.length).toBeLessThanOrEqual(4);
    }
  });
});
