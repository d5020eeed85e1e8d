import { describe, expect, it } from 'vitest';
import { jsonTooDeep, readBodyCapped } from '@/features/mcp/body';

describe('jsonTooDeep', () => {
  it('counts object and array nesting', () => {
    expect(jsonTooDeep('{"a":[1,{"b":2}]}', 3)).toBe(false);
    expect(jsonTooDeep('{"a":[1,{"b":[2]}]}', 3)).toBe(true);
    expect(jsonTooDeep('['.repeat(33) + ']'.repeat(33), 32)).toBe(true);
    expect(jsonTooDeep('['.repeat(32) + ']'.repeat(32), 32)).toBe(false);
  });

  it('ignores brackets inside strings, including escaped quotes', () => {
    expect(jsonTooDeep(JSON.stringify({ s: '[[[[[[[[[[{{{{{{' }), 2)).toBe(false);
    expect(jsonTooDeep(JSON.stringify({ s: 'a\\"[[[[[[[[[' }), 2)).toBe(false);
  });
});

function streamed(parts: string[], headers: Record<string, string> = {}): Request {
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of parts) c.enqueue(enc.encode(p));
      c.close();
    },
  });
  // @ts-expect-error duplex is required by Node for stream bodies
  return new Request('http://x/', { method: 'POST', body, headers, duplex: 'half' });
}

describe('readBodyCapped', () => {
  it('reads a body under the cap', async () => {
    expect(await readBodyCapped(streamed(['{"a":', '1}']), 100)).toEqual({ ok: true, text: '{"a":1}' });
  });

  it('refuses a declared Content-Length over the cap without reading', async () => {
    expect(await readBodyCapped(streamed(['x'], { 'content-length': '101' }), 100)).toEqual({ ok: false, reason: 'too_large' });
  });

  it('refuses a streamed body that grows over the cap', async () => {
    expect(await readBodyCapped(streamed(['x'.repeat(60), 'y'.repeat(60)]), 100)).toEqual({ ok: false, reason: 'too_large' });
  });
});
