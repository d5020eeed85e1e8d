// The masking of stored text: each pattern finds its kind of secret (and, when asked, e-mail
// addresses and phone numbers), keeps the text's length and its recognisable prefix, leaves text
// that only looks similar alone, and keeps JSON text valid JSON.
import { describe, expect, it } from 'vitest';
import { CONTACT_PATTERNS, MASK, maskDeep, maskText, SECRET_PATTERNS } from '@/features/in-app-agent/server/redaction';

/** Test secrets assembled at run time, so the source holds no string a secret scanner would flag. */
const rep = (c: string, n: number) => c.repeat(n);
const SAMPLES: Record<string, { text: string; secret: string; kept: string }> = {
  'aws-access-key-id': { text: `key id ${'AKIA'}${rep('Z', 16)} here`, secret: `AKIA${rep('Z', 16)}`, kept: 'AKIA' },
  'aws-secret-access-key': {
    text: `aws_secret_access_key = ${rep('a', 20)}/${rep('B', 19)}`,
    secret: `${rep('a', 20)}/${rep('B', 19)}`,
    kept: '',
  },
  'github-token': { text: `token ghp_${rep('x', 36)}.`, secret: `ghp_${rep('x', 36)}`, kept: 'ghp_' },
  'github-fine-grained-token': {
    text: `github_pat_${rep('A1', 20)}_${rep('b', 30)}`,
    secret: `github_pat_${rep('A1', 20)}_${rep('b', 30)}`,
    kept: 'github_pat_',
  },
  'slack-token': {
    text: `xoxb-${rep('1', 11)}-${rep('2', 12)}-${rep('c', 24)}`,
    secret: `xoxb-${rep('1', 11)}-${rep('2', 12)}-${rep('c', 24)}`,
    kept: 'xoxb-',
  },
  'slack-webhook': {
    text: `post to https://hooks.slack.com/services/T${rep('0', 8)}/B${rep('1', 8)}/${rep('x', 24)} now`,
    secret: `T${rep('0', 8)}/B${rep('1', 8)}/${rep('x', 24)}`,
    kept: '',
  },
  'anthropic-key': { text: `sk-ant-api03-${rep('k', 40)}`, secret: `sk-ant-api03-${rep('k', 40)}`, kept: 'sk-ant-' },
  'openai-key': { text: `OPENAI=sk-proj-${rep('Q', 40)}`, secret: `sk-proj-${rep('Q', 40)}`, kept: 'sk-' },
  'stripe-key': { text: `${'sk'}_live_${rep('s', 24)}`, secret: `sk_live_${rep('s', 24)}`, kept: 'sk_live_' },
  'google-api-key': { text: `AIza${rep('g', 35)}`, secret: `AIza${rep('g', 35)}`, kept: 'AIza' },
  'product-key': {
    text: `use sk_${rep('a', 16)}_${rep('b', 32)} please`,
    secret: `sk_${rep('a', 16)}_${rep('b', 32)}`,
    kept: 'sk_',
  },
  jwt: {
    text: `Authorization token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${rep('s', 43)}`,
    secret: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.${rep('s', 43)}`,
    kept: 'eyJ',
  },
  'bearer-token': { text: `Authorization: Bearer ${rep('t', 32)}`, secret: rep('t', 32), kept: '' },
  'url-password': { text: 'postgres://app:hunter2hunter2@db.internal:5432/x', secret: 'hunter2hunter2', kept: '' },
};

describe('secret patterns', () => {
  it('has a sample for every pattern', () => {
    expect(Object.keys(SAMPLES).sort()).toEqual(
      SECRET_PATTERNS.map((p) => p.kind)
        .filter((k) => k !== 'private-key')
        .sort(),
    );
  });

  it.each(Object.entries(SAMPLES))('%s: masked after its prefix, same length', (_kind, sample) => {
    const out = maskText(sample.text);
    expect(out).toHaveLength(sample.text.length);
    expect(out).not.toContain(sample.secret);
    const at = sample.text.indexOf(sample.secret);
    const masked = out.slice(at, at + sample.secret.length);
    expect(masked.startsWith(sample.kept)).toBe(true);
    expect(masked.slice(sample.kept.length)).toMatch(new RegExp(`^[${MASK}]+$`));
    // What surrounds the secret is untouched.
    expect(out.slice(0, at)).toBe(sample.text.slice(0, at));
    expect(out.slice(at + sample.secret.length)).toBe(sample.text.slice(at + sample.secret.length));
  });

  it('masks a private key block but keeps its armour lines and line breaks', () => {
    const body = `${rep('M', 64)}\n${rep('I', 64)}\n${rep('E', 20)}==`;
    const text = `key:\n-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----\nbye`;
    const out = maskText(text);
    expect(out).toHaveLength(text.length);
    expect(out).toContain('-----BEGIN RSA PRIVATE KEY-----');
    expect(out).toContain('-----END RSA PRIVATE KEY-----');
    expect(out).not.toMatch(/MMMM|IIII|EEEE/);
    expect(out.split('\n')).toHaveLength(text.split('\n').length);
  });

  it('keeps JSON text valid JSON, also a private key inside a JSON string', () => {
    const value = {
      note: `line one\nuser@example.com\tand ${'\u00e9'}`,
      pem: `-----BEGIN PRIVATE KEY-----\n${rep('A', 40)}\n${rep('n', 40)}\n-----END PRIVATE KEY-----`,
      token: `ghp_${rep('z', 36)}`,
      nested: ['postgres://u:pw12345678@h/db', 'ok'],
    };
    const json = JSON.stringify(value);
    const out = maskText(json, { contacts: true });
    expect(out).toHaveLength(json.length);
    const parsed = JSON.parse(out) as typeof value;
    expect(parsed.token).toBe(`ghp_${rep(MASK, 36)}`);
    expect(parsed.pem).not.toContain('AAAA');
    expect(parsed.pem.split('\n')).toHaveLength(4);
    expect(parsed.note).not.toContain('user@example.com');
    expect(parsed.nested[0]).toBe(`postgres://u:${rep(MASK, 10)}@h/db`);
    // Escapes written with \u stay whole.
    const escaped = `{"a":"\\u0041KIA${rep('Q', 16)}"}`;
    expect(() => JSON.parse(maskText(escaped))).not.toThrow();
  });

  it('leaves look-alikes alone', () => {
    const harmless = [
      'The task-list has 12 items; see sk-learn docs.',
      'Commit 4f3c2a1b9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a touched AKIA.md',
      'ghp_short is not a token, nor is xoxb-123',
      'https://example.com/path?user=a@b and http://host:8080/x',
      'Use Bearer auth (Bearer tokens are short-lived).',
      'sk_test is a prefix; sk_abc_def is too short',
      'issue #1234, version 1.2.3, 2026-12-02 10:30, $1,234,567.89',
      'eyJ alone, or eyJhbGci.short.x',
      'AIza is a prefix',
    ];
    for (const text of harmless) expect(maskText(text), text).toBe(text);
  });

  it('leaves e-mail addresses and phone numbers alone unless asked', () => {
    const text = 'Write to ada@example.org or call +44 20 7946 0958.';
    expect(maskText(text)).toBe(text);
    expect(maskText(text, { contacts: true })).toBe(
      `Write to ${MASK.repeat(3)}@${MASK.repeat(7)}.${MASK.repeat(3)} or call +${MASK.repeat(2)} ${MASK.repeat(2)} ${MASK.repeat(4)} ${MASK.repeat(4)}.`,
    );
  });
});

describe('contact patterns', () => {
  it('has the two kinds', () => {
    expect(CONTACT_PATTERNS.map((p) => p.kind)).toEqual(['email', 'phone']);
  });

  it.each([
    ['(555) 123-4567', true],
    ['555-123-4567', true],
    ['555.123.4567', true],
    ['+1 555 123 4567', true],
    ['+4915112345678', true],
    ['030 1234 5678', true],
    ['2026-12-02', false],
    ['02.12.2026', false],
    ['10.0.0.12', false],
    ['1.2.3.4', false],
    ['12345678901', false],
    ['1,234,567', false],
    ['v1.22.1', false],
    ['12:30:45', false],
    ['12 34', false],
  ])('%s is a phone number: %s', (text, phone) => {
    const out = maskText(`call ${text} today`, { contacts: true });
    expect(out).toHaveLength(`call ${text} today`.length);
    if (phone) expect(out).not.toMatch(/\d/);
    else expect(out).toBe(`call ${text} today`);
  });

  it.each([
    ['first.last+tag@mail.example.co.uk', true],
    ['a@b.io', true],
    ['not an @ address', false],
    ['user@localhost', false],
    ['@handle', false],
  ])('%s is an e-mail address: %s', (text, email) => {
    const out = maskText(`to ${text}.`, { contacts: true });
    if (email) {
      expect(out).not.toContain(text);
      expect(out).toContain('@');
    } else expect(out).toBe(`to ${text}.`);
  });
});

describe('maskDeep', () => {
  it('masks every string of a value and keeps the value untouched', () => {
    const value = { a: [`ghp_${rep('y', 36)}`, 3, null], b: { c: 'plain' }, d: true };
    const out = maskDeep(value);
    expect(out.a[0]).toBe(`ghp_${rep(MASK, 36)}`);
    expect(out.b).toBe(value.b);
    expect(value.a[0]).toBe(`ghp_${rep('y', 36)}`);
  });

  it('returns the same object when nothing was masked', () => {
    const value = { a: ['x', { b: 'y' }] };
    expect(maskDeep(value)).toBe(value);
  });
});
