import { describe, expect, it } from 'vitest';
import { capText, escapeControlChars, hasForbiddenControlChars, storable, toolText } from '@/features/mcp/text';

describe('toolText', () => {
  const T = toolText({ min: 1, max: 20 });

  it('refuses NUL and the other control characters, except tab and line breaks', () => {
    for (const bad of ['a\u0000b', '\u0007', 'x\u001b[31m', 'del\u007f', 'c1\u0085', 'ff\u000c']) {
      const r = T.safeParse(bad);
      expect(r.success, JSON.stringify(bad)).toBe(false);
      expect(r.error?.issues[0]?.message).toMatch(/control characters/);
    }
    for (const good of ['tab\there', 'two\nlines\r\n', 'émoji 🎉', 'plain'])
      expect(T.safeParse(good).success, good).toBe(true);
  });

  it('refuses broken Unicode (a lone surrogate) and still trims and limits', () => {
    expect(T.safeParse('a\ud800b').success).toBe(false);
    expect(T.safeParse('  x  ').data).toBe('x');
    expect(T.safeParse('   ').success).toBe(false);
    expect(T.safeParse('x'.repeat(21)).success).toBe(false);
    expect(toolText({ max: 5, trim: false }).safeParse('  x  ').data).toBe('  x  ');
  });
});

describe('storable', () => {
  it('escapes every control character and caps without splitting a surrogate pair', () => {
    expect(escapeControlChars('get_\u0000issue\n')).toBe('get_\\u0000issue\\u000a');
    expect(storable('a\u0000b', 100)).toBe('a\\u0000b');
    expect(storable('lone \ud800 half', 100)).toBe('lone \ufffd half');
    expect(capText('abc🎉def', 5)).toBe('abc…');
    expect(capText('abcd', 4)).toBe('abcd');
    expect(storable('x'.repeat(300), 100)).toHaveLength(100);
    expect(hasForbiddenControlChars(storable('\u0000\u001f\u007f\u009f', 100))).toBe(false);
  });
});
