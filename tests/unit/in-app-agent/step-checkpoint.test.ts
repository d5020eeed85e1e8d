// What a step's checkpoint stores of the provider's usage: AI SDK 6 providers report
// `{inputTokens: {total, …}, outputTokens: {total, …}}`, older ones plain numbers; anything else is
// no count (never an object summed into a token column).
import { describe, expect, it } from 'vitest';
import { tokenCount } from '@/features/in-app-agent/server/step-checkpoint';

describe('step checkpoint usage', () => {
  it('reads a count from a number or from an object with its total', () => {
    expect(tokenCount(12)).toBe(12);
    expect(tokenCount({ total: 30, noCache: 30, cacheRead: 0 })).toBe(30);
    expect(tokenCount({ total: undefined })).toBeUndefined();
    expect(tokenCount(undefined)).toBeUndefined();
    expect(tokenCount('12')).toBeUndefined();
    expect(tokenCount(Number.NaN)).toBeUndefined();
  });
});
