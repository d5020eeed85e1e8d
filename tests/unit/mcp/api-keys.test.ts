// Credential parsing and the shape gate in front of the database: anything that is not exactly a
// minted key is refused as INVALID_KEY without a query (a NUL byte used to reach PostgreSQL, which
// raised 22021 and surfaced as a 500).
import { describe, expect, it } from 'vitest';
import type { PrismaClient } from '@/generated/prisma/client';
import { parseAuthorization, PUBLIC_KEY_PATTERN, SECRET_PATTERN, verifyKey } from '@/server/api-keys';

const ID = 'AbCdEfGh_-123456';
const PK = `pk_${ID}`;
const SK = `sk_${ID}_${'s'.repeat(30)}-_`;
const basic = (s: string) => `Basic ${Buffer.from(s, 'utf8').toString('base64')}`;

/** A database client that fails the test if it is used at all. */
const noDatabase = new Proxy(
  {},
  {
    get(_t, prop) {
      throw new Error(`the database was touched (${String(prop)})`);
    },
  },
) as PrismaClient;

describe('parseAuthorization', () => {
  it('accepts Bearer <secret> and Basic base64(public:secret) of the minted shapes', () => {
    expect(PUBLIC_KEY_PATTERN.test(PK)).toBe(true);
    expect(SECRET_PATTERN.test(SK)).toBe(true);
    expect(parseAuthorization(`Bearer ${SK}`)).toEqual({ publicKey: PK, secret: SK });
    expect(parseAuthorization(`bearer   ${SK}  `)).toEqual({ publicKey: PK, secret: SK });
    expect(parseAuthorization(basic(`${PK}:${SK}`))).toEqual({ publicKey: PK, secret: SK });
  });

  it('refuses NUL bytes, garbage, overlong values and mismatched pairs', () => {
    const bad = [
      null,
      '',
      'Bearer',
      'Token abc',
      `Bearer ${SK} extra`,
      `Bearer ${SK}\u0000`,
      `Bearer sk_${ID}_short`,
      `Bearer sk_${ID}_${'s'.repeat(33)}`,
      `Bearer ${'sk_'.repeat(200)}`,
      `Bearer sk_${ID}_${'s'.repeat(31)}\u00e9`,
      basic(`pk_\u0000abc:sk_x`),
      basic(`${PK}\u0000:${SK}`),
      basic(`${PK}:${SK}\u0000`),
      basic(`${PK}:`),
      basic(`:${SK}`),
      basic(`pk_${'B'.repeat(16)}:${SK}`), // the secret belongs to another key
      basic(`${'x'.repeat(300)}:${SK}`),
      'Basic !!!notbase64!!!',
      `Basic ${'A'.repeat(10_000)}`,
    ];
    for (const header of bad) expect(parseAuthorization(header), JSON.stringify(header)).toBeNull();
  });
});

describe('verifyKey', () => {
  it('refuses credentials of the wrong shape as INVALID_KEY without a database query', async () => {
    for (const creds of [
      { publicKey: 'pk_\u0000abc', secret: 'sk_x' },
      { publicKey: PK, secret: `${SK}\u0000` },
      { publicKey: `pk_${'B'.repeat(16)}`, secret: SK },
      { publicKey: 'x'.repeat(5000), secret: 'y'.repeat(5000) },
    ]) {
      await expect(verifyKey(noDatabase, creds)).resolves.toEqual({
        ok: false,
        code: 'INVALID_KEY',
        message: 'Invalid API key.',
      });
    }
  });
});
