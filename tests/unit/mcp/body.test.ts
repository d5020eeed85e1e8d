import { describe, expect, it } from 'vitest';
import { jsonTooDeep, readBodyCapped, scanToolCalls } from '@/features/mcp/body';

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
    expect(await readBodyCapped(streamed(['x'], { 'content-length': '101' }), 100)).toEqual({
      ok: false,
      reason: 'too_large',
      prefix: '',
    });
  });

  it('refuses a streamed body that grows over the cap', async () => {
    expect(await readBodyCapped(streamed(['x'.repeat(60), 'y'.repeat(60)]), 100)).toEqual({
      ok: false,
      reason: 'too_large',
      prefix: '',
    });
  });

  it('returns the first bytes of a refused body when asked, declared or streamed, and reads no further', async () => {
    const declared = await readBodyCapped(streamed(['abcdefghij', 'k'.repeat(200)], { 'content-length': '210' }), 100, {
      prefixBytes: 8,
    });
    expect(declared).toEqual({ ok: false, reason: 'too_large', prefix: 'abcdefgh' });

    let pulled = 0;
    const enc = new TextEncoder();
    const endless = new ReadableStream<Uint8Array>({
      pull(c) {
        pulled++;
        c.enqueue(enc.encode('z'.repeat(50)));
      },
    });
    // @ts-expect-error duplex is required by Node for stream bodies
    const res = await readBodyCapped(new Request('http://x/', { method: 'POST', body: endless, duplex: 'half' }), 100, {
      prefixBytes: 20,
    });
    expect(res).toEqual({ ok: false, reason: 'too_large', prefix: 'z'.repeat(20) });
    expect(pulled).toBeLessThanOrEqual(4);
  });
});

describe('scanToolCalls', () => {
  const META = 'in-app-agent/toolCallId';
  const scan = (text: string, maxCalls = 16) => scanToolCalls(text, { maxCalls, metaKey: META });
  const call = (id: number, name: unknown, extra: Record<string, unknown> = {}) => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: { number: id }, ...extra },
  });

  it('finds the tools/call requests of a single message or a batch, with name, arguments and tool-call id', () => {
    expect(scan(JSON.stringify(call(1, 'get_issue', { _meta: { [META]: 'tc-1', other: 'x' } })))).toEqual([
      { name: 'get_issue', argumentsText: '{"number":1}', metaValue: 'tc-1' },
    ]);
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 0, method: 'tools/list' },
      call(1, 'list_issues'),
      { jsonrpc: '2.0', method: 'tools/call', params: { name: 'a_notification' } },
      call(2, 42),
    ]);
    expect(scan(batch)).toEqual([
      { name: 'list_issues', argumentsText: '{"number":1}', metaValue: null },
      { name: null, argumentsText: '{"number":2}', metaValue: null },
    ]);
  });

  it('agrees with JSON.parse on escaped keys, escaped strings and duplicate keys', () => {
    const text = String.raw`{"jsonrpc":"2.0","id":"x","\u006dethod":"tools/call","params":{"name":"first","na\u006de":"get_\u0000issue"}}`;
    expect(JSON.parse(text).params.name).toBe('get_\u0000issue');
    expect(scan(text)).toEqual([{ name: 'get_\u0000issue', argumentsText: null, metaValue: null }]);
  });

  it('ignores a "name" that is not the direct child of params', () => {
    const text = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { arguments: { name: 'decoy', params: { name: 'decoy2' } }, name: 'real' },
    });
    expect(scan(text).map((c) => c.name)).toEqual(['real']);
  });

  it('works on bodies nested far too deep to parse, and on truncated bodies', () => {
    const deep = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_issue","arguments":{"x":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`;
    const [c] = scan(deep);
    expect(c!.name).toBe('get_issue');
    expect(c!.argumentsText!.startsWith('{"x":[[[')).toBe(true);
    expect(c!.argumentsText!.length).toBeLessThanOrEqual(1000);

    const whole = JSON.stringify(call(1, 'create_issue'));
    const cut = whole.slice(0, whole.indexOf('"arguments"') + 15);
    expect(scan(cut)).toEqual([{ name: 'create_issue', argumentsText: null, metaValue: null }]);
    expect(scan('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"crea')).toEqual([
      { name: null, argumentsText: null, metaValue: null },
    ]);
  });

  it('returns nothing for other methods, garbage and scalars, and at most maxCalls calls', () => {
    expect(scan(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }))).toEqual([]);
    for (const junk of ['', '42', 'null', ']]]]}}}', '{"a":', '"tools/call"', '[1,2,"x"]'])
      expect(scan(junk), junk).toEqual([]);
    const many = JSON.stringify(Array.from({ length: 40 }, (_, i) => call(i, `t${i}`)));
    expect(scan(many, 16)).toHaveLength(16);
  });
});
