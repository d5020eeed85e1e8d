import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  fingerprintArgs,
  MAX_OVERRIDE_TTL_SECONDS,
  mintOverride,
  verifyOverride,
} from '@/features/mcp/override';

const SECRET = 'test-secret-0123456789-0123456789-abcdef';

describe('canonicalJson', () => {
  it('sorts keys recursively and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x y' } })).toBe(
      '{"a":{"c":"x y","d":[3,{"y":2,"z":1}]},"b":1}',
    );
  });

  it('drops undefined members like JSON.stringify and keeps nulls', () => {
    expect(canonicalJson({ a: undefined, b: null })).toBe('{"b":null}');
    expect(canonicalJson([undefined, 1])).toBe('[null,1]');
  });

  it('keeps a key named __proto__ as an ordinary key, so it cannot collide with its absence', () => {
    const withProto = JSON.parse('{"number":1,"__proto__":{"x":1}}') as Record<string, unknown>;
    expect(canonicalJson(withProto)).toBe('{"__proto__":{"x":1},"number":1}');
    expect(fingerprintArgs(withProto)).not.toBe(fingerprintArgs({ number: 1 }));
    expect(canonicalJson(JSON.parse('{"":{"__proto__":null}}'))).toBe('{"":{"__proto__":null}}');
  });

  it('is independent of key order (property)', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 3 })), (obj) => {
        const reversed = Object.fromEntries(Object.entries(obj).reverse());
        expect(canonicalJson(reversed)).toBe(canonicalJson(obj));
        expect(JSON.parse(canonicalJson(obj))).toEqual(JSON.parse(JSON.stringify(obj)));
      }),
    );
  });
});

describe('fingerprintArgs', () => {
  it('is the SHA-256 of the canonical JSON, equal for reordered keys, different for other values', () => {
    const a = fingerprintArgs({ number: 3, title: 'x' });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(fingerprintArgs({ title: 'x', number: 3 })).toBe(a);
    expect(fingerprintArgs({ title: 'x', number: 4 })).not.toBe(a);
    expect(fingerprintArgs(undefined)).toBe(fingerprintArgs({}));
  });
});

describe('mintOverride / verifyOverride', () => {
  const fp = fingerprintArgs({ number: 1 });
  const base = { tool: 'close_issue', argsFingerprint: fp, keyId: 'k_1', secret: SECRET };

  it('accepts a fresh token for exactly that tool, args and key', () => {
    const token = mintOverride(base);
    const res = verifyOverride(token, base);
    expect(res.ok).toBe(true);
    if (res.ok) {
      expect(res.payload.tool).toBe('close_issue');
      expect(res.payload.kid).toBe('k_1');
      expect(res.payload.nonce.length).toBeGreaterThanOrEqual(16);
    }
  });

  it('gives every token its own nonce', () => {
    const a = verifyOverride(mintOverride(base), base);
    const b = verifyOverride(mintOverride(base), base);
    expect(a.ok && b.ok && a.payload.nonce !== b.payload.nonce).toBe(true);
  });

  it('refuses a token signed with another secret', () => {
    const token = mintOverride({ ...base, secret: 'another-secret-0123456789-0123456789-xyz' });
    expect(verifyOverride(token, base)).toMatchObject({ ok: false, code: 'OVERRIDE_INVALID' });
  });

  it('refuses a payload changed after signing (forged)', () => {
    const [payload, sig] = mintOverride(base).split('.') as [string, string];
    const body = JSON.parse(Buffer.from(payload, 'base64url').toString());
    const forged = Buffer.from(JSON.stringify({ ...body, tool: 'delete_issue' })).toString('base64url');
    expect(verifyOverride(`${forged}.${sig}`, { ...base, tool: 'delete_issue' })).toMatchObject({
      ok: false,
      code: 'OVERRIDE_INVALID',
    });
  });

  it('refuses garbage of every shape without throwing', () => {
    for (const t of [undefined, null, 42, '', 'abc', 'a.b.c', '!!.??', 'x'.repeat(5000), {}]) {
      expect(verifyOverride(t, base)).toMatchObject({ ok: false, code: 'OVERRIDE_INVALID' });
    }
  });

  it('refuses a correctly signed token whose payload is not the expected shape', () => {
    const payload = Buffer.from(JSON.stringify({ v: 1, tool: 'close_issue' })).toString('base64url');
    const sig = createHmac('sha256', SECRET).update(payload).digest('base64url');
    expect(verifyOverride(`${payload}.${sig}`, base)).toMatchObject({ ok: false, code: 'OVERRIDE_INVALID' });
  });

  it('refuses an expired token', () => {
    const token = mintOverride({ ...base, ttlSeconds: 60, now: Date.now() - 61_000 });
    expect(verifyOverride(token, base)).toMatchObject({ ok: false, code: 'OVERRIDE_EXPIRED' });
  });

  it('refuses another tool, other arguments and another key', () => {
    const token = mintOverride(base);
    expect(verifyOverride(token, { ...base, tool: 'delete_issue' })).toMatchObject({
      ok: false,
      code: 'OVERRIDE_WRONG_TOOL',
    });
    expect(verifyOverride(token, { ...base, argsFingerprint: fingerprintArgs({ number: 2 }) })).toMatchObject({
      ok: false,
      code: 'OVERRIDE_WRONG_ARGS',
    });
    expect(verifyOverride(token, { ...base, keyId: 'k_2' })).toMatchObject({ ok: false, code: 'OVERRIDE_WRONG_KEY' });
  });
});

describe('override lifetime bound', () => {
  const bound = { tool: 'close_issue', argsFingerprint: fingerprintArgs({ number: 1 }), keyId: 'k_1', secret: SECRET };

  it('mints tokens for at most MAX_OVERRIDE_TTL_SECONDS', () => {
    expect(() => mintOverride({ ...bound, ttlSeconds: MAX_OVERRIDE_TTL_SECONDS + 1 })).toThrow(RangeError);
    expect(() => mintOverride({ ...bound, ttlSeconds: 0 })).toThrow(RangeError);
    expect(verifyOverride(mintOverride({ ...bound, ttlSeconds: MAX_OVERRIDE_TTL_SECONDS }), bound)).toMatchObject({
      ok: true,
    });
  });

  it('refuses a correctly signed token that is valid for longer than any token is minted for', () => {
    const payload = Buffer.from(
      JSON.stringify({
        v: 1,
        tool: bound.tool,
        fp: bound.argsFingerprint,
        kid: bound.keyId,
        nonce: 'n'.repeat(24),
        exp: Math.floor(Date.now() / 1000) + MAX_OVERRIDE_TTL_SECONDS + 60,
      }),
    ).toString('base64url');
    const sig = createHmac('sha256', SECRET).update(payload).digest('base64url');
    expect(verifyOverride(`${payload}.${sig}`, bound)).toMatchObject({ ok: false, code: 'OVERRIDE_INVALID' });
  });
});
