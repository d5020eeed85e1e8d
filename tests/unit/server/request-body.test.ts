// Reading an upload's bytes: what was sent arrives whole, or is refused (too large, or cut short on
// its way: fewer bytes than the request declared), never stored in part.
import { describe, expect, it } from 'vitest';
import { readBytesCapped } from '@/server/request-body';

const post = (body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  new Request('http://app.test/upload', {
    method: 'POST',
    body,
    headers,
    ...(typeof body === 'string' ? {} : { duplex: 'half' }),
  } as RequestInit);

/** A body of `n` bytes in chunks of 1,000, with no Content-Length. */
const streamOf = (n: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let sent = 0; sent < n; sent += 1000) controller.enqueue(new Uint8Array(Math.min(1000, n - sent)));
      controller.close();
    },
  });

describe('readBytesCapped', () => {
  it('reads a body whole, with or without a declared length', async () => {
    const declared = await readBytesCapped(post('hello', { 'content-length': '5' }), 10);
    expect(declared.ok && new TextDecoder().decode(declared.bytes)).toBe('hello');
    const streamed = await readBytesCapped(post(streamOf(2500)), 3000);
    expect(streamed.ok && streamed.bytes.byteLength).toBe(2500);
  });

  it('refuses more than the cap, declared or counted while reading', async () => {
    expect(await readBytesCapped(post('0123456789', { 'content-length': '10' }), 9)).toEqual({
      ok: false,
      reason: 'too_large',
    });
    expect(await readBytesCapped(post(streamOf(5000)), 3000)).toEqual({ ok: false, reason: 'too_large' });
  });

  it('refuses a body shorter than its declared length instead of keeping what arrived', async () => {
    expect(await readBytesCapped(post('only part', { 'content-length': '4000' }), 10_000)).toEqual({
      ok: false,
      reason: 'unreadable',
    });
  });
});
